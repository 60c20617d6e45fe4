"""The executor seam: where a run's cases are evaluated.

The driver (the process that runs ``checkweigh run``) always owns the store, the aggregator,
the judge and the report; an executor only decides where the agent runs and the checks are
evaluated, and hands every result back to the driver as it finishes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ...core import Case, CaseResult
from ...judges import JudgeModel
from ...store._rows import SqliteRows
from ...suites import CasesSource, Suite
from .._agent_source import RunAgent
from .._engine import Evaluator, OnResult, Sourced, arun_cases
from .._stop import StopToken
from ..targets import Target
from ._worker import Stored, WorkerSpec

OnRows = Callable[[list[CaseResult], SqliteRows], None]
"""The driver's hand for results that come with their store rows, in the cases' order."""
OnStored = Callable[[Stored], None]
"""The driver's hand for chunks a worker stored itself, in the cases' order."""


@dataclass(frozen=True)
class Work:
    """One run's cases and how to evaluate them, as the driver hands them to an executor."""

    evaluator: Evaluator
    """The driver's evaluator (its judge checks ask the driver's judge)."""
    cases: Iterable[Case] | Iterable[Sourced]
    """The cases, read lazily (the suite's cases file unless the caller gave others)."""
    source: CasesSource | None
    """The suite's cases file when ``cases`` reads it (None: the caller's cases)."""
    spec: WorkerSpec
    """What a worker needs to rebuild the evaluator."""
    target: Target | None
    """The agent, as the driver built it (None: recorded cases, or it runs elsewhere)."""
    target_timeout_s: float | None
    repeat: int
    concurrency: int
    """Cases in flight at once."""
    stop: StopToken | None
    on_batch: Callable[[], None] | None
    """Called once results that finished together were handed on (one commit for all)."""
    asks_judge: bool
    """Whether some check asks the driver's judge (those calls stay in the driver)."""
    run_id: str | None = None
    """The run's id, when its store takes rows built elsewhere (SQLite): an executor whose
    workers build them hands them to ``on_rows``."""
    on_rows: OnRows | None = None
    """Stores results with their rows (instead of ``on_result`` for each)."""
    db: Path | None = None
    """The run's SQLite file, when worker processes may store their chunks themselves and
    hand ``on_stored`` only their aggregates (SQLite files; runs without repeats)."""
    on_stored: OnStored | None = None
    """Accounts for a chunk a worker stored (instead of ``on_result`` for each result)."""
    discard: Callable[[int], None] | None = None
    """Deletes the run's stored results from a case position on: what workers stored past
    the cases acknowledged when the run stops early."""


class Executor(Protocol):
    """Where a run's cases are evaluated; the driver stores what it hands back."""

    name: str
    """``local``, ``processes`` or ``ray``: for the run's notes."""

    def agent(self, suite: Suite, judge: JudgeModel | None = None) -> RunAgent | None:
        """The agent the driver drives when the executor runs it elsewhere (None: the
        driver builds the suite's own target); simulated users speak through ``judge``."""
        ...

    async def run(self, work: Work, on_result: OnResult) -> list[str]:
        """Evaluate ``work``'s cases, handing each result to ``on_result`` in the driver as
        it finishes, and return notes for the report (empty when there is nothing to say).

        Raises:
            Interrupted: ``work.stop`` was requested; every result handed on is kept.
        """
        ...


class LocalExecutor:
    """In this process: the engine's loop or its asyncio pool (the default)."""

    name = "local"

    def agent(self, suite: Suite, judge: JudgeModel | None = None) -> RunAgent | None:
        """The suite's own target, built by the driver."""
        return None

    async def run(self, work: Work, on_result: OnResult) -> list[str]:
        """:func:`~checkweigh.runs.arun_cases`, as a run without an executor calls it."""
        await arun_cases(
            work.evaluator,
            work.cases,
            on_result,
            target=work.target,
            target_timeout_s=work.target_timeout_s,
            repeat=work.repeat,
            concurrency=work.concurrency,
            stop=work.stop,
            on_batch=work.on_batch,
        )
        return []


LOCAL = LocalExecutor()
"""The default executor."""
