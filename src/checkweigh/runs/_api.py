"""The one way to run a suite: :func:`arun` in the running event loop, :func:`run` in a loop of
its own. ``checkweigh run``, the service and any server go through them.

Who closes the judge: a judge the caller passes (``judge=``) is the caller's, and is never
closed here, so one judge (and its connection pool) can serve many runs; a judge the run
builds from ``options.judge`` is the run's, closed when the run ends, by :func:`run` too.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..core import Case, CaseResult, PassPolicy, RunSummary
from ..errors import CaseFileError, StoreError
from ..judges import JudgeModel, close_judge
from ..store import RunStatus, Store
from ..suites import Suite
from ._options import RunOptions
from ._prepare import plan_run
from ._session import OnProgress, RunOutcome, RunStopped, drive, refuse_inside_loop
from ._stop import StopToken, ctrl_c_is_default, interrupt, stop_on_signals
from .executors import Executor

StoreLike = Store | Callable[[Suite], Store]
"""Where a run is stored: a store, or a function that opens one once the run's options were
checked (given the loaded suite), so a bad option never creates a database."""


@dataclass(frozen=True)
class RunStart:
    """A run about to evaluate its first case (see ``on_start``)."""

    run_id: str
    """The run's id in the store."""
    suite: Suite
    """The loaded suite (its cases file as the options chose)."""
    total: int | None
    """Executions the run will make, when the cases were counted first (``screen``, or an
    executor that counts them)."""
    judge: JudgeModel | None
    """The judge the judge checks ask (the caller's, or the one the run built)."""
    policy: PassPolicy
    """The pass policy the run decides cases with (the options' thresholds applied)."""
    store: Store
    """Where the run is stored."""


@dataclass(frozen=True)
class RunReport:
    """A finished run: its summary and, unless ``keep_results=False``, every result in the
    order they finished."""

    run_id: str
    status: RunStatus
    summary: RunSummary
    results: list[CaseResult]
    store: Store
    """Where the run was stored (an in-memory database unless one was given)."""
    kept: int = field(default=0)
    """Results the store holds for the run, counted there once the run ended."""

    @property
    def passed(self) -> bool:
        """Whether every gate passed (False for a run whose gates are not decided)."""
        return self.summary.gates_passed is True

    @property
    def outcome(self) -> RunOutcome:
        """How the run ended, as :class:`RunStopped` carries it."""
        return RunOutcome(self.run_id, self.status, self.summary, self.kept)


