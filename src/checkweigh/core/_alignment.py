"""Judge alignment: how often a judge's verdicts agree with human yes/no labels.

Pure: labels and stored results go in, figures come out. "Yes" is the positive answer: a
passed verdict is the judge saying yes, a failed one saying no. Errored and not-applicable
verdicts, and labels with no verdict to compare, are counted apart and never read as "no".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from enum import StrEnum
from typing import Literal, NamedTuple

from pydantic import BaseModel, Field

from ._result import CaseResult
from ._stats import wilson_interval
from ._verdict import Verdict, VerdictState

Answer = Literal["yes", "no"]


class HumanLabel(NamedTuple):
    """A person's yes/no answer to one check on one case."""

    case_id: str
    check: str
    label: bool
    """True for yes."""
    repeat: int | None = None
    """The execution it labels (from 0); None labels every repeat of the case."""
    note: str = ""
    """The labeller's comment, shown next to a disagreement."""


class NotCompared(StrEnum):
    """Why a label could not be compared with a verdict."""

    JUDGE_ERRORED = "judge_errored"
    NOT_APPLICABLE = "not_applicable"
    AGENT_ERRORED = "agent_errored"
    CHECK_MISSING = "check_missing"
    REPEAT_MISSING = "repeat_missing"
    CASE_MISSING = "case_missing"
    STALE = "stale"
    """A stored label made under another criterion, or on evidence no execution here has."""
    REVIEWERS_SPLIT = "reviewers_split"
    """Reviewers labelled the execution yes and no as often."""


class LabelPair(NamedTuple):
    """A label and what the run holds for it: a verdict, or why there is none."""

    label: HumanLabel
    repeat: int | None
    """The execution the verdict comes from; None when no execution matched."""
    verdict: Verdict | NotCompared


class KappaBand(StrEnum):
    """Landis and Koch's (1977) words for a kappa value."""

    POOR = "poor"
    SLIGHT = "slight"
    FAIR = "fair"
    MODERATE = "moderate"
    SUBSTANTIAL = "substantial"
    ALMOST_PERFECT = "almost perfect"


def kappa_band(kappa: float) -> KappaBand:
    """The Landis-Koch band: < 0 poor, up to .20 slight, .40 fair, .60 moderate, .80
    substantial, above almost perfect."""
    if kappa < 0:
        return KappaBand.POOR
    for upper, band in (
        (0.20, KappaBand.SLIGHT),
        (0.40, KappaBand.FAIR),
        (0.60, KappaBand.MODERATE),
        (0.80, KappaBand.SUBSTANTIAL),
    ):
        if kappa <= upper:
            return band
    return KappaBand.ALMOST_PERFECT


class Confusion(BaseModel):
    """Judge answers against human labels, with the human label taken as the truth."""

    true_yes: int = 0
    """Both said yes."""
    false_yes: int = 0
    """The judge said yes, the human no."""
    false_no: int = 0
    """The judge said no, the human yes."""
    true_no: int = 0
    """Both said no."""

    @property
    def n(self) -> int:
        """Pairs compared."""
        return self.true_yes + self.false_yes + self.false_no + self.true_no

    def add(self, human: bool, judge: bool) -> None:
        """Count one compared pair."""
        if human and judge:
            self.true_yes += 1
        elif judge:
            self.false_yes += 1
        elif human:
            self.false_no += 1
        else:
            self.true_no += 1

    def kappa(self) -> float | None:
        """Cohen's kappa, (p_o - p_e) / (1 - p_e); None when nothing was compared or p_e is 1
        (both gave one and the same answer throughout, so chance explains all agreement)."""
        n = self.n
        judge_yes, human_yes = self.true_yes + self.false_yes, self.true_yes + self.false_no
        # in whole numbers, scaled by n^2, so p_e == 1 is detected exactly
        expected = judge_yes * human_yes + (n - judge_yes) * (n - human_yes)
        if n == 0 or expected == n * n:
            return None
        return (n * (self.true_yes + self.true_no) - expected) / (n * n - expected)


