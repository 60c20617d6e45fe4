"""Agreement of two raters' yes/no answers: the confusion counts, Cohen's kappa and the figures
shown for a set of compared pairs. Pure.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, Field

from ._stats import wilson_interval

Answer = Literal["yes", "no"]


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
            said = "yes" if c.true_yes else "no"
            note = f"undefined: the human and the judge both said {said} every time"
        elif labelled_yes in (0, n):
            # p_e equals p_o whenever one side never varies: chance explains all agreement
            note = f"0 by construction: the human said {answer(labelled_yes > 0)} every time"
        elif judged_yes in (0, n):
            note = f"0 by construction: the judge said {answer(judged_yes > 0)} every time"
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


def answer(value: bool) -> Answer:
    return "yes" if value else "no"
