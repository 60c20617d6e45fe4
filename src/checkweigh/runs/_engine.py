"""Evaluating cases: run every check once per case, score every rubric, report results.

Recorded cases with synchronous checks take a plain loop (the fast path); agent targets and
async checks go through an asyncio worker pool with an explicit concurrency limit.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pydantic import Field

from ..checks import NamedCheck, PathWatch, verdict_names
from ..core import (
    Case,
    CaseResult,
    CaseUsage,
    JudgeExchange,
    Rubric,
    Verdict,
    score_rubric,
    trace_usage,
)
from ..judges import (
    JudgeCheck,
    JudgeModel,
    Question,
    QuestionBatch,
    recorded,
    reweighted,
)
from ..suites import Suite
from ._gc import older_objects_frozen
from ._stop import Interrupted, StopToken
from .targets import AgentFailure, AgentRun, Target, TargetRequest, failed_case, timed

OnResult = Callable[[CaseResult], None]
_new = tuple.__new__
Answered = tuple[Any, list[JudgeExchange]]
"""A check's answer (a verdict, or its named verdicts) with the judge calls it made."""


class CheckedRun(AgentRun):
    """An agent's run that comes with the answers of the checks that need no judge, made
    where the agent ran (a worker of another process or machine); the engine runs only the
    other checks (the judge's, under the driver's one pool)."""

    answered: dict[str, Any] = Field(default_factory=dict)
    """Check name -> :data:`Answered`."""