class AlignmentFigures(BaseModel):
    """Agreement figures over a set of compared pairs."""

    compared: int
    """Labels (one per execution) compared with a passed or failed verdict."""
    confusion: Confusion
    """The four counts behind every figure."""
    accuracy: float | None
    """Share of compared pairs where the judge agreed; None when nothing was compared."""
    accuracy_low: float | None
    """Lower end of the Wilson 95% interval of the accuracy."""
    accuracy_high: float | None
    """Upper end of the Wilson 95% interval of the accuracy."""
    kappa: float | None
    """Cohen's kappa: agreement beyond chance, from -1 to 1; None when undefined."""
    kappa_band: KappaBand | None
    """The Landis-Koch word for the kappa."""
    kappa_note: str | None
    """Why the kappa is undefined, or is 0 whatever the other side said (one side gave one
    answer only)."""
    precision: float | None
    """Of the judge's yes answers, the share the human also said yes to; None without any."""
    recall: float | None
    """Of the human's yes labels, the share the judge also said yes to; None without any."""
    not_compared: dict[NotCompared, int] = Field(default_factory=dict)
    """Labels left out, by reason."""

    @classmethod
    def of(cls, confusion: Confusion, not_compared: dict[NotCompared, int]) -> AlignmentFigures:
        """The figures of ``confusion``."""
        c = confusion
        n = c.n
        agree = c.true_yes + c.true_no
        accuracy, low, high = None, None, None
        if n:
            accuracy = agree / n
            # the interval's float arithmetic can land a hair inside an accuracy of 0 or 1
            low, high = wilson_interval(agree, n)
            low, high = min(low, accuracy), max(high, accuracy)
        kappa = c.kappa()
        judged_yes, labelled_yes = c.true_yes + c.false_yes, c.true_yes + c.false_no
        note = None
        if n == 0:
            note = "nothing compared"
        elif kappa is None:
            answer = "yes" if c.true_yes else "no"
            note = f"undefined: the human and the judge both said {answer} every time"
        elif labelled_yes in (0, n):
            # p_e equals p_o whenever one side never varies: chance explains all agreement
            note = f"0 by construction: the human said {_answer(labelled_yes > 0)} every time"
        elif judged_yes in (0, n):
            note = f"0 by construction: the judge said {_answer(judged_yes > 0)} every time"
        return cls(
            compared=n,
            confusion=c,
            accuracy=accuracy,
            accuracy_low=low,
            accuracy_high=high,
            kappa=kappa,
            kappa_band=kappa_band(kappa) if kappa is not None else None,
            kappa_note=note,
            precision=c.true_yes / judged_yes if judged_yes else None,
            recall=c.true_yes / labelled_yes if labelled_yes else None,
            not_compared={r: not_compared[r] for r in NotCompared if not_compared.get(r)},
        )


class Disagreement(BaseModel):
    """An execution where the judge and the human answered differently."""

    case_id: str
    """The case."""
    repeat: int
    """Which execution of it."""
    check: str
    """The check."""
    human: Answer
    """The human's label."""
    judge: Answer
    """The judge's answer (its verdict: passed is yes)."""
    reason: str
    """The judge's reason."""
    note: str = ""
    """The labeller's comment."""


class CheckAlignment(AlignmentFigures):
    """Agreement on one check, with the executions where they disagreed."""

    check: str
    """The check's name."""
    disagreements: list[Disagreement] = Field(default_factory=list)
    """In run order."""


class AlignmentReport(BaseModel):
    """Agreement of a run's verdicts with human labels, per check and over all checks."""

    pairs: int
    """Label-execution pairs considered (a label without a repeat counts once per repeat)."""
    checks: list[CheckAlignment]
    """Per check, by name."""
    overall: AlignmentFigures
    """All checks pooled: every compared pair counts once."""


