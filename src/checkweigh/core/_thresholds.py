"""What counts as a regression between two runs, in a module of its own: the CLI declares the
``compare`` flags' defaults with it without importing the comparison (and the models it reads)."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CompareThresholds:
    """What counts as a regression (defaults from the seed), and the significance level."""

    max_pass_rate_drop: float = 0.0
    """Percentage points of case pass rate the candidate may lose."""
    max_avg_score_drop: float = 5.0
    """Points (0-100) of mean case score the candidate may lose."""
    max_latency_increase_pct: float = 20.0
    """Percent the mean latency may grow."""
    min_latency_increase_ms: float = 50.0
    """An increase below this many milliseconds is jitter, whatever its percentage (a fast
    local agent can double its 3 ms latency between two runs)."""
    case_score_delta: float = 5.0
    """Points a case's score must move, without a pass/fail flip, to count as changed."""
    alpha: float = 0.05
    """Significance level of the paired tests."""
    resamples: int = 4000
    """Bootstrap resamples."""
    seed: int = 0
    """Seed of the bootstrap, so a comparison is reproducible."""

    def __post_init__(self) -> None:
        for name in (
            "max_pass_rate_drop",
            "max_avg_score_drop",
            "max_latency_increase_pct",
            "min_latency_increase_ms",
        ):
            value = getattr(self, name)
            if not value >= 0 or math.isinf(value):
                raise ValueError(f"{name} must be a number >= 0, got {value!r}")
        if not self.case_score_delta >= 0:
            raise ValueError(f"case_score_delta must be >= 0, got {self.case_score_delta!r}")
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must be between 0 and 1, got {self.alpha!r}")
