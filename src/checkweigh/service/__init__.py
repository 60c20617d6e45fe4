"""What the CLI and the server share: setting up and running a suite and writing its files,
comparing two stored runs and simulating a run's reruns, each built once (the comparison and
the stability report given as the same JSON to ``--json`` files and API answers)."""

import typing as _typing

from .. import _lazy

if _typing.TYPE_CHECKING:
    from ._compare import (
        COMPARE_DEFAULTS,
        ComparisonMemo,
        StoredComparison,
        compare_stored,
        compare_thresholds,
        comparison_json,
        judged,
        require_pairs,
        undecided,
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
        run_request,
    )
    from ._stability import parse_noise, stability_json, stability_of, stability_with_noise
else:  # the names load when first read: see checkweigh._lazy
    __getattr__, __dir__ = _lazy.exports(
        __name__,
        {
            "COMPARE_DEFAULTS": "._compare",
            "ComparisonMemo": "._compare",
            "StoredComparison": "._compare",
            "compare_stored": "._compare",
            "compare_thresholds": "._compare",
            "comparison_json": "._compare",
            "judged": "._compare",
            "undecided": "._compare",
            "require_pairs": "._compare",
            "Exports": "._exports",
            "check_writable": "._exports",
            "write_exports": "._exports",
            "JudgeRequest": "._run",
            "PreparedRun": "._run",
            "RunRequest": "._run",
            "Thresholds": "._run",
            "graded_weights": "._run",
            "make_cached_judge": "._run",
            "parse_prices": "._run",
            "prepare_run": "._run",
            "run_prepared": "._run",
            "run_request": "._run",
            "parse_noise": "._stability",
            "stability_json": "._stability",
            "stability_of": "._stability",
            "stability_with_noise": "._stability",
        },
    )

__all__ = [
    "COMPARE_DEFAULTS",
    "ComparisonMemo",
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
    "run_request",
    "stability_json",
    "stability_of",
    "stability_with_noise",
    "undecided",
    "write_exports",
]