@dataclass(frozen=True, slots=True)
class Evaluator:
    """The checks and rubrics of a suite, ready to score cases. Pure unless its checks ask a
    judge (they were given it by :meth:`from_suite` or :meth:`NamedCheck.with_judge`)."""

    checks: tuple[NamedCheck, ...]
    rubrics: tuple[Rubric, ...]
    order: tuple[str, ...] = ()
    """The order verdicts are reported in, when it is not the checks' (batch mode answers
    its questions together)."""
    _runs: tuple[tuple[str, Callable[[Case], Verdict]], ...] = field(
        init=False, repr=False, compare=False
    )
    _records: tuple[tuple[str, ...], ...] = field(init=False, repr=False, compare=False)
    """The verdict names each check is recorded under: its own, and the named verdicts of it
    that a rubric weighs (``grader.tool_routing``)."""
    watch: PathWatch = field(init=False, repr=False, compare=False)
    """The case paths the checks read that no case evaluated here held yet (see
    :class:`~checkweigh.checks.PathWatch`): a run names them in its report."""

    def __post_init__(self) -> None:
        # bound methods made once, not once per check per case
        object.__setattr__(self, "_runs", tuple((c.name, c.runner()) for c in self.checks))
        used = {name for r in self.rubrics for name in r.check_names}
        records = tuple(
            (
                *((c.name,) if c.has_own_verdict else ()),
                *(n for k in verdict_names(c.check) if (n := c.recorded_as(k)) in used),
            )
            for c in self.checks
        )
        object.__setattr__(self, "_records", records)
        watch = PathWatch.of((c.name, c.check, c.when) for c in self.checks)
        object.__setattr__(self, "watch", watch)

    @classmethod
    def for_rubrics(
        cls,
        checks: Mapping[str, NamedCheck],
        rubrics: Sequence[Rubric],
        also: Sequence[str] = (),
    ) -> Evaluator:
        """Keep only the checks some rubric uses (by name, or by a named verdict
        ``check.verdict``), plus ``also`` (expected-outcome checks, which decide pass/fail
        without being scored), in suite order."""
        used = {name for r in rubrics for name in r.check_names} | set(also)
        owners = {name.rpartition(".")[0] for name in used}  # of named verdicts: check.verdict
        kept = tuple(c for n, c in checks.items() if n in used or n in owners)
        return cls(kept, tuple(rubrics))

    @classmethod
    def from_suite(
        cls,
        suite: Suite,
        judge: JudgeModel | None = None,
        *,
        batch: bool = False,
        graded_weights: Mapping[str, float] | None = None,
    ) -> Evaluator:
        """The evaluator of a loaded suite; its judge checks ask ``judge`` (skipped without),
        in one checklist call per case when ``batch``, graded metrics reweighted by
        ``graded_weights``."""
        evaluator = cls.for_rubrics(suite.checks, suite.rubrics, suite.policy.outcome_checks)
        checks = with_judge(evaluator.checks, judge, batch=batch, graded_weights=graded_weights)
        order = tuple(c.name for c in evaluator.checks) if batch and judge is not None else ()
        return cls(checks, evaluator.rubrics, order)

    @property
    def needs_async(self) -> bool:
        """Whether some check must be awaited (or answers several named verdicts)."""
        return any(c.is_async for c in self.checks) or any(len(r) > 1 for r in self._records)

    def evaluate(
        self,
        case: Case,
        *,
        repeat: int = 0,
        index: int = 0,
        latency_ms: float | None = None,
        body: bytes | None = None,
    ) -> CaseResult:
        """Score one case with synchronous checks. ``body`` is the case's JSON as read, kept
        with the result for the store."""
        if self.watch.pending:  # until every path the checks read was seen once
            self.watch.see(case)
        if case.error is not None:
            return self._errored(case, repeat, index, latency_ms, body)
        verdicts = {name: run(case) for name, run in self._runs}
        ms = latency_ms
        if ms is None:  # a recorded latency is read directly; else derive it from the trace
            ms = case.__dict__["latency_ms"]
            if ms is None:
                ms = case.total_latency_ms()
        return self._result(case, verdicts, repeat, index, ms, body, ())

    async def aevaluate(
        self,
        case: Case,
        *,
        repeat: int = 0,
        index: int = 0,
        latency_ms: float | None = None,
        body: bytes | None = None,
        answered: Mapping[str, Answered] | None = None,
    ) -> CaseResult:
        """Score one case, awaiting async checks concurrently; the judge calls they made are
        kept with the result. ``answered`` holds checks already answered elsewhere (by a
        worker process, where the agent ran), by check name: they are not run again."""
        if self.watch.pending:
            self.watch.see(case)
        if case.error is not None:
            return self._errored(case, repeat, index, latency_ms, body)
        todo = self.checks if not answered else [c for c in self.checks if c.name not in answered]
        checks = asyncio.gather(*(recorded(c.name, c.answers, case) for c in todo))
        try:
            answers = await checks
        except asyncio.CancelledError:
            # a stop came after the last check answered, while another case's slow sync check
            # held the event loop: this case is finished, and a finished case is kept
            if not checks.done() or checks.cancelled():
                raise
            answers = checks.result()
        if answered:  # back in the checks' order
            fresh = iter(answers)
            answers = [answered[c.name] if c.name in answered else next(fresh) for c in self.checks]
        verdicts: dict[str, Verdict] = {}
        exchanges: list[JudgeExchange] = []
        for c, names, (answer, asked) in zip(self.checks, self._records, answers, strict=True):
            exchanges += asked
            if len(names) == 1 and type(answer) is Verdict:
                verdicts[names[0]] = answer
            else:
                verdicts.update(c.spread(answer, names))
        if self.order:  # the suite's order, as the single checks would have given it
            verdicts = {n: verdicts[n] for n in self.order if n in verdicts} | verdicts
        ms = latency_ms if latency_ms is not None else case.total_latency_ms()
        return self._result(case, verdicts, repeat, index, ms, body, tuple(exchanges))

    def _errored(
        self, case: Case, repeat: int, index: int, ms: float | None, body: bytes | None
    ) -> CaseResult:
        """A recorded run that failed (``case.error``): errored as an agent failure is, with
        no verdict, its tokens still counted."""
        ms = ms if ms is not None else case.total_latency_ms()
        held = case if body is None else None
        usage = trace_usage(case.trace)
        return CaseResult(case.id, repeat, {}, {}, ms, case.error, index, usage, held, body)

    def _result(
        self,
        case: Case,
        verdicts: dict[str, Verdict],
        repeat: int,
        index: int,
        ms: float | None,
        body: bytes | None,
        exchanges: tuple[JudgeExchange, ...],
    ) -> CaseResult:
        results = {r.name: score_rubric(r, verdicts, case) for r in self.rubrics}
        usage = trace_usage(case.trace)
        # with its line at hand, the result does not hold the parsed case: buffered results
        # would keep thousands of objects alive for the collector to walk, again and again
        # (CaseResult.case parses the line when read); tuple.__new__ skips the NamedTuple's
        # Python-level __new__ (once per case)
        held = case if body is None else None
        return _new(
            CaseResult,
            (case.id, repeat, verdicts, results, ms, None, index, usage, held, body, exchanges),
        )


