"""The worker's side: rebuild a run's evaluator (and agent) from its spec, then score chunks of
recorded cases or run single cases through the agent.

A worker never receives the driver's live objects (judge clients, semaphores, compiled
checks, imported agent modules): it loads the suite file itself, once per process, and keeps
what it built for the next task of the same run.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Coroutine, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, TypeVar

from ..._process import refuse_process_exit
from ...checks import Watched
from ...core import AggregatePart, Case, CaseResult, PassPolicy, RunAggregator
from ...errors import CheckweighError, InputError
from ...judges import recorded
from ...store import Handoff, Rows
from ...suites import Suite, case_of_line, load_suite
from .._engine import Answered, Evaluator
from .._gc import collector_paused
from ..targets import AgentFailure, AgentUsage, Target, TargetRequest, build_target, timed
from ..targets.conversation import ConversationFailure, conversing
from ._blocks import Block, block_lines

if TYPE_CHECKING:
    from ctypes import c_byte as Halt  # a byte shared with the driver (see ignore_interrupts)
    from multiprocessing.synchronize import Lock as WriteLock

T = TypeVar("T")


@dataclass(frozen=True)
class WorkerSpec:
    """What a worker needs to rebuild a run's evaluator: picklable, small, hashable."""

    suite: Path
    """The suite file, read again by the worker (the same path must be readable there)."""
    cases: Path
    """The cases file the run reads (``--cases`` included)."""
    on_bad_record: Literal["skip", "fail"]
    """The run's bad-record choice (imported logs)."""
    with_agent: bool
    """Whether the worker runs the suite's agent (its module is then imported there)."""
    timeout_s: float | None
    """The agent's per-call limit."""
    checks: tuple[str, ...]
    """The driver's check names, so a worker that built other checks refuses to score."""
    rubrics: tuple[str, ...]
    """The driver's rubric names, likewise."""
    handoff: Handoff | None = None
    """What the run's store lets the worker do with each chunk's results: build their rows
    (the driver then only inserts them), or, when it names a file, store them itself and
    hand the driver only their aggregates (see :func:`store_chunk`); None: neither."""
    policy: PassPolicy | None = None
    """The run's pass policy, for the case verdicts a worker counts (:func:`store_chunk`)."""

    @classmethod
    def of(
        cls,
        suite: Suite,
        evaluator: Evaluator,
        *,
        with_agent: bool,
        policy: PassPolicy | None = None,
    ) -> WorkerSpec:
        """The spec of a run of ``suite`` scored by ``evaluator`` (the driver's) under
        ``policy`` (the run's; default the suite's)."""
        timeout = suite.target.timeout_s if suite.target is not None else None
        return cls(
            suite=suite.path.resolve(),
            cases=suite.cases.path.resolve(),
            on_bad_record=suite.cases.on_bad_record,
            with_agent=with_agent,
            timeout_s=timeout,
            checks=tuple(c.name for c in evaluator.checks if not c.judged),
            rubrics=tuple(r.name for r in evaluator.rubrics),
            policy=policy or suite.policy,
        )


class WorkerState(NamedTuple):
    """What a worker built from a spec, kept for the process's next task."""

    evaluator: Evaluator
    """The suite's evaluator without a judge: judge checks are the driver's."""
    target: Target | None
    """The agent, holding the conversations of scripted users itself."""
    agent: Target | None = None
    """The agent alone, for one turn of a conversation the driver holds (see
    :func:`run_turn`)."""


_STATES: dict[WorkerSpec, WorkerState] = {}
_LOOP: list[asyncio.AbstractEventLoop] = []


