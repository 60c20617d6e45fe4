"""One run from start to end: snapshot, evaluate, persist as cases finish, summarize.

Whatever stops a run early (Ctrl-C, SIGTERM, a bad case in the file, a failed write) leaves
every finished case stored (as far as the database takes it) and the run marked incomplete.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._process import refuse_process_exit
from ..checks import unheld_note
from ..core import (
    CONFIG_VERSION,
    Case,
    CaseResult,
    CheckCalibration,
    GateMetric,
    PassPolicy,
    RunAggregator,
    RunConfig,
    RunSummary,
    UnheldPath,
    apply_gates,
    calibrated_tcr,
)
from ..errors import CheckweighError, StoreError
from ..judges import (
    DEFAULT_CONCURRENCY,
    NO_JUDGE_HINT,
    BatchCollector,
    CachedJudge,
    JudgeModel,
    MeteredJudge,
    judge_notes,
    judge_settings,
)
from ..store import (
    Handoff,
    ResultWriter,
    Rows,
    RunStatus,
    Store,
    calibrate_run,
    gate_specs,
)
from ..suites import Suite
from ._agent_source import RunAgent, run_agent
from ._batched import BatchSettings, OnNote, collecting, judge_in_batches, reopen_checked
from ._engine import Evaluator, close_target, judge_checks
from ._stop import Interrupted, StopToken
from .executors import LOCAL, Executor, Stored, Work, WorkerSpec

OnProgress = Callable[[int, int], None]
"""Called with (executions stored, of them errored) as worker processes store results."""


class RunStopped(CheckweighError):
    """A run that ended early. It was stored as incomplete; ``cause`` says why."""

    def __init__(self, outcome: RunOutcome, cause: BaseException) -> None:
        super().__init__(f"run {outcome.run_id} stopped: {cause!r}")
        self.outcome = outcome
        self.cause = cause


@dataclass(frozen=True)
class RunOutcome:
    """How a run ended."""

    run_id: str
    status: RunStatus
    summary: RunSummary
    kept: int
    """Results the store holds for the run, counted there once the run ended."""


def refuse_inside_loop(sync: str, awaitable: str) -> None:
    """Say what to do instead when a sync entry point is called where a loop runs (a notebook,
    a server): asyncio's own error names neither."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise RuntimeError(
        f"checkweigh.{sync}() cannot run inside a running event loop (a notebook, a server); "
        f"await checkweigh.{awaitable}(...) there instead"
    )


async def drive(
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
    on_start: Callable[[str], None] | None = None,
    batch: BatchSettings | None = None,
    resume: str | None = None,
    on_note: OnNote | None = None,
) -> RunOutcome:
    """The run itself, its parts already checked (see :func:`checkweigh.runs.arun`): build
    the agent, create the run in ``store``, evaluate the cases on ``executor``, store each
    result as it finishes and return the gated summary. The caller owns ``judge``; the agent
    is built and closed here. ``on_start`` is called with the run's id once it is created.
    With ``batch``, the judge calls go through the provider's batch API (``on_note`` hears
    each poll); ``resume`` finishes that stopped run instead of creating one.

    Raises:
        RunStopped: anything that ended the run early, raised after the finished cases were
            stored (as far as the database allowed) and the run marked incomplete.
    """
    executor = executor or LOCAL
    agent = executor.agent(suite, judge) or run_agent(
        suite,
        record=record_agent,
        replay=replay_agent,
        judge=judge,
        checkweigh_version=_checkweigh_version(),
    )
    collector, asked = collecting(judge, batch)
    try:
        return await _execute(
            suite,
            store,
            agent,
            cases=cases,
            repeat=repeat or suite.repeats,
            concurrency=concurrency,
            on_result=on_result,
            on_progress=on_progress,
            judge=judge,
            judge_batch=judge_batch,
            graded_weights=graded_weights,
            policy=policy,
            stop=stop,
            executor=executor,
            on_start=on_start,
            asked=asked,
            batch=None if collector is None or batch is None else (collector, batch, on_note),
            resume=resume,
        )
    finally:
        if collector is not None and isinstance(judge, CachedJudge):
            judge.judge = collector.judge  # the caller's judge, as it was given
        if agent.target is not None:
            await close_target(agent.target)