def pair_labels(labels: Iterable[HumanLabel], results: Iterable[CaseResult]) -> Iterator[LabelPair]:
    """Match each label with the verdicts of the executions it labels, in run order.

    A label without a repeat applies to every repeat of its case, unless a label for the same
    case and check names that repeat. Labels that match no execution come last, in their own
    order, as missing a case or a repeat.

    Raises:
        ValueError: two labels for the same case, check and repeat disagree.
    """
    by_case: dict[str, dict[tuple[str, int | None], HumanLabel]] = {}
    for label in labels:
        entries = by_case.setdefault(label.case_id, {})
        key = (label.check, label.repeat)
        if key in entries and entries[key].label != label.label:
            raise ValueError(f"conflicting labels for {label.case_id!r}, {key}")
        entries.setdefault(key, label)
    seen: set[str] = set()
    used: set[tuple[str, str, int | None]] = set()
    for result in results:
        labelled = by_case.get(result.case_id)
        if not labelled:
            continue
        seen.add(result.case_id)
        for (check, repeat), label in labelled.items():
            if repeat is None and (check, result.repeat) in labelled:
                continue  # a label for this very repeat overrides the case-wide one
            if repeat is not None and repeat != result.repeat:
                continue
            used.add((result.case_id, check, repeat))
            yield LabelPair(label, result.repeat, _verdict_of(result, check))
    for case_id, entries in by_case.items():
        for (check, repeat), label in entries.items():
            if (case_id, check, repeat) not in used:
                why = NotCompared.REPEAT_MISSING if case_id in seen else NotCompared.CASE_MISSING
                yield LabelPair(label, repeat, why)


def _verdict_of(result: CaseResult, check: str) -> Verdict | NotCompared:
    verdict = result.verdicts.get(check)
    if verdict is not None:
        return verdict
    if result.agent_error is not None:
        return NotCompared.AGENT_ERRORED
    return NotCompared.CHECK_MISSING


_SKIPPED = {
    VerdictState.ERRORED: NotCompared.JUDGE_ERRORED,
    VerdictState.NOT_APPLICABLE: NotCompared.NOT_APPLICABLE,
}


def align(pairs: Iterable[LabelPair]) -> AlignmentReport:
    """Agreement figures per check and pooled over all checks."""
    confusions: dict[str, Confusion] = {}
    skipped: dict[str, Counter[NotCompared]] = {}
    disagreements: dict[str, list[Disagreement]] = {}
    total = 0
    for label, repeat, verdict in pairs:
        total += 1
        check = label.check
        confusion = confusions.setdefault(check, Confusion())
        skips = skipped.setdefault(check, Counter())
        if isinstance(verdict, NotCompared):
            skips[verdict] += 1
            continue
        if verdict.state in _SKIPPED:
            skips[_SKIPPED[verdict.state]] += 1
            continue
        judge = verdict.state is VerdictState.PASSED
        confusion.add(label.label, judge)
        if judge != label.label and repeat is not None:
            disagreements.setdefault(check, []).append(
                Disagreement(
                    case_id=label.case_id,
                    repeat=repeat,
                    check=check,
                    human=_answer(label.label),
                    judge=_answer(judge),
                    reason=verdict.reason,
                    note=label.note,
                )
            )
    checks = []
    pooled, pooled_skips = Confusion(), Counter[NotCompared]()
    for name in sorted(confusions):
        c = confusions[name]
        pooled.true_yes += c.true_yes
        pooled.false_yes += c.false_yes
        pooled.false_no += c.false_no
        pooled.true_no += c.true_no
        pooled_skips.update(skipped[name])
        figures = AlignmentFigures.of(c, dict(skipped[name]))
        checks.append(
            CheckAlignment(check=name, disagreements=disagreements.get(name, []), **dict(figures))
        )
    return AlignmentReport(
        pairs=total, checks=checks, overall=AlignmentFigures.of(pooled, dict(pooled_skips))
    )


def _answer(value: bool) -> Answer:
    return "yes" if value else "no"