def worker_state(spec: WorkerSpec) -> WorkerState:
    """The evaluator (and agent) of ``spec``, built on the first task of this process.

    Raises:
        InputError: the suite no longer loads here, or gives other checks than the driver's.
    """
    state = _STATES.get(spec)
    if state is not None:
        return state
    # the driver resolved the cases file (spec.cases): the suite's own need not exist
    suite = load_suite(spec.suite, load_agent=spec.with_agent, own_cases=False)
    suite = suite.with_cases(spec.cases, spec.on_bad_record)
    evaluator = Evaluator.from_suite(suite)
    built = (
        tuple(c.name for c in evaluator.checks if not c.judged),
        tuple(r.name for r in evaluator.rubrics),
    )
    if built != (spec.checks, spec.rubrics):
        raise InputError(
            "the suite changed since the run started: a worker loaded other checks or rubrics "
            "than the driver",
            file=spec.suite,
        )
    target = agent = None
    if spec.with_agent and suite.target is not None:
        # simulated users speak through the judge, which stays with the driver: their
        # conversations are held there, a turn at a time here (run_turn)
        agent = build_target(suite.target, suite.base_dir)
        target = conversing(agent, suite.target, None)
    state = _STATES[spec] = WorkerState(evaluator, target, agent)
    return state


def ignore_interrupts(write_lock: WriteLock | None, halt: Halt | None = None) -> None:
    """A worker process's start: Ctrl-C reaches the whole process group, and the driver alone
    decides how the run stops (it stops handing out work, and keeps what finished).

    ``write_lock`` is taken around each chunk a worker stores: SQLite has one writer at a
    time, and a writer that finds the database busy polls it with sleeps of up to 100 ms,
    while the lock hands over at once.

    ``halt`` is the driver's flag for a stop: once set, a chunk ends before its next case and
    hands back (and stores) the cases it finished, so a stop waits for one case per worker,
    not a whole chunk."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _WRITE_LOCK[:] = [write_lock] if write_lock is not None else []
    _HALT[:] = [halt] if halt is not None else []


_WRITE_LOCK: list[WriteLock] = []
_HALT: list[Halt] = []


Line = tuple[int, bytes]
"""A line of a JSONL cases file with its number."""


class Chunk(NamedTuple):
    """Consecutive cases of a run, handed to one worker."""

    first: int
    """The position of the chunk's first case in the cases file."""
    repeat: int
    """Executions of each case."""
    lines: tuple[Line, ...] = ()
    """Raw lines of a JSONL cases file (the worker parses them), or ..."""
    cases: tuple[tuple[Case, bytes | None], ...] = ()
    """... cases read by the driver (imported logs, YAML, a caller's cases)."""
    replace: bool = False
    """A chunk tried again: its rows are replaced (see :func:`store_chunk`)."""
    block: Block | None = None
    """... or the range of the cases file that holds its lines (the worker reads them) ..."""
    block_cases: int = 0
    """... and how many cases that range holds."""

    def __len__(self) -> int:
        return len(self.lines) or len(self.cases) or self.block_cases

    def numbered(self, path: Path) -> tuple[Line, ...]:
        """Its lines with their numbers (read from ``path`` for a block)."""
        if self.block is not None:
            return tuple(block_lines(path, self.block, self.block_cases))
        return self.lines

    def retried(self, path: Path, cases: int | None = None) -> Chunk:
        """The chunk tried again, replacing what it stored (its first ``cases`` only, when
        given). (``_replace`` cannot: ``__len__`` counts cases, not fields.)"""
        if cases is None:
            return Chunk(
                self.first, self.repeat, self.lines, self.cases, True, self.block, self.block_cases
            )
        return Chunk(self.first, self.repeat, self.numbered(path)[:cases], replace=True)


class Stored(NamedTuple):
    """A chunk a worker stored itself: what the driver needs to account for it."""

    case_ids: list[str]
    """The stored executions' case ids, in order."""
    latencies: list[float | None]
    part: AggregatePart
    """Their aggregates (see :meth:`RunAggregator.merge`)."""
    error: CheckweighError | None = None
    """What ended the chunk early (a bad case line): the executions before it are stored."""
    new_ids: bool = False
    """Whether the driver checked that none of the case ids came before in the run."""
    watched: Watched | None = None
    """The case paths the chunk's cases did not hold (see ``checks.PathWatch``)."""