async def _execute(
    suite: Suite,
    store: Store,
    agent: RunAgent,
    *,
    cases: Iterable[Case] | None,
    repeat: int,
    concurrency: int | None,
    on_result: Callable[[CaseResult], None] | None,
    on_progress: OnProgress | None,
    judge: JudgeModel | None,
    judge_batch: bool,
    graded_weights: Mapping[str, float] | None,
    policy: PassPolicy | None,
    stop: StopToken | None,
    executor: Executor,
    on_start: Callable[[str], None] | None,
    asked: JudgeModel | None,
    batch: tuple[BatchCollector, BatchSettings, OnNote | None] | None,
    resume: str | None,
) -> RunOutcome:
    target = agent.target
    evaluator = Evaluator.from_suite(suite, asked, batch=judge_batch, graded_weights=graded_weights)
    policy = policy or suite.policy
    aggregator = RunAggregator(suite.rubrics, keep_case_scores=repeat > 1, policy=policy)
    notes = agent.notes + _notes(suite, judge, judge_batch)
    if cases is not None:
        notes.append("cases given by the caller, not read from the suite's cases file")

    snapshot = run_config(
        suite,
        judge=judge,
        judge_batch=judge_batch,
        graded_weights=graded_weights,
        policy=policy,
        agent_source=agent.source,
        batch_api=batch is not None,
    )
    if resume is not None:
        run_id = reopen_checked(store, resume, snapshot)
    else:
        run_id = store.create_run(suite.name, str(suite.path), snapshot, repeat)
    source = suite.cases
    tally = source.context()  # what the import skipped, for the report

    def summarize() -> RunSummary:
        calibrated = _calibration(store, run_id, suite)
        summary = aggregator.summary().model_copy(update={"calibration": calibrated})
        if calibrated:
            summary = _with_calibrated_tcr(summary, suite)
        summary = apply_gates(summary, suite.gates)
        meter = asked if isinstance(asked, BatchCollector) else judge  # batch counts with it
        counted = meter if isinstance(meter, CachedJudge | MeteredJudge | BatchCollector) else None
        stats = counted.stats() if counted is not None else None
        unheld = evaluator.watch.unheld()
        told = notes + [unheld_note(k) for k in unheld] + source.notes(tally) + judge_notes(judge)
        told += [note for c in calibrated for note in c.notes()]
        paths = [UnheldPath(check=c, field=f, path=p) for c, f, p in unheld]
        return summary.model_copy(update={"notes": told, "judge": stats, "unheld_paths": paths})

    # ``concurrency`` (--concurrency, else the target's) bounds agent calls only; recorded
    # cases are admitted as the judge's pool takes them (its own limit bounds the judge
    # calls), so that the pool stays full while memory stays bounded
    if target is not None:
        limit = concurrency or (suite.target.concurrency if suite.target else 8)
    else:
        limit = admitted(judge)

    def stored(batch: list[CaseResult]) -> None:
        for result in batch:
            aggregator.add(result)

    # the summary counts what the store committed, so a failed write cannot make it claim more;
    # an agent's result costs far more than a commit: write each as it finishes (with the
    # others that finished in the same turn of the event loop), so that even a crash of the
    # process (kill -9, a segfaulting agent) loses none of them
    writer = ResultWriter(store, run_id, max_delay_s=0.5, on_written=stored)
    # worker processes may store their chunks themselves, and send only their aggregates
    # (which the aggregator merges exactly for runs without repeats)
    stores_in_workers = repeat == 1 and (on_result is None or on_progress is not None)
    sink = _RunSink(
        store,
        run_id,
        writer,
        aggregator,
        on_result,
        on_progress,
        store.handoff(run_id, workers_store=stores_in_workers),
    )
    try:
        if on_start is not None:  # inside: a caller's error here still ends the run stored
            on_start(run_id)
        work = Work(
            evaluator=evaluator,
            cases=source.iter_sourced(tally) if cases is None else cases,
            source=source if cases is None else None,
            spec=WorkerSpec.of(suite, evaluator, with_agent=target is not None, policy=policy),
            target=target,
            target_timeout_s=agent.timeout_s,
            repeat=repeat,
            concurrency=limit,
            stop=stop,
            asks_judge=judge is not None and bool(judge_checks(suite.checks)),
        )
        with refuse_process_exit(), store.writing():  # an agent's os._exit(): its case's error
            if batch is None:
                notes += await executor.run(work, sink)
            else:
                notes += await judge_in_batches(work, sink, store, run_id, *batch)
        writer.flush()
        summary = summarize()
        kept = store.finish_run(run_id, RunStatus.COMPLETE, summary)
    except asyncio.CancelledError:
        # the caller's task was cancelled (not a stop request): keep what finished, and let the
        # cancellation go on as asyncio expects
        _stop_early(store, run_id, writer, summarize, "cancelled")
        raise
    except BaseException as exc:
        outcome = _stop_early(store, run_id, writer, summarize, _why(exc))
        raise RunStopped(outcome, exc) from exc
    return RunOutcome(run_id, RunStatus.COMPLETE, summary, kept)


