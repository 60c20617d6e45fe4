"""The executor seam: where a run's cases are evaluated.

The driver (the process that runs ``checkweigh run``) owns the store, the aggregator, the
judge and the report; an executor only decides where the agent runs and the checks are
evaluated, and hands every result back through the run's :class:`Sink` as it finishes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ...core import Case, CaseResult
from ...judges import JudgeModel
from ...store import Handoff, Rows
from ...suites import CasesSource, Suite
from .._agent_source import RunAgent
from .._engine import Evaluator, Sourced, run_local
from .._stop import StopToken
from ..targets import Target
from ._worker import Stored, WorkerSpec

if TYPE_CHECKING:
    from .._options import RunOptions


class Sink(Protocol):
    """Where an executor hands a run's results, in the driver: the one way out.

    :meth:`add` takes any result. The rest is optional speed, offered by the run's store
    through :attr:`handoff`: workers that build the store's rows hand them to
    :meth:`add_rows`; workers that store their results themselves hand their aggregates to
    :meth:`add_stored`, and on an early stop the run :meth:`discard`\\ s what they stored
    past the results it acknowledged.
    """

    handoff: Handoff | None
    """What the run's store lets workers do with the results (None: hand them to :meth:`add`
    one by one)."""

    def add(self, result: CaseResult) -> None:
        """One finished result."""
        ...

    def flush(self) -> None:
        """The results that finished together were handed on (one commit for all)."""
        ...

    def add_rows(self, results: list[CaseResult], rows: Rows) -> None:
        """Results with their rows, built by :meth:`Handoff.rows`, in the cases' order."""
        ...

    def add_stored(self, stored: Stored) -> None:
        """A batch that a worker stored through :meth:`Handoff.write`, in the cases' order."""
        ...

    def discard(self, start: int) -> None:
        """Delete what workers stored at case positions ``start`` and after."""
        ...


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
    """What a worker process needs to rebuild the evaluator (and the agent)."""
    target: Target | None
    """The agent, as the driver built it (None: recorded cases, or it runs elsewhere)."""
    target_timeout_s: float | None
    """The agent's per-call limit, applied where the agent runs."""
    repeat: int
    """Executions of each case."""
    concurrency: int
    """Cases in flight at once."""
    stop: StopToken | None
    """Requested: the executor ends the run between cases (raising ``Interrupted``)."""
    asks_judge: bool
    """Whether some check asks the driver's judge (those calls stay in the driver)."""


class Executor(Protocol):
    """Where a run's cases are evaluated; results go back through the run's :class:`Sink`.

    An executor is made by a factory registered under its name (see
    :data:`checkweigh.runs.executors.EXECUTORS`), and declares what it can run: the run
    refuses the rest with a one-line message before it starts.
    """

    name: str
    """Its registered name, for the run's notes."""
    runs_agents: bool
    """Whether it runs suites whose target is an agent (else recorded cases only)."""
    records_agents: bool
    """Whether the agent's calls can be recorded or replayed (``--record-agent``,
    ``--replay-agent``): they are, in the driver, when the agent runs there."""

    def agent(self, suite: Suite, judge: JudgeModel | None = None) -> RunAgent | None:
        """The agent the driver drives when the executor runs it elsewhere (None: the
        driver builds the suite's own target); simulated users speak through ``judge``."""
        ...

    def counts_cases(self, suite: Suite, *, asks_judge: bool) -> int | None:
        """The number of cases of a run of ``suite``, when the executor validates every case
        itself as it scores it (the run then need not read the file first); None: the run
        counts and validates them."""
        ...

    async def run(self, work: Work, sink: Sink) -> list[str]:
        """Evaluate ``work``'s cases, handing each result to ``sink`` as it finishes, and
        return notes for the report (empty when there is nothing to say).

        Raises:
            Interrupted: ``work.stop`` was requested; every result handed on is kept.
        """
        ...


class LocalExecutor:
    """In this process: the engine's loop or its asyncio pool (the default)."""

    name = "local"
    runs_agents = True
    records_agents = True

    @classmethod
    def from_options(cls, options: RunOptions) -> LocalExecutor:
        """The one local executor (it holds nothing of a run)."""
        return LOCAL

    def agent(self, suite: Suite, judge: JudgeModel | None = None) -> RunAgent | None:
        """The suite's own target, built by the driver."""
        return None

    def counts_cases(self, suite: Suite, *, asks_judge: bool) -> int | None:
        """None: the run reads the cases."""
        return None

    async def run(self, work: Work, sink: Sink) -> list[str]:
        """The engine's own loop, as a run without an executor evaluates its cases."""
        await run_local(
            work.evaluator,
            work.cases,
            sink.add,
            target=work.target,
            target_timeout_s=work.target_timeout_s,
            repeat=work.repeat,
            concurrency=work.concurrency,
            stop=work.stop,
            on_batch=sink.flush if work.target is not None else None,
        )
        return []


LOCAL = LocalExecutor()
"""The default executor."""
