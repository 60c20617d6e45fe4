"""The entry points of earlier releases, kept for one release as thin deprecated aliases over
the one engine (:func:`checkweigh.arun` / :func:`checkweigh.run` with :class:`RunOptions`).
Each warns with a :class:`DeprecationWarning` naming its replacement."""

from __future__ import annotations

import asyncio
import signal
import warnings
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from ..core import Case, CaseResult, PassPolicy
from ..judges import JudgeModel, close_judge
from ..store import Store
from ..suites import Suite
from ._engine import Evaluator, OnResult, Sourced, close_target, run_local
from ._session import OnProgress, RunOutcome, drive, refuse_inside_loop
from ._stop import StopToken, ctrl_c_is_default, interrupt, stop_on_signals
from .executors import Executor
from .targets import Target


def _deprecated(old: str, new: str) -> None:
    warnings.warn(
        f"checkweigh.{old}() is deprecated and will be removed in the next release; use "
        f"checkweigh.{new}() with RunOptions",
        DeprecationWarning,
        stacklevel=3,
    )


def execute(
    suite: Suite,
    store: Store,
    *,
    cases: Iterable[Case] | None = None,
    repeat: int | None = None,
    concurrency: int | None = None,
    on_result: Callable[[CaseResult], None] | None = None,
    on_progress: OnProgress | None = None,
    judge: JudgeModel | None = None,
    judge_batch: bool = False,
    graded_weights: Mapping[str, float] | None = None,
    policy: PassPolicy | None = None,
    stop: StopToken | None = None,
    record_agent: Path | None = None,
    replay_agent: Path | None = None,
    executor: Executor | None = None,
) -> RunOutcome:
    """Deprecated: use :func:`checkweigh.run`. Runs ``suite`` into ``store`` in an event loop
    of its own and closes ``judge`` at the end, as it always did."""
    _deprecated("execute", "run")
    refuse_inside_loop("execute", "aexecute")

    async def go(token: StopToken | None) -> RunOutcome:
        try:
            return await drive(
                suite,
                store,
                cases=cases,
                repeat=repeat,
                concurrency=concurrency,
                on_result=on_result,
                on_progress=on_progress,
                judge=judge,
                judge_batch=judge_batch,
                graded_weights=graded_weights,
                policy=policy,
                stop=token,
                record_agent=record_agent,
                replay_agent=replay_agent,
                executor=executor,
            )
        finally:
            await close_judge(judge)  # its connections belong to this event loop

    if stop is None and ctrl_c_is_default():
        with stop_on_signals(StopToken(), interrupt, (signal.SIGINT,)) as token:
            return asyncio.run(go(token))
    return asyncio.run(go(stop))


async def aexecute(
    suite: Suite,
    store: Store,
    *,
    cases: Iterable[Case] | None = None,
    repeat: int | None = None,
    concurrency: int | None = None,
    on_result: Callable[[CaseResult], None] | None = None,
    on_progress: OnProgress | None = None,
    judge: JudgeModel | None = None,
    judge_batch: bool = False,
    graded_weights: Mapping[str, float] | None = None,
    policy: PassPolicy | None = None,
    stop: StopToken | None = None,
    record_agent: Path | None = None,
    replay_agent: Path | None = None,
    executor: Executor | None = None,
) -> RunOutcome:
    """Deprecated: use :func:`checkweigh.arun`. Runs ``suite`` into ``store`` in the running
    event loop; the caller owns ``judge``."""
    _deprecated("aexecute", "arun")
    return await drive(
        suite,
        store,
        cases=cases,
        repeat=repeat,
        concurrency=concurrency,
        on_result=on_result,
        on_progress=on_progress,
        judge=judge,
        judge_batch=judge_batch,
        graded_weights=graded_weights,
        policy=policy,
        stop=stop,
        record_agent=record_agent,
        replay_agent=replay_agent,
        executor=executor,
    )


def run_cases(
    evaluator: Evaluator,
    cases: Iterable[Case] | Iterable[Sourced],
    on_result: OnResult,
    *,
    target: Target | None = None,
    target_timeout_s: float | None = None,
    repeat: int = 1,
    concurrency: int = 8,
    judge: JudgeModel | None = None,
    stop: StopToken | None = None,
) -> None:
    """Deprecated: use :func:`checkweigh.run` with ``cases=``. Evaluates ``cases`` with
    ``evaluator`` in an event loop of its own, storing nothing; ``target`` and ``judge``
    are closed at the end."""
    _deprecated("run_cases", "run")
    if repeat < 1:
        raise ValueError("repeat must be >= 1")

    async def go() -> None:
        try:
            await run_local(
                evaluator,
                cases,
                on_result,
                target=target,
                target_timeout_s=target_timeout_s,
                repeat=repeat,
                concurrency=concurrency,
                stop=stop,
            )
        finally:
            if target is not None:
                await close_target(target)
            await close_judge(judge)

    asyncio.run(go())


async def arun_cases(
    evaluator: Evaluator,
    cases: Iterable[Case] | Iterable[Sourced],
    on_result: OnResult,
    *,
    target: Target | None = None,
    target_timeout_s: float | None = None,
    repeat: int = 1,
    concurrency: int = 8,
    stop: StopToken | None = None,
    on_batch: Callable[[], None] | None = None,
) -> None:
    """Deprecated: use :func:`checkweigh.arun` with ``cases=``. Evaluates ``cases`` with
    ``evaluator`` in the running event loop, storing nothing; the caller owns ``target``."""
    _deprecated("arun_cases", "arun")
    await run_local(
        evaluator,
        cases,
        on_result,
        target=target,
        target_timeout_s=target_timeout_s,
        repeat=repeat,
        concurrency=concurrency,
        stop=stop,
        on_batch=on_batch,
    )