def run_config(
    suite: Suite,
    *,
    judge: JudgeModel | None,
    judge_batch: bool,
    graded_weights: Mapping[str, float] | None,
    policy: PassPolicy,
    agent_source: Any,
    batch_api: bool = False,
) -> dict[str, Any]:
    """The configuration snapshot a run is stored with (what it evaluated, and how), as JSON:
    the suite's checks, rubrics and versions, the judge and its options, the thresholds and
    gates. A monitor's windows are stored with the same."""
    config = RunConfig.model_validate(
        {
            **suite.snapshot(),
            "schema_version": CONFIG_VERSION,
            "checkweigh_version": _checkweigh_version(),
            "judge": judge.name if judge is not None else None,
            "judge_mode": "batch" if judge_batch else "single",
            "judge_options": judge_settings(judge),
            "graded_weights": dict(graded_weights or {}),
            "thresholds": policy.snapshot(),
            "gate_specs": gate_specs(suite.gates),
            "agent_source": agent_source,
            **({"judge_api": "batch"} if batch_api else {}),
        }
    )
    snapshot: dict[str, Any] = config.model_dump(mode="json")
    return snapshot


def _calibration(store: Store, run_id: str, suite: Suite) -> list[CheckCalibration]:
    """The suite's judge checks against the labels in the store, as they stand now (a gate
    on a calibrated rate always has its check's figures)."""
    named = {g.check for g in suite.gates if g.metric is GateMetric.CALIBRATED_PASS_RATE}
    if not any(c.judged for c in suite.checks.values()):
        return []
    return calibrate_run(store, store.get_run(run_id), include={n for n in named if n})


def _with_calibrated_tcr(summary: RunSummary, suite: Suite) -> RunSummary:
    required = {r.name: {i.check for i in r.items if i.required} for r in suite.rubrics}
    rubrics = []
    for r in summary.rubrics:
        value, why = calibrated_tcr(r, required.get(r.rubric, ()), summary.calibration)
        rubrics.append(r.model_copy(update={"calibrated_tcr": value, "calibrated_tcr_note": why}))
    return summary.model_copy(update={"rubrics": rubrics})


class _RunSink:
    """The run's :class:`~checkweigh.runs.executors.Sink`: results into the store's writer
    and the aggregator, and on to the caller's ``on_result`` / ``on_progress``."""

    def __init__(
        self,
        store: Store,
        run_id: str,
        writer: ResultWriter,
        aggregator: RunAggregator,
        on_result: Callable[[CaseResult], None] | None,
        on_progress: OnProgress | None,
        handoff: Handoff | None,
    ) -> None:
        self._store, self._run_id, self._writer = store, run_id, writer
        self._aggregator, self._on_result, self._on_progress = aggregator, on_result, on_progress
        self.handoff = handoff
        self.flush = writer.flush

    def add(self, result: CaseResult) -> None:
        self._writer.add(result)
        if self._on_result is not None:
            self._on_result(result)

    def add_rows(self, results: list[CaseResult], rows: Rows) -> None:
        self._writer.add_rows(results, rows)
        if self._on_result is not None:
            for result in results:
                self._on_result(result)

    def add_stored(self, stored: Stored) -> None:
        self._store.check_file()  # a worker would go on writing into a deleted file
        self._aggregator.merge(
            stored.part, stored.case_ids, stored.latencies, new_ids=stored.new_ids
        )
        self._writer.stored_elsewhere(len(stored.case_ids))
        if self._on_progress is not None:
            tally = stored.part.cases
            self._on_progress(len(stored.case_ids), tally.errored if tally is not None else 0)

    def discard(self, start: int) -> None:
        self._store.discard_results(self._run_id, start)


