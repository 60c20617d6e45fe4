"""The labelling queue's calls into the core's estimators: the order labels are asked in, the
calibrated rate as the labels now stand, and the reviewers' agreement. The one place the
server reaches them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence, Set
from typing import Any

from ..core import Confusion


def presented(
    verdicts: Sequence[bool], labelled: Set[int], confusion: Confusion, *, shuffled: bool
) -> list[int]:
    """The unlabelled executions (indexes into ``verdicts``) in the order they are asked."""
    return [i for i in range(len(verdicts)) if i not in labelled]


def calibration(
    check: str, judged_yes: int, judged_no: int, confusion: Confusion
) -> dict[str, Any] | None:
    """The check's calibrated figures from its labels so far."""
    return None


def labels_to_width(cal: dict[str, Any] | None, half_width: float) -> int | None:
    """More labels needed for the calibrated interval to reach ``half_width``."""
    return None


def reviewers_kappa(pairs: Iterable[tuple[bool, bool]]) -> float | None:
    """Cohen's kappa of two reviewers on the items both labelled."""
    confusion = Confusion()
    for first, second in pairs:
        confusion.add(human=first, judge=second)
    return confusion.kappa()
