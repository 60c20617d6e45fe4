"""Running a suite: agent targets, the evaluation engine and result delivery."""

from ._agent_source import check_agent_flags
from ._api import RunReport, arun, run
from ._engine import Evaluator, OnResult, arun_cases, judge_checks, run_cases, with_judge
from ._session import RunOutcome, RunStopped, aexecute, execute
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
    "RunReport",
    "RunStopped",
    "StopToken",
    "Target",
    "TargetRequest",
    "abandoned_threads",
    "aexecute",
    "arun",
    "arun_cases",
    "build_target",
    "check_agent_flags",
    "execute",
    "judge_checks",
    "run",
    "run_cases",
    "stop_on_signals",
    "with_judge",
]