def with_judge(
    checks: Sequence[NamedCheck],
    judge: JudgeModel | None,
    *,
    batch: bool = False,
    graded_weights: Mapping[str, float] | None = None,
) -> tuple[NamedCheck, ...]:
    """The checks with every judge check asking ``judge`` (unchanged when it is None).

    With ``batch`` the yes/no questions (``type: judge``) become one check that asks them in
    one checklist call per case and answers each by its name; ``graded_weights`` overrides
    metric weights of every graded check for this run.
    """
    if judge is None:
        return tuple(checks)
    weights = graded_weights or {}
    out = [
        NamedCheck.of(c.name, reweighted(c.check, weights), c.when, judge=judge) if c.judged else c
        for c in checks
    ]
    questions = [c for c in checks if type(c.check) is JudgeCheck]
    if not batch or not questions:
        return tuple(out)
    asked = {c.name for c in questions}
    together = QuestionBatch(tuple(Question(c.name, c.check, c.when) for c in questions))
    # recorded under each question's own name (prefix ""), in the first question's place
    combined = NamedCheck.of("judge-batch", together, judge=judge, prefix="")
    first = questions[0].name
    return tuple(combined if c.name == first else c for c in out if c.name not in asked - {first})


def judge_checks(checks: Mapping[str, NamedCheck]) -> list[str]:
    """The names of the checks that need a judge."""
    return [name for name, c in checks.items() if c.judged]


Sourced = tuple[Case, bytes | None]
"""A case with the JSON it was read from (None when it was not read as one line)."""


def _jobs(
    cases: Iterable[Case] | Iterable[Sourced], repeat: int
) -> Iterator[tuple[int, int, Case, bytes | None]]:
    for index, item in enumerate(cases):
        case, body = item if type(item) is tuple else (item, None)
        for r in range(repeat):
            yield index, r, case, body


