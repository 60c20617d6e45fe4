"""``checkweigh.run`` / ``checkweigh.arun``: a suite run in a few words, from a script, a
notebook or a server's event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ..core import Case, CaseResult, RunSummary
from ..judges import JudgeModel, close_judge
from ..store import RunStatus, Store
from ..suites import Suite, check_conversations, load_suite
from ._session import aexecute, refuse_inside_loop
from ._stop import StopToken


@dataclass(frozen=True)
class RunReport:
    """A finished run: its summary and every result, in the order they finished."""

    run_id: str
    status: RunStatus
    summary: RunSummary
    results: list[CaseResult]
    store: Store
    """Where the run was stored (an in-memory database unless one was given)."""

    @property
    def passed(self) -> bool:
        """Whether every gate passed (False for a run whose gates are not decided)."""
        return self.summary.gates_passed is True


async def arun(
    suite: Suite | str | Path,
    cases: Iterable[Case] | None = None,
    *,
    judge: JudgeModel | None = None,
    store: Store | None = None,
    repeat: int | None = None,
    concurrency: int | None = None,
    judge_batch: bool = False,
    on_result: Callable[[CaseResult], None] | None = None,
    stop: StopToken | None = None,
    record_agent: Path | None = None,
    replay_agent: Path | None = None,
) -> RunReport:
    """Run ``suite`` (a :class:`Suite` or a suite file) in the running event loop.

    ``cases`` replaces the suite's cases file (any iterable of :class:`Case`). ``store``
    defaults to an in-memory database, so nothing is written unless one is given. The caller
    owns ``judge``: it is not closed, so one judge (and its connection pool) can serve many
    runs. Every result is kept in the report; for runs too large to hold, give a ``store``
    and read them from it instead (:func:`aexecute`). ``record_agent`` / ``replay_agent``
    record the agent's calls into a folder, or answer them from one with no agent running.

    Raises:
        SuiteError: ``suite`` is a file that does not load.
        CaseFileError: a case the suite's target cannot hold (a ``{{messages}}`` body and a
            case without a user, a simulated user without a model and no judge), refused
            before the run starts as ``checkweigh run`` refuses it.
        RunStopped: the run ended early (stored as incomplete).
    """
    # a replay calls no agent: its module need not import any more
    loaded = (
        suite
        if isinstance(suite, Suite)
        else load_suite(Path(suite), load_agent=replay_agent is None)
    )
    if replay_agent is None and cases is None:  # a replay reads the conversations back
        check_conversations(loaded, judge=judge is not None)
    db = store if store is not None else Store("sqlite://")
    results: list[CaseResult] = []

    def keep(result: CaseResult) -> None:
        results.append(result)
        if on_result is not None:
            on_result(result)

    outcome = await aexecute(
        loaded,
        db,
        cases=cases,
        repeat=repeat,
        concurrency=concurrency,
        on_result=keep,
        judge=judge,
        judge_batch=judge_batch,
        stop=stop,
        record_agent=record_agent,
        replay_agent=replay_agent,
    )
    return RunReport(outcome.run_id, outcome.status, outcome.summary, results, db)


def run(
    suite: Suite | str | Path,
    cases: Iterable[Case] | None = None,
    *,
    judge: JudgeModel | None = None,
    store: Store | None = None,
    repeat: int | None = None,
    concurrency: int | None = None,
    judge_batch: bool = False,
    on_result: Callable[[CaseResult], None] | None = None,
    stop: StopToken | None = None,
    record_agent: Path | None = None,
    replay_agent: Path | None = None,
) -> RunReport:
    """:func:`arun` in an event loop of its own, which also closes ``judge`` at the end (its
    connections belong to that loop). From inside a running loop, await :func:`arun`."""

    refuse_inside_loop("run", "arun")

    async def go() -> RunReport:
        try:
            return await arun(
                suite,
                cases,
                judge=judge,
                store=store,
                repeat=repeat,
                concurrency=concurrency,
                judge_batch=judge_batch,
                on_result=on_result,
                stop=stop,
                record_agent=record_agent,
                replay_agent=replay_agent,
            )
        finally:
            await close_judge(judge)

    return asyncio.run(go())