ADMITTED_PER_SLOT = 4
"""Recorded cases in flight per judge slot: a case asks its judge checks in turn, and some
cases are between calls (scoring, storing) at any moment."""
MAX_ADMITTED = 1024
"""Recorded cases in flight at the most, whatever the judge's limit (memory stays flat)."""


def admitted(judge: JudgeModel | None) -> int:
    """How many recorded cases a run evaluates at once: enough to keep every slot of the
    judge's pool busy (``--judge-concurrency``), at least 64, at most :data:`MAX_ADMITTED`."""
    inner = judge.judge if isinstance(judge, CachedJudge) else judge
    slots = inner.concurrency if isinstance(inner, MeteredJudge) else DEFAULT_CONCURRENCY
    return min(MAX_ADMITTED, max(64, ADMITTED_PER_SLOT * slots))


def _checkweigh_version() -> str:
    import checkweigh  # the package's own version; at call time, so no import cycle

    return checkweigh.__version__


def _why(exc: BaseException) -> str:
    """What stopped a run, in a few words, for its undecided gates."""
    if isinstance(exc, Interrupted):
        return f"interrupted ({exc})"
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted"
    return f"stopped by an error ({type(exc).__name__})"


def _stop_early(
    store: Store,
    run_id: str,
    writer: ResultWriter,
    summarize: Callable[[], RunSummary],
    why: str,
) -> RunOutcome:
    """Store what can be stored and mark the run incomplete, its gates not decided; the outcome
    says what was kept.

    A database that fails again here (full, read-only, gone) is reported by the caller through
    the first error; the count then is what was written before it failed.
    """
    try:
        writer.flush()
        summary = summarize()
    except StoreError:  # the first failure is the one reported; the note says what it cost
        lost = f"{writer.pending} finished execution(s) could not be stored and are not counted"
        summary = summarize()
        summary = summary.model_copy(update={"notes": [*summary.notes, lost]})
    summary = summary.undecided(
        f"the run is incomplete: {why} before every case finished; its gates were measured on "
        f"the {summary.executions} finished execution(s) only"
    )
    try:
        kept = store.finish_run(run_id, RunStatus.INCOMPLETE, summary)
    except StoreError:  # what it wrote is still there, unless the file itself went away
        kept = 0 if store.file_lost else writer.written
    return RunOutcome(run_id, RunStatus.INCOMPLETE, summary, kept)


def _notes(suite: Suite, judge: JudgeModel | None, batch: bool) -> list[str]:
    used = Evaluator.for_rubrics(suite.checks, suite.rubrics, suite.policy.outcome_checks)
    run = {c.name for c in used.checks}
    unused = [name for name in suite.checks if name not in run]
    skipped = [n for n in judge_checks(suite.checks) if n in run] if judge is None else []
    policy = suite.policy
    shape = "the weights shape the score only"
    notes = [n for r in suite.rubrics if (n := policy.score_only(r.normalization_note(), shape))]
    if unused:
        them = ("check", "was", "it") if len(unused) == 1 else ("checks", "were", "them")
        notes.append(
            f"{them[0]} {', '.join(unused)} {them[1]} not run: no rubric weighs {them[2]} "
            f"(give {them[2]} a weight in a rubric to run {them[2]})"
        )
    if judge is not None and judge_checks(suite.checks):
        notes.append(
            "judge mode: batch (the yes/no judge checks of a case share one checklist call)"
            if batch
            else "judge mode: single (one call per judge check)"
        )
    if skipped:
        notes.append(
            f"judge checks {', '.join(skipped)} were skipped ({NO_JUDGE_HINT}); "
            "rubrics that use them are renormalized over the checks that ran"
        )
    return notes
