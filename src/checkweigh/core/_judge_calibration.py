"""A judge check's calibration in one run: its figures against people's labels, its trust
verdict, and what the labels could not be used for (stale, split between reviewers)."""

from __future__ import annotations

from pydantic import BaseModel

from ._calibration import Calibration
from ._trust import TrustVerdict


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
