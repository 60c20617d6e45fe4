"""Running a suite: agent targets, the evaluation engine and result delivery."""

from ._engine import Evaluator, OnResult, bind_judge, judge_checks, run_cases
from ._session import RunOutcome, RunStopped, execute
from ._target import AgentFailure, AgentRun, AgentTarget

__all__ = [
    "AgentFailure",
    "AgentRun",
    "AgentTarget",
    "Evaluator",
    "OnResult",
    "RunOutcome",
    "RunStopped",
    "bind_judge",
    "execute",
    "judge_checks",
    "run_cases",
]
