"""Judge alignment: how often a judge's verdicts agree with human yes/no labels.

Pure: labels and stored results go in, figures come out. "Yes" is the positive answer: a
passed verdict is the judge saying yes, a failed one saying no. Errored and not-applicable
verdicts, and labels with no verdict to compare, are counted apart and never read as "no".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import NamedTuple

from pydantic import BaseModel, Field

from ._agreement import AlignmentFigures, Answer, NotCompared, answer
from ._agreement import Confusion as Confusion  # the calibration modules import it from here
from ._grades import (
    CheckKind,
    CheckRole,
    GradeAgreement,
    KindAlignment,
    KindComparison,
    compare_kinds,
    grade_agreement,
)
from ._result import CaseResult
from ._verdict import Verdict, VerdictState


class HumanLabel(NamedTuple):
    """A person's yes/no answer to one check on one case (and, for a graded metric, their
    grade)."""

    case_id: str
    check: str
    label: bool
    """True for yes."""
    repeat: int | None = None
    """The execution it labels (from 0); None labels every repeat of the case."""
    note: str = ""
    """The labeller's comment, shown next to a disagreement."""
    grade: float | None = None
    """The person's grade of a graded metric, 0 to 5; None when not graded."""


class LabelPair(NamedTuple):
    """A label and what the run holds for it: a verdict, or why there is none."""

    label: HumanLabel
    repeat: int | None
    """The execution the verdict comes from; None when no execution matched."""
    verdict: Verdict | NotCompared


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
    judge_grade: float | None = None
    """For a graded metric: the judge's grade, 0 to 5."""
    human_grade: float | None = None
    """For a graded metric: the human's grade, when given."""


class CheckAlignment(AlignmentFigures):
    """Agreement on one check, with the executions where they disagreed."""

    check: str
    """The check's name."""
    disagreements: list[Disagreement] = Field(default_factory=list)
    """In run order."""
    kind: CheckKind | None = None
    """What answered its verdicts (None when the run does not say)."""
    grades: GradeAgreement | None = None
    """For a graded metric: its grades against the human grades."""


class AlignmentReport(BaseModel):
    """Agreement of a run's verdicts with human labels, per check and over all checks."""

    pairs: int
    """Label-execution pairs considered (a label without a repeat counts once per repeat)."""
    checks: list[CheckAlignment]
    """Per check, by name."""
    overall: AlignmentFigures
    """All checks pooled: every compared pair counts once."""
    kinds: list[KindAlignment] = Field(default_factory=list)
    """Pooled per kind of check (yes/no judge, graded, other), for the kinds labelled."""
    comparison: KindComparison | None = None
    """Yes/no judge checks against graded metrics, when both were compared with labels."""


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
        if key in entries and _answers(entries[key]) != _answers(label):
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


def _answers(label: HumanLabel) -> tuple[bool, float | None]:
    return label.label, label.grade


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


def align(
    pairs: Iterable[LabelPair], roles: Mapping[str, CheckRole] | None = None
) -> AlignmentReport:
    """Agreement figures per check, pooled per kind and over all checks.

    ``roles`` (from the run's configuration) says what answered each check: with it, a graded
    metric also gets its grades against the human grades, and the yes/no judge checks are
    compared with the graded metrics when both were labelled.
    """
    roles = roles or {}
    confusions: dict[str, Confusion] = {}
    skipped: dict[str, Counter[NotCompared]] = {}
    disagreements: dict[str, list[Disagreement]] = {}
    grades: dict[str, list[tuple[float, float]]] = {}
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
        metric = check in roles and roles[check].pass_threshold is not None
        judge_grade = verdict.measures.get("score") if metric else None
        if judge_grade is not None and label.grade is not None:
            grades.setdefault(check, []).append((judge_grade, label.grade))
        if judge != label.label and repeat is not None:
            disagreements.setdefault(check, []).append(
                Disagreement(
                    case_id=label.case_id,
                    repeat=repeat,
                    check=check,
                    human=answer(label.label),
                    judge=answer(judge),
                    reason=verdict.reason,
                    note=label.note,
                    judge_grade=judge_grade,
                    human_grade=label.grade,
                )
            )
    checks = []
    for name in sorted(confusions):
        role = roles.get(name)
        threshold = role.grade_threshold if role else None
        checks.append(
            CheckAlignment(
                check=name,
                disagreements=disagreements.get(name, []),
                kind=role.kind if role else None,
                grades=grade_agreement(grades.get(name, []), threshold)
                if threshold is not None
                else None,
                **dict(AlignmentFigures.of(confusions[name], dict(skipped[name]))),
            )
        )
    kinds = _by_kind(checks, confusions, skipped) if roles else []
    comparison = None
    pooled = {k.kind: k for k in kinds}
    binary, graded = pooled.get(CheckKind.BINARY), pooled.get(CheckKind.GRADED)
    if binary and graded and binary.figures.compared and graded.figures.compared:
        low_high_b, low_high_g, comparison = compare_kinds(
            binary.figures.confusion, graded.figures.confusion
        )
        for kind, interval in ((binary, low_high_b), (graded, low_high_g)):
            if interval is not None and kind.figures.kappa is not None:
                kind.kappa_low, kind.kappa_high = interval
    return AlignmentReport(
        pairs=total,
        checks=checks,
        overall=_pooled(confusions, skipped, list(confusions)),
        kinds=kinds,
        comparison=comparison,
    )


def _pooled(
    confusions: Mapping[str, Confusion],
    skipped: Mapping[str, Counter[NotCompared]],
    names: Iterable[str],
) -> AlignmentFigures:
    c, skips = Confusion(), Counter[NotCompared]()
    for name in names:
        one = confusions[name]
        c.true_yes += one.true_yes
        c.false_yes += one.false_yes
        c.false_no += one.false_no
        c.true_no += one.true_no
        skips.update(skipped[name])
    return AlignmentFigures.of(c, dict(skips))


def _by_kind(
    checks: list[CheckAlignment],
    confusions: Mapping[str, Confusion],
    skipped: Mapping[str, Counter[NotCompared]],
) -> list[KindAlignment]:
    out = []
    for kind in CheckKind:
        names = [c.check for c in checks if c.kind is kind]
        if names:
            out.append(
                KindAlignment(kind=kind, checks=names, figures=_pooled(confusions, skipped, names))
            )
    return out