class Scored(NamedTuple):
    """A chunk's results in order, and the error that ended it early (a bad case line)."""

    results: list[CaseResult]
    error: CheckweighError | None = None
    rows: Rows | None = None
    """``results`` as the store's rows, when the spec has a handoff (see
    :attr:`WorkerSpec.handoff`)."""
    watched: Watched | None = None
    """The case paths the chunk's cases did not hold (see ``checks.PathWatch``)."""


def score_chunk(spec: WorkerSpec, chunk: Chunk) -> Scored:
    """Parse and score one chunk of recorded cases (a worker's task).

    A bad line ends the chunk: the results before it are returned with the error, which the
    driver raises once it has stored them, as the in-process run does.
    """
    # a chunk's objects are freed with it (see checkweigh.runs._gc)
    with refuse_process_exit(), collector_paused():
        scored = _scored(spec, chunk)
        if spec.handoff is None:
            return scored
        # the store's own function, here rather than in the driver, which only inserts them
        return scored._replace(rows=spec.handoff.rows(scored.results))


def _scored(spec: WorkerSpec, chunk: Chunk) -> Scored:
    """``chunk``'s cases parsed and scored by ``spec``'s evaluator."""
    evaluator = worker_state(spec).evaluator
    evaluator.watch.restart()  # a process scores one chunk at a time: each is watched alone
    if evaluator.needs_async:
        scored = _run(_ascore(evaluator, chunk, spec.cases))
    else:
        scored = _score(evaluator, chunk, spec.cases)
    return scored._replace(watched=evaluator.watch.chunk())


def store_chunk(spec: WorkerSpec, chunk: Chunk) -> Stored:
    """Parse, score and store one chunk of recorded cases in the run's SQLite file, in one
    transaction, and return their aggregates (a worker's task): the driver, on a core the
    workers share, then only merges them.

    A bad line ends the chunk: the results before it are stored and returned with the error.
    A chunk tried again (``chunk.replace``) first deletes what its earlier try may have
    committed.

    Raises:
        StoreError: the chunk could not be stored (nothing of it was).
    """
    handoff = spec.handoff
    assert handoff is not None
    assert handoff.file is not None
    with refuse_process_exit(), collector_paused():
        scored = _scored(spec, chunk)
        results = scored.results
        if results or chunk.replace:
            stop = chunk.first + len(chunk)
            handoff.write(
                results,
                replace=range(chunk.first, stop) if chunk.replace else None,
                lock=_WRITE_LOCK[0] if _WRITE_LOCK else None,
            )
        aggregator = RunAggregator(
            worker_state(spec).evaluator.rubrics, policy=spec.policy, journal=True
        )
        for result in results:
            aggregator.add(result)
        return Stored(
            [r.case_id for r in results],
            [r.latency_ms for r in results],
            aggregator.part(),
            scored.error,
            watched=scored.watched,
        )


def _score(evaluator: Evaluator, chunk: Chunk, path: Path) -> Scored:
    results: list[CaseResult] = []
    evaluate = evaluator.evaluate
    try:
        for index, case, body in _cases(chunk, path):
            for r in range(chunk.repeat):
                results.append(evaluate(case, repeat=r, index=index, body=body))
    except CheckweighError as exc:
        return Scored(results, exc)
    return Scored(results)


def _cases(chunk: Chunk, path: Path) -> Iterable[tuple[int, Case, bytes | None]]:
    """``chunk``'s cases in order, ending early once the driver asks for a stop (the chunk
    then comes back short, with no error: see :func:`ignore_interrupts`)."""
    halt = _HALT[0] if _HALT else None
    if chunk.cases:
        for i, (case, body) in enumerate(chunk.cases):
            if halt is not None and halt.value:
                return
            yield chunk.first + i, case, body
        return
    lines = (
        chunk.lines if chunk.block is None else block_lines(path, chunk.block, chunk.block_cases)
    )
    for i, (lineno, raw) in enumerate(lines):
        if halt is not None and halt.value:
            return
        yield chunk.first + i, case_of_line(path, lineno, raw), raw.rstrip(b"\r\n")


_ASYNC_AT_ONCE = 32
"""Cases of a chunk whose async checks are awaited at once."""


