"""A judge check's calibration in one run: its figures against people's labels, its trust
verdict, and what the labels could not be used for (stale, split between reviewers)."""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import TYPE_CHECKING

from pydantic import BaseModel

from ._calibration import Calibration
from ._trust import TrustVerdict

if TYPE_CHECKING:
    from ._summary import RubricSummary


class CheckCalibration(BaseModel):
    """One judge check of a run, measured against the labels that apply to its executions."""

    check: str
    """The check's name."""
    figures: Calibration
    """The raw and calibrated pass rates, the judge's sensitivity and specificity, the
    confusion counts behind them."""
    trust: TrustVerdict | None = None
    """The check's agreement bar measured, when its suite entry sets ``trust:``."""
    stale_criterion: int = 0
    """Labels on these cases made under another criterion (question or version): not used."""
    stale_evidence: int = 0
    """Labels on these cases made on evidence no execution of this run has: not used."""
    reviewers_split: int = 0
    """Labelled executions whose reviewers answered yes and no as often: not used."""
    reviewers: int = 0
    """People who labelled this run's executions of the check."""
    reviewer_kappa: float | None = None
    """Cohen's kappa between two reviewers over the executions both labelled; None without
    such executions or when undefined."""
    other_judges: list[str] = []
    """Judges other than this run's whose verdicts the labellers were shown: the labels still
    hold (they judge the evidence), and the figures measure this run's judge against them."""

    @property
    def stale(self) -> int:
        """Labels on these cases left unused because the criterion or the evidence changed."""
        return self.stale_criterion + self.stale_evidence

    def notes(self) -> list[str]:
        """What a reader must know about the figures, in words."""
        out = []
        if self.stale_criterion:
            out.append(
                f"{self.check}: {self.stale_criterion} label(s) were made under another "
                "criterion (its question or version changed) and are not used"
            )
        if self.stale_evidence:
            out.append(
                f"{self.check}: {self.stale_evidence} label(s) were made on evidence no "
                "execution of this run has (the agent did something else) and are not used"
            )
        if self.reviewers_split:
            out.append(
                f"{self.check}: {self.reviewers_split} execution(s) were labelled yes and no "
                "as often by the reviewers and are not used"
            )
        if self.other_judges:
            out.append(
                f"{self.check}: labels were made beside the verdicts of "
                f"{', '.join(self.other_judges)}; the figures measure this run's judge"
            )
        return out


class CalibratedRate(BaseModel):
    """A judge check's raw and calibrated pass rates in one run."""

    raw: float | None
    """The judge's pass rate."""
    calibrated: float | None
    """Corrected by the labels."""
    low: float | None
    """The calibrated rate's 95% interval, lower end."""
    high: float | None
    """Its upper end."""
    labels: int
    """Labels behind it."""

    @classmethod
    def of(cls, c: CheckCalibration) -> CalibratedRate:
        """The rates of ``c``."""
        f = c.figures
        return cls(
            raw=f.raw_pass_rate,
            calibrated=f.calibrated_pass_rate,
            low=f.calibrated_low,
            high=f.calibrated_high,
            labels=f.labels,
        )


class CalibratedChange(BaseModel):
    """A judge check's rates in two runs, for ``compare``."""

    check: str
    """The check."""
    base: CalibratedRate | None
    """In the base run; None when it has no labels there."""
    candidate: CalibratedRate | None
    """In the candidate run; None when it has no labels there."""


def calibrated_changes(
    base: list[CheckCalibration], candidate: list[CheckCalibration]
) -> list[CalibratedChange]:
    """The judge checks calibrated in either run, base order first."""
    before = {c.check: c for c in base if c.figures.labels}
    after = {c.check: c for c in candidate if c.figures.labels}
    names = list(before) + [n for n in after if n not in before]
    return [
        CalibratedChange(
            check=n,
            base=CalibratedRate.of(before[n]) if n in before else None,
            candidate=CalibratedRate.of(after[n]) if n in after else None,
        )
        for n in names
    ]


def calibrated_tcr(
    rubric: RubricSummary, required: Collection[str], calibration: list[CheckCalibration]
) -> tuple[float | None, str | None]:
    """A rubric's TCR with its judge checks' pass rates replaced by their calibrated ones,
    where the TCR is linear in the pass rates; else None and why not.

    The TCR is the mean case score, and a case's score the sum of the normalized weights of
    its passed checks. When every check of the rubric decided on every scored execution and
    none is required (a required check's failure zeroes the score), the TCR is exactly the
    weighted sum of the checks' pass rates, so swapping in the calibrated rates corrects it.
    No interval is given: the checks' errors are not independent, so their intervals do not
    add.
    """
    found = {c.check: c for c in calibration if c.figures.labels}
    judged = [s for s in rubric.checks if s.check in found]
    if not judged or rubric.tcr is None:
        return None, None
    why = None
    if any(s.check in required for s in rubric.checks):
        why = "a required check zeroes a case's score when it fails"
    elif any(
        s.not_applicable or s.errored or s.passed + s.failed != rubric.scored for s in rubric.checks
    ):
        why = "some check did not decide on every scored execution (not applicable or errored)"
    else:
        linear = math.fsum(s.weight * (s.pass_rate or 0.0) for s in rubric.checks)
        if not math.isclose(linear, rubric.tcr, abs_tol=1e-9):
            why = "its scores are not the weighted sum of its checks' verdicts"
    if why is not None:
        return None, f"the TCR is not corrected: {why}, so it is not linear in the pass rates"
    shift = 0.0
    for s in judged:
        f = found[s.check].figures
        if f.calibrated_pass_rate is None or f.raw_pass_rate is None:
            return None, None
        shift += s.weight * (f.calibrated_pass_rate - f.raw_pass_rate)
    return min(1.0, max(0.0, rubric.tcr + shift)), None
