"""What the CLI and the server share: setting up and running a suite and writing its files,
comparing two stored runs and simulating a run's reruns, each built once (the comparison and
the stability report given as the same JSON to ``--json`` files and API answers)."""

from ._compare import (
    COMPARE_DEFAULTS,
    StoredComparison,
    compare_stored,
    compare_thresholds,
    comparison_json,
    judged,
    require_pairs,
)
from ._exports import Exports, check_writable, write_exports
from ._run import (
    JudgeRequest,
    PreparedRun,
    RunRequest,
    Thresholds,
    graded_weights,
    make_cached_judge,
    parse_prices,
    prepare_run,
    run_prepared,
)
from ._stability import parse_noise, stability_json, stability_of, stability_with_noise

__all__ = [
    "COMPARE_DEFAULTS",
    "Exports",
    "JudgeRequest",
    "PreparedRun",
    "RunRequest",
    "StoredComparison",
    "Thresholds",
    "check_writable",
    "compare_stored",
    "compare_thresholds",
    "comparison_json",
    "graded_weights",
    "judged",
    "make_cached_judge",
    "parse_noise",
    "parse_prices",
    "prepare_run",
    "require_pairs",
    "run_prepared",
    "stability_json",
    "stability_of",
    "stability_with_noise",
    "write_exports",
]
