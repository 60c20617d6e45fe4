"""Running a suite: agent targets, the evaluation engine and result delivery."""

import typing as _typing

from .. import _lazy

if _typing.TYPE_CHECKING:
    from ._agent_source import check_agent_flags as check_agent_flags
    from ._aliases import aexecute as aexecute
    from ._aliases import arun_cases as arun_cases
    from ._aliases import execute as execute
    from ._aliases import run_cases as run_cases
    from ._api import RunReport as RunReport
    from ._api import RunStart as RunStart
    from ._api import StoreLike as StoreLike
    from ._api import arun as arun
    from ._api import run as run
    from ._batched import BatchSettings as BatchSettings
    from ._engine import Evaluator as Evaluator
    from ._engine import OnResult as OnResult
    from ._engine import close_target as close_target
    from ._engine import evaluate_case as evaluate_case
    from ._engine import judge_checks as judge_checks
    from ._engine import ran_case as ran_case
    from ._engine import with_judge as with_judge
    from ._options import JudgeSetup as JudgeSetup
    from ._options import RunOptions as RunOptions
    from ._options import Thresholds as Thresholds
    from ._prepare import RunPlan as RunPlan
    from ._prepare import graded_weights as graded_weights
    from ._prepare import make_cached_judge as make_cached_judge
    from ._prepare import parse_prices as parse_prices
    from ._prepare import plan_run as plan_run
    from ._session import RunOutcome as RunOutcome
    from ._session import RunStopped as RunStopped
    from ._session import run_config as run_config
    from ._stop import Interrupted as Interrupted
    from ._stop import StopToken as StopToken
    from ._stop import stop_on_signals as stop_on_signals
    from .targets import AgentFailure as AgentFailure
    from .targets import AgentRun as AgentRun
    from .targets import AgentTarget as AgentTarget
    from .targets import AgentUsage as AgentUsage
    from .targets import CallableTarget as CallableTarget
    from .targets import Target as Target
    from .targets import TargetRequest as TargetRequest
    from .targets import abandoned_threads as abandoned_threads
    from .targets import build_target as build_target
else:  # the names load when first read: see checkweigh._lazy
    __getattr__, __dir__ = _lazy.exports(__name__)
