"""Running a suite: agent targets, the evaluation engine and result delivery."""

from ._engine import Evaluator, OnResult, judge_checks, run_cases, with_judge
from ._session import RunOutcome, RunStopped, execute
from ._stop import Interrupted, StopToken, stop_on_signals
from ._target import AgentFailure, AgentRun, AgentTarget, abandoned_threads

__all__ = [
    "AgentFailure",
    "AgentRun",
    "AgentTarget",
    "Evaluator",
    "Interrupted",
    "OnResult",
    "RunOutcome",
    "RunStopped",
    "StopToken",
    "abandoned_threads",
    "execute",
    "judge_checks",
    "run_cases",
    "stop_on_signals",
    "with_judge",
]
