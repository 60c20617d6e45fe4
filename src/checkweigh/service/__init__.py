"""What the CLI and the server share: setting up and running a suite and writing its files,
comparing two stored runs and simulating a run's reruns, each built once (the comparison and
the stability report given as the same JSON to ``--json`` files and API answers)."""

import typing as _typing

from .. import _lazy

if _typing.TYPE_CHECKING:
    from ._compare import COMPARE_DEFAULTS as COMPARE_DEFAULTS
    from ._compare import ComparisonMemo as ComparisonMemo
    from ._compare import StoredComparison as StoredComparison
    from ._compare import compare_results as compare_results
    from ._compare import compare_rows as compare_rows
    from ._compare import compare_stored as compare_stored
    from ._compare import compare_thresholds as compare_thresholds
    from ._compare import comparison_json as comparison_json
    from ._compare import is_window as is_window
    from ._compare import judged as judged
    from ._compare import require_pairs as require_pairs
    from ._compare import undecided as undecided
    from ._exports import Exports as Exports
    from ._exports import check_writable as check_writable
    from ._exports import parse_outputs as parse_outputs
    from ._exports import write_exports as write_exports
    from ._outputs import OUTPUTS as OUTPUTS
    from ._outputs import Output as Output
    from ._outputs import StoredReport as StoredReport
    from ._outputs import get_output as get_output
    from ._rejudge import REJUDGE_TAG as REJUDGE_TAG
    from ._rejudge import Rejudged as Rejudged
    from ._rejudge import rejudge as rejudge
    from ._rejudge import stored_split as stored_split
    from ._run import JudgeRequest as JudgeRequest
    from ._run import PreparedRun as PreparedRun
    from ._run import RunRequest as RunRequest
    from ._run import Thresholds as Thresholds
    from ._run import graded_weights as graded_weights
    from ._run import make_cached_judge as make_cached_judge
    from ._run import parse_prices as parse_prices
    from ._run import prepare_run as prepare_run
    from ._run import run_prepared as run_prepared
    from ._run import run_request as run_request
    from ._stability import parse_noise as parse_noise
    from ._stability import stability_json as stability_json
    from ._stability import stability_of as stability_of
    from ._stability import stability_with_noise as stability_with_noise
else:  # the names load when first read: see checkweigh._lazy
    __getattr__, __dir__ = _lazy.exports(__name__)
