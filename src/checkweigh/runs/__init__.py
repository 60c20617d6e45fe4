"""Running a suite: agent targets, the evaluation engine and result delivery."""

import typing as _typing

from .. import _lazy

if _typing.TYPE_CHECKING:
    from ._agent_source import check_agent_flags
    from ._aliases import aexecute, arun_cases, execute, run_cases
    from ._api import RunReport, RunStart, StoreLike, arun, run
    from ._engine import Evaluator, OnResult, judge_checks, with_judge
    from ._options import JudgeSetup, RunOptions, Thresholds
    from ._prepare import RunPlan, graded_weights, make_cached_judge, parse_prices, plan_run
    from ._session import RunOutcome, RunStopped
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
            "aexecute": "._aliases",
            "arun_cases": "._aliases",
            "execute": "._aliases",
            "run_cases": "._aliases",
            "RunReport": "._api",
            "RunStart": "._api",
            "StoreLike": "._api",
            "arun": "._api",
            "run": "._api",
            "Evaluator": "._engine",
            "OnResult": "._engine",
            "judge_checks": "._engine",
            "with_judge": "._engine",
            "JudgeSetup": "._options",
            "RunOptions": "._options",
            "Thresholds": "._options",
            "RunPlan": "._prepare",
            "graded_weights": "._prepare",
            "make_cached_judge": "._prepare",
            "parse_prices": "._prepare",
            "plan_run": "._prepare",
            "RunOutcome": "._session",
            "RunStopped": "._session",
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
    "JudgeSetup",
    "OnResult",
    "RunOptions",
    "RunOutcome",
    "RunPlan",
    "RunReport",
    "RunStart",
    "RunStopped",
    "StopToken",
    "StoreLike",
    "Target",
    "TargetRequest",
    "Thresholds",
    "abandoned_threads",
    "aexecute",
    "arun",
    "arun_cases",
    "build_target",
    "check_agent_flags",
    "execute",
    "graded_weights",
    "judge_checks",
    "make_cached_judge",
    "parse_prices",
    "plan_run",
    "run",
    "run_cases",
    "stop_on_signals",
    "with_judge",
]