async def arun(
    suite: Suite | str | Path,
    options: RunOptions | None = None,
    *,
    cases: Iterable[Case] | None = None,
    store: StoreLike | None = None,
    judge: JudgeModel | None = None,
    executor: Executor | None = None,
    on_result: Callable[[CaseResult], None] | None = None,
    on_progress: OnProgress | None = None,
    on_start: Callable[[RunStart], None] | None = None,
    stop: StopToken | None = None,
    keep_results: bool = True,
    on_note: Callable[[str], None] | None = None,
) -> RunReport:
    """Run ``suite`` (a :class:`Suite` or a suite file) in the running event loop, as
    ``checkweigh run`` does: the options are checked first, in the CLI's order and with its
    one-line messages, then each result is stored as it finishes.

    Args:
        suite: the suite, or its file.
        options: how to run it (:class:`RunOptions`: cases file, repeats, judge, thresholds,
            graded weights, executor and workers, agent record/replay, ...).
        cases: cases to evaluate instead of the suite's cases file (any iterable of
            :class:`Case`, read lazily).
        store: where the run is stored, or a function opening it once the options were
            checked; default an in-memory database, so nothing is written unless one is given.
        judge: a judge object for the judge checks, instead of ``options.judge.spec``. It is
            the caller's: never closed here. A judge built from ``options.judge`` is closed
            when the run ends.
        executor: an executor object (e.g. ``ProcessExecutor(4, chunk=512)``), instead of
            ``options.executor``; checked against what it supports all the same.
        on_result: called with each finished result.
        on_progress: called with (executions stored, of them errored) instead of
            ``on_result`` for results that worker processes stored themselves (``processes``
            on a SQLite file); without it, results asked for by ``on_result`` come back here.
        on_start: called once the run is created, before its first case.
        stop: requesting it ends the run between cases; cancelling the awaiting task does
            too (the run is then stored as incomplete).
        keep_results: keep every result in the report; for runs too large to hold, pass
            False and read them from ``store``.
        on_note: called with a line for the person watching (in batch mode, each poll of
            the judge's batches: ids, items done/failed/total, time elapsed).

    Raises:
        InputError: bad options, a suite that does not load, or a case the suite's target
            cannot hold, in one line naming the flag or the file and line (nothing stored).
        StoreError: the store cannot be opened.
        RunStopped: the run ended early (stored as incomplete; ``cause`` says why).
        CaseFileError: with ``options.screen``, a bad case met by workers that read the file
            themselves: the run was deleted, as if it had been screened.
    """
    if options is not None and not isinstance(options, RunOptions):
        raise TypeError(
            f"options must be RunOptions, not {type(options).__name__}; give cases as cases=..."
        )
    options = options or RunOptions()
    p = plan_run(suite, options, judge=judge, executor=executor, cases_given=cases is not None)
    built = p.judge if p.owns_judge else None
    try:
        db = store(p.suite) if callable(store) else store or Store("sqlite://")
        results: list[CaseResult] = []
        keep = results.append if keep_results else None
        hand_on = _both(keep, on_result)

        def started(run_id: str) -> None:
            if on_start is not None:
                on_start(RunStart(run_id, p.suite, p.total, p.judge, p.policy, db))

        try:
            outcome = await drive(
                p.suite,
                db,
                cases=cases,
                repeat=options.repeat,
                concurrency=options.concurrency,
                on_result=hand_on,
                on_progress=on_progress,
                judge=p.judge,
                judge_batch=options.judge.batch,
                graded_weights=p.graded_weights,
                policy=p.policy,
                stop=stop,
                record_agent=options.record_agent,
                replay_agent=options.replay_agent,
                executor=p.executor,
                on_start=started,
                batch=p.batch,
                resume=options.resume,
                on_note=on_note,
            )
        except RunStopped as exc:
            if p.screened or not options.screen or not isinstance(exc.cause, CaseFileError):
                raise
            # the workers read the file themselves: a bad case refuses the run as screening
            # would have, with nothing kept
            try:
                db.delete_run(exc.outcome.run_id)
            except StoreError:
                raise exc from None  # the run stays as it was stored: incomplete
            raise exc.cause from None
    finally:
        await close_judge(built)
    return RunReport(outcome.run_id, outcome.status, outcome.summary, results, db, outcome.kept)


def run(
    suite: Suite | str | Path,
    options: RunOptions | None = None,
    *,
    cases: Iterable[Case] | None = None,
    store: StoreLike | None = None,
    judge: JudgeModel | None = None,
    executor: Executor | None = None,
    on_result: Callable[[CaseResult], None] | None = None,
    on_progress: OnProgress | None = None,
    on_start: Callable[[RunStart], None] | None = None,
    stop: StopToken | None = None,
    keep_results: bool = True,
    on_note: Callable[[str], None] | None = None,
) -> RunReport:
    """:func:`arun` in an event loop of its own (from a script; from inside a running loop,
    await :func:`arun`). The judge rule is the same: a judge the run built is closed, the
    caller's ``judge`` is not (its connections then belong to a loop that has ended: close
    it with ``asyncio.run(close_judge(judge))``, or await :func:`arun` in one loop).

    Without ``stop``, in a script's main thread, Ctrl-C ends the run between cases (a
    KeyboardInterrupt in the middle of a write could lose the batch), and a second Ctrl-C
    raises KeyboardInterrupt as usual.
    """
    refuse_inside_loop("run", "arun")

    def go(token: StopToken | None) -> RunReport:
        return asyncio.run(
            arun(
                suite,
                options,
                cases=cases,
                store=store,
                judge=judge,
                executor=executor,
                on_result=on_result,
                on_progress=on_progress,
                on_start=on_start,
                stop=token,
                keep_results=keep_results,
                on_note=on_note,
            )
        )

    if stop is None and ctrl_c_is_default():
        with stop_on_signals(StopToken(), interrupt, (signal.SIGINT,)) as token:
            return go(token)
    return go(stop)


def _both(
    first: Callable[[CaseResult], None] | None, then: Callable[[CaseResult], None] | None
) -> Callable[[CaseResult], None] | None:
    """One callback calling ``first`` then ``then`` (None when neither is given: worker
    processes may then store their results themselves)."""
    if first is None or then is None:
        return first or then

    def both(result: CaseResult) -> None:
        first(result)
        then(result)

    return both