async def run_local(
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
    """The engine's loop: evaluate ``cases`` in the running event loop, each
    ``repeat`` times, ``concurrency`` at once, handing each result to ``on_result`` as it
    finishes. A case may come with the JSON it was read from (:data:`Sourced`), which its
    results then carry for the store. ``target``, when given, runs each case first (each call
    within ``target_timeout_s``). The caller owns ``target`` and the evaluator's judge: neither
    is closed here. ``on_batch``, when given, is called once the results that finished in one
    turn of the event loop were handed on (a store commits them in one transaction); like
    ``on_result``, an error it raises stops the run.

    Errors raised by the ``cases`` iterator propagate after the running cases end; an error
    raised by ``on_result`` cancels the running cases and propagates. Cancelling the awaiting
    task cancels the running cases.

    Raises:
        Interrupted: ``stop`` was requested: no case started after it, the running ones were
            cancelled (a sync agent's thread is abandoned), every finished one was handed on.
    """
    if repeat < 1:
        raise ValueError("repeat must be >= 1")
    token = stop if stop is not None else StopToken()
    with older_objects_frozen():
        if target is None and not evaluator.needs_async:
            await _evaluate_in_slices(evaluator, _jobs(cases, repeat), on_result, token)
            return
        agent = _Agent(target, target_timeout_s) if target is not None else None
        await _run_async(evaluator, cases, on_result, agent, repeat, concurrency, token, on_batch)


Job = tuple[int, int, Case, bytes | None]


def _evaluate_in_order(
    evaluator: Evaluator, jobs: Iterator[Job], on_result: OnResult, stop: StopToken
) -> int:
    """Score recorded cases with sync checks one after another (the fast path)."""
    done = 0
    for index, r, case, body in jobs:
        if stop.requested:  # one attribute read per case: the fast path stays fast
            raise Interrupted(stop.reason)
        on_result(evaluator.evaluate(case, repeat=r, index=index, body=body))
        done += 1
    return done


_SLICE = 256
"""Recorded cases scored between two yields to the event loop, when a caller's loop runs us."""


async def _evaluate_in_slices(
    evaluator: Evaluator, jobs: Iterator[Job], on_result: OnResult, stop: StopToken
) -> None:
    # the fast path inside someone else's loop: give it a turn every slice, so a server
    # stays responsive while a large file is scored
    while _evaluate_in_order(evaluator, itertools.islice(jobs, _SLICE), on_result, stop):
        await asyncio.sleep(0)


_POLL_S = 0.25
"""How often the event loop looks at the stop flag, should a signal's wake-up not reach it."""


async def _run_async(
    evaluator: Evaluator,
    cases: Iterable[Case] | Iterable[Sourced],
    on_result: OnResult,
    agent: _Agent | None,
    repeat: int,
    concurrency: int,
    stop: StopToken,
    on_batch: Callable[[], None] | None = None,
) -> None:
    jobs = _jobs(cases, repeat)
    failure: list[BaseException] = []
    loop = asyncio.get_running_loop()
    unbatched = [0]  # results handed on since on_batch was last called

    async def worker() -> None:
        while not failure and not stop.requested:
            try:
                index, r, case, body = next(jobs)
            except StopIteration:
                return
            except Exception as exc:  # noqa: BLE001 - re-raised after the running cases end
                failure.append(exc)
                return
            # a cancellation lands on an await, never between a finished case and on_result
            result = await evaluate_case(
                evaluator,
                case,
                target=agent.target if agent is not None else None,
                timeout_s=agent.timeout_s if agent is not None else None,
                repeat=r,
                index=index,
                body=body,
            )
            if failure:  # the handler failed meanwhile (the store is gone): hand on no more
                return
            try:
                on_result(result)
            except Exception as exc:  # noqa: BLE001 - e.g. the store failed: stop everything
                failure.append(exc)
                pool.cancel()
                return
            if on_batch is None:
                continue
            unbatched[0] += 1
            # let the other cases that finished in this turn of the loop hand theirs on, then
            # end the batch (one commit for all) before this worker starts another agent call
            await asyncio.sleep(0)
            if unbatched[0] and not failure:
                unbatched[0] = 0
                try:
                    on_batch()
                except Exception as exc:  # noqa: BLE001 - e.g. the store failed: stop everything
                    failure.append(exc)
                    pool.cancel()
                    return

    async def workers() -> None:
        await asyncio.gather(*(worker() for _ in range(max(1, concurrency))))

    # the cases run in a task of their own, so a stop cancels them, never the caller's task
    pool: asyncio.Task[None] = asyncio.ensure_future(workers())

    def poll() -> None:
        if stop.requested:
            pool.cancel()
        else:
            timer[0] = loop.call_later(_POLL_S, poll)

    timer = [loop.call_later(_POLL_S, poll)]
    stop.attach(pool)
    try:
        await asyncio.shield(pool)
    except asyncio.CancelledError:
        if not pool.done():  # the caller was cancelled: so are the cases, and it ends here
            pool.cancel()
            await asyncio.gather(pool, return_exceptions=True)
            raise
        if failure:
            raise failure[0] from None
        if stop.requested:
            raise Interrupted(stop.reason) from None
        raise
    finally:
        stop.detach()
        timer[0].cancel()
    if failure:
        raise failure[0]
    stop.raise_if_requested()


class _Agent(NamedTuple):
    target: Target
    timeout_s: float | None


async def close_target(target: Target) -> None:
    """Close ``target``; one that fails to close (a dead connection pool) changes no result."""
    try:
        await target.aclose()
    except Exception:  # noqa: BLE001 - every result is in; closing cannot change them
        return


async def evaluate_case(
    evaluator: Evaluator,
    case: Case,
    *,
    target: Target | None = None,
    timeout_s: float | None = None,
    repeat: int = 0,
    index: int = 0,
    body: bytes | None = None,
) -> CaseResult:
    """One execution of one case, as every run makes it: the agent ``target`` (when given)
    runs the case within ``timeout_s``, then ``evaluator`` scores what it did. An agent that
    fails makes the case errored, holding the input it was given. The runs and
    :mod:`checkweigh.testing` score each case through this one function."""
    if target is None:
        return await evaluator.aevaluate(case, repeat=repeat, index=index, body=body)
    try:
        ran, ms = await timed(target, TargetRequest(case, repeat), timeout_s)
    except AgentFailure as exc:
        # the case the agent was given (with a conversation's turns so far), so the failure
        # can be read beside its input
        held, raw = failed_case(exc, case, body)
        return CaseResult(case.id, repeat, {}, {}, None, str(exc), index, None, held, raw)
    ms = ran.latency_ms if ran.latency_ms is not None else ms
    answered = ran.answered if type(ran) is CheckedRun else None
    result = await evaluator.aevaluate(
        ran_case(case, ran), repeat=repeat, index=index, latency_ms=ms, answered=answered
    )
    if ran.usage is not None:
        u = ran.usage
        result = result._replace(usage=CaseUsage(u.input_tokens, u.output_tokens, u.cost_usd))
    return result


def ran_case(case: Case, ran: AgentRun) -> Case:
    """``case`` with the trace and final state the agent gave."""
    update = {"trace": ran.trace, "final_state": ran.final_state, "error": None}
    return case.model_copy(update=update)
