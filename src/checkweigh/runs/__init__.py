"""Running a suite: agent targets, the evaluation engine and result delivery."""

import typing as _typing

from .. import _lazy

if _typing.TYPE_CHECKING:
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
else:  # the names load when first read: see checkweigh._lazy
    __getattr__, __dir__ = _lazy.exports(
        __name__,
        {
            "check_agent_flags": "._agent_source",
            "RunReport": "._api",
            "arun": "._api",
            "run": "._api",
            "Evaluator": "._engine",
            "OnResult": "._engine",
            "arun_cases": "._engine",
            "judge_checks": "._engine",
            "run_cases": "._engine",
            "with_judge": "._engine",
            "RunOutcome": "._session",
            "RunStopped": "._session",
            "aexecute": "._session",
            "execute": "._session",
            "Interrupted": "._stop",
            "StopToken": "._stop",
            "stop_on_signals": "._stop",
            "AgentFailure": ".targets",
            "AgentRun": ".targets",
            "AgentTarget": ".targets",
            "AgentUsage": ".targets",
            "CallableTarget": ".targets",
            "Target": ".targets",
            "TargetRequest": ".targets",
            "abandoned_threads": ".targets",
            "build_target": ".targets",
        },
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
