"""Running a suite: agent targets, the evaluation engine and result delivery."""

from ._agent_source import check_agent_flags
from ._engine import Evaluator, OnResult, judge_checks, run_cases, with_judge
from ._session import RunOutcome, RunStopped, execute
from ._stop import Interrupted, StopToken, stop_on_signals
from .targets import (
    AgentFailure,
    AgentRun,
    AgentTarget,
    AgentUsage,
    CallableTarget,
    Target,
    TargetRequest,
    abandoned_threads,
    build_target,
)

__all__ = [
    "AgentFailure",
    "AgentRun",
    "AgentTarget",
    "AgentUsage",
    "CallableTarget",
    "Evaluator",
    "Interrupted",
    "OnResult",
    "RunOutcome",
    "RunStopped",
    "StopToken",
    "Target",
    "TargetRequest",
    "abandoned_threads",
    "build_target",
    "check_agent_flags",
    "execute",
    "judge_checks",
    "run_cases",
    "stop_on_signals",
    "with_judge",
]
