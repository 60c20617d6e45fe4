"""What the CLI and the server share: comparing two stored runs and simulating a run's
reruns, each built once and given as the same JSON to ``--json`` files and API answers."""

from ._compare import (
    COMPARE_DEFAULTS,
    StoredComparison,
    compare_stored,
    compare_thresholds,
    comparison_json,
    judged,
    require_pairs,
)
from ._stability import parse_noise, stability_json, stability_of

__all__ = [
    "COMPARE_DEFAULTS",
    "StoredComparison",
    "compare_stored",
    "compare_thresholds",
    "comparison_json",
    "judged",
    "require_pairs",
    "parse_noise",
    "stability_json",
    "stability_of",
]