async def _ascore(evaluator: Evaluator, chunk: Chunk, path: Path) -> Scored:
    gate = asyncio.Semaphore(_ASYNC_AT_ONCE)
    halt = _HALT[0] if _HALT else None

    async def one(index: int, case: Case, body: bytes | None, r: int) -> CaseResult | None:
        async with gate:
            if halt is not None and halt.value:  # a stop: the cases not begun are not run
                return None
            return await evaluator.aevaluate(case, repeat=r, index=index, body=body)

    jobs = []
    error: CheckweighError | None = None
    try:
        for index, case, body in _cases(chunk, path):
            jobs += [one(index, case, body, r) for r in range(chunk.repeat)]
    except CheckweighError as exc:
        error = exc
    results: list[CaseResult] = []
    for done in await asyncio.gather(*jobs):
        if done is None:  # stopped: the executions before the first not run
            return Scored(results)
        results.append(done)
    return Scored(results, error)


class Ran(NamedTuple):
    """What a worker sends back for one case run through the agent."""

    outcome: Literal["ran", "failed"]
    reason: str = ""
    """Why the agent failed (``failed``)."""
    trace: list[Any] | None = None
    final_state: dict[str, Any] | None = None
    usage: AgentUsage | None = None
    latency_ms: float | None = None
    """The agent's own latency, else the wall time of its call."""
    answered: dict[str, Answered] | None = None
    """The answers of the checks that need no judge, by check name."""
    case: Case | None = None
    """The conversation so far, when one broke off (``failed``): stored as a local run
    stores it."""


def run_case(spec: WorkerSpec, case: Case, repeat: int) -> Ran:
    """Run the agent on ``case`` and answer the checks that need no judge (a worker's task)."""
    state = worker_state(spec)
    if state.target is None:
        raise InputError("the suite has no agent target to run", file=spec.suite)
    return _run(_arun_case(state, spec.timeout_s, case, repeat))


async def _arun_case(state: WorkerState, timeout_s: float | None, case: Case, repeat: int) -> Ran:
    assert state.target is not None
    ran = await _arun(state.target, timeout_s, TargetRequest(case, repeat))
    if ran.outcome == "failed":
        return ran
    with refuse_process_exit():
        done = case.model_copy(update={"trace": ran.trace, "final_state": ran.final_state})
        checks = [c for c in state.evaluator.checks if not c.judged]
        answers = await asyncio.gather(*(recorded(c.name, c.answers, done) for c in checks))
    return ran._replace(answered={c.name: a for c, a in zip(checks, answers, strict=True)})


def run_turn(spec: WorkerSpec, request: TargetRequest) -> Ran:
    """One turn of a conversation the driver holds: the agent's answer to ``request`` (the
    messages so far), no checks (a worker's task)."""
    state = worker_state(spec)
    if state.agent is None:
        raise InputError("the suite has no agent target to run", file=spec.suite)
    return _run(_arun(state.agent, spec.timeout_s, request))


async def _arun(target: Target, timeout_s: float | None, request: TargetRequest) -> Ran:
    """``target``'s answer to ``request`` within ``timeout_s``, or why it failed (with the
    conversation so far, when one broke off)."""
    with refuse_process_exit():
        try:
            ran, ms = await timed(target, request, timeout_s)
        except AgentFailure as exc:
            held = exc.case if isinstance(exc, ConversationFailure) else None
            return Ran("failed", str(exc), case=held)
    return Ran(
        "ran",
        trace=ran.trace,
        final_state=ran.final_state,
        usage=ran.usage,
        latency_ms=ran.latency_ms if ran.latency_ms is not None else ms,
    )


def _run(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on this process's one event loop, kept across tasks: an agent's
    connections (an HTTP client's pool) belong to the loop that opened them."""
    if not _LOOP:
        loop = asyncio.new_event_loop()
        threading.Thread(target=loop.run_forever, name="checkweigh-worker", daemon=True).start()
        _LOOP.append(loop)
    return asyncio.run_coroutine_threadsafe(coro, _LOOP[0]).result()
