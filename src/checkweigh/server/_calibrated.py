"""The labelling queue's calls into the estimators: the order labels are asked in, the check's
calibration and trust verdict as the labels now stand, and the labels still needed. The one
place the server reaches them."""

from __future__ import annotations

from collections.abc import Sequence, Set

from ..core import Calibration, CheckCalibration, Confusion, labels_for_width, queue_order
from ..core import random_order as shuffled_order
from ..store import CheckLabels, RunInfo, calibration_of, trust_bars


def presented(
    verdicts: Sequence[bool], labelled: Set[int], confusion: Confusion, *, shuffled: bool
) -> list[int]:
    """The unlabelled executions (indexes into ``verdicts``, True where the judge said yes)
    in the order they are asked: where a label narrows the calibrated rate most, or
    ``shuffled``."""
    if shuffled:
        return shuffled_order(verdicts, labelled)
    return queue_order(verdicts, labelled, confusion)


def measured(info: RunInfo, labels: CheckLabels) -> CheckCalibration:
    """The check's figures, its trust verdict (when its suite sets ``trust:``) and the
    reviewers' kappa, from the labels that apply to the run's executions."""
    bar = trust_bars(info.config).get(labels.check)
    return calibration_of(labels, bar, info.config.get("judge"))


def labels_to_width(figures: Calibration, half_width: float) -> int | None:
    """More labels needed for the calibrated interval's half-width to reach ``half_width``."""
    return labels_for_width(figures, half_width)
