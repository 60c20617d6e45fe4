"""Setting up a run: a :class:`RunRequest` (what ``checkweigh run`` is asked, or a program or a
server asks) checked and turned into the ready parts, and running it.

Checking happens in one place and one order, so the CLI and any other caller refuse the same
request with the same one-line message naming the flag.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..core import CaseResult, PassMode, PassPolicy
from ..errors import CaseFileError, InputError, StoreError
from ..judges import (
    CachedJudge,
    CacheMode,
    GradedJudgeCheck,
    JudgeCache,
    JudgeOptions,
    MeteredJudge,
    Prices,
    cache_dir,
    make_judge,
)
from ..runs import RunOutcome, RunStopped, StopToken, check_agent_flags, execute, judge_checks
from ..runs.executors import Executor, ProcessExecutor
from ..runs.targets import check_record_dir, read_manifest
from ..store import Store, database_file, in_memory
from ..suites import Suite, check_conversations, load_suite
from ._exports import Exports, check_writable


class JudgeRequest(BaseModel):
    """The judge of a run (``--judge`` and the ``--judge-*`` flags); unset fields keep the
    suite's ``judge:`` block or the defaults."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    spec: str | None = None
    """PROVIDER:MODEL, e.g. ``ollama:llama3.1`` (None: no judge)."""
    no_cache: bool = False
    """Bypass the judge cache."""
    replay: bool = False
    """Answer from the cache only; a miss errors."""
    concurrency: Annotated[int, Field(ge=1, le=1024)] | None = None
    """Judge calls at once."""
    timeout_s: float | None = None
    """Seconds per attempt."""
    retries: int | None = None
    """Retries per call."""
    deadline_s: float | None = None
    """Seconds one call may take, retries included."""
    format: str | None = None
    """Structured output: auto, json_schema, json_object or prompt."""
    batch: bool = False
    """One checklist call per case for the yes/no checks."""
    prices: str | None = None
    """USD per million tokens as ``INPUT,OUTPUT`` (e.g. ``0.15,0.6``), for the cost."""


class Thresholds(BaseModel):
    """This run's overrides of the suite's pass thresholds (0-100; None keeps the suite's)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    pass_threshold: float | None = None
    """The score a case without expected outcomes needs (``--pass-threshold``)."""
    metrics_threshold: float | None = None
    """The mean case score the run needs (``--metrics-threshold``)."""
    cases_threshold: float | None = None
    """The percentage of executions that must pass (``--cases-threshold``)."""


class RunRequest(BaseModel):
    """Everything that describes one run of a suite, as ``checkweigh run`` takes it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    suite: Path
    """The suite file (YAML)."""
    cases: Path | None = None
    """A cases file read instead of the suite's (in the suite's format)."""
    on_bad_record: Literal["skip", "fail"] | None = None
    """A log record that cannot be read: stop, or skip and report it (None: the suite's)."""
    db: str | None = None
    """SQLAlchemy URL of the store (None: ``$CHECKWEIGH_DB`` or the default file)."""
    repeat: Annotated[int, Field(ge=1, le=10_000)] | None = None
    """Executions of each case (None: the suite's ``repeats``, default 1)."""
    concurrency: Annotated[int, Field(ge=1, le=1024)] | None = None
    """Cases at once (agent targets)."""
    judge: JudgeRequest = JudgeRequest()
    """The judge for the judge checks."""
    graded_weights: tuple[str, ...] = ()
    """``METRIC=WEIGHT`` items for the graded checks, this run only (0 drops a metric)."""
    thresholds: Thresholds = Thresholds()
    """Threshold overrides."""
    exports: Exports = Exports()
    """Files to write once the run is stored."""
    record_agent: Path | None = None
    """A folder to record every agent call into (``--record-agent``)."""
    replay_agent: Path | None = None
    """A recording to answer the agent calls from, with no agent running
    (``--replay-agent``)."""
    workers: Annotated[int, Field(ge=1, le=256)] = 1
    """Worker processes scoring recorded cases (``--workers``; 1: in this process)."""
    executor: Literal["local", "ray"] = "local"
    """Where cases are evaluated (``--executor``): this machine, or a Ray cluster."""
    ray_address: str | None = None
    """The Ray cluster to join (``--ray-address``; None: Ray's own default)."""


@dataclass
class PreparedRun:
    """A checked :class:`RunRequest`: the loaded suite, its judge, policy and open store."""

    request: RunRequest
    """The request it was built from."""
    suite: Suite
    """The suite, reading the request's cases file when one was given."""
    judge: CachedJudge | None
    """The judge behind its cache (None: no judge)."""
    graded_weights: dict[str, float]
    """Graded metrics' weights for this run."""
    policy: PassPolicy
    """The suite's pass policy with the request's overrides."""
    total: int
    """Executions the run will make (cases x repeats)."""
    store: Store
    """The store the run is written to."""
    executor: Executor | None = None
    """Where the cases are evaluated (None: in this process)."""
    screened: bool = True
    """Whether every case was validated before the run (else its workers validate them as
    they score them, and a bad one refuses the run)."""


def prepare_run(request: RunRequest) -> PreparedRun:
    """Check ``request`` and build its parts: load the suite, make the judge, apply the
    thresholds, check the export files and open the store, in this order.

    Raises:
        InputError: bad input, in one line naming the flag (or the file) and what was expected.
        StoreError: the database cannot be opened.
    """
    j = request.judge
    prices = parse_prices(j.prices)
    # a replay calls no agent: it need not be importable (nor reachable, nor installed)
    suite = load_suite(
        request.suite,
        load_agent=request.replay_agent is None,
        own_cases=request.cases is None,  # --cases: the suite's own file need not exist
    )
    if request.cases is not None or request.on_bad_record is not None:
        suite = suite.with_cases(request.cases, request.on_bad_record)
    check_agent_flags(suite, request.record_agent, request.replay_agent)
    if request.replay_agent is not None:  # the calls are read when the run starts
        read_manifest(request.replay_agent)
    if request.record_agent is not None:
        check_record_dir(request.record_agent)
    block = suite.spec.judge.settings() if suite.spec.judge else None
    options = JudgeOptions.build(
        block,
        timeout_s=j.timeout_s,
        retries=j.retries,
        deadline_s=j.deadline_s,
        format=j.format,
        concurrency=j.concurrency,
    )
    judge = make_cached_judge(
        j.spec, no_cache=j.no_cache, replay=j.replay, options=options, prices=prices
    )
    weights = graded_weights(request.graded_weights, suite)
    policy = _policy(suite, request.thresholds)
    # before the cases file is screened: worker processes start meanwhile (--workers)
    executor = make_executor(request, suite)
    # workers that validate every case as they score it need no screening first: a bad case
    # stops the run, which then keeps nothing (see run_prepared)
    asks_judge = judge is not None and bool(judge_checks(suite.checks))
    if isinstance(executor, ProcessExecutor) and executor.reads_every_case(
        suite, asks_judge=asks_judge
    ):
        screen, cases = False, executor.count(suite.cases.path)
    else:
        screen, cases = True, suite.cases.count()
    if request.replay_agent is None:  # a replay holds no conversation: it reads them back
        check_conversations(suite, judge=judge is not None)
    total = cases * (request.repeat or suite.repeats)
    if total == 0:
        raise InputError("the cases file holds no cases", file=suite.cases_path)
    if in_memory(request.db):
        # e.g. sqlite:///$DB with $DB unset: "stored", then gone when the command ends
        raise InputError(
            f"{request.db or os.environ.get('CHECKWEIGH_DB')!r} is an in-memory database: the "
            "run would be lost when the command ends; give a file, e.g. sqlite:///results.db",
            field="--db",
        )
    inputs = {
        "the database": database_file(request.db),
        "the suite": request.suite,
        "the cases file": suite.cases_path,
    }
    for path, flag in request.exports.files():
        check_writable(path, flag, inputs)
    store = Store(request.db)
    return PreparedRun(request, suite, judge, weights, policy, total, store, executor, screen)


def run_prepared(
    prepared: PreparedRun,
    *,
    on_result: Callable[[CaseResult], None] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    stop: StopToken | None = None,
) -> RunOutcome:
    """Run a prepared request, storing each result as it finishes.

    Args:
        on_result: called with each finished result (progress).
        on_progress: called with (executions stored, of them errored) instead of
            ``on_result`` for results that worker processes stored themselves.
        stop: requesting it ends the run between cases (see :func:`checkweigh.runs.execute`).

    Raises:
        RunStopped: the run ended early (its finished cases stored, the run incomplete).
        CaseFileError: a bad case of a file that was not screened before the run (see
            :attr:`PreparedRun.screened`): the run was deleted, as if it had been screened.
    """
    try:
        return _execute(prepared, on_result, on_progress, stop)
    except RunStopped as exc:
        if prepared.screened or not isinstance(exc.cause, CaseFileError):
            raise
        try:
            prepared.store.delete_run(exc.outcome.run_id)
        except StoreError:
            raise exc from None  # the run stays as it was stored: incomplete
        raise exc.cause from None


def _execute(
    prepared: PreparedRun,
    on_result: Callable[[CaseResult], None] | None,
    on_progress: Callable[[int, int], None] | None,
    stop: StopToken | None,
) -> RunOutcome:
    r = prepared.request
    return execute(
        prepared.suite,
        prepared.store,
        repeat=r.repeat or prepared.suite.repeats,
        concurrency=r.concurrency,
        on_result=on_result,
        on_progress=on_progress,
        judge=prepared.judge,
        judge_batch=r.judge.batch,
        graded_weights=prepared.graded_weights,
        policy=prepared.policy,
        stop=stop,
        record_agent=r.record_agent,
        replay_agent=r.replay_agent,
        executor=prepared.executor,
    )


def make_executor(request: RunRequest, suite: Suite) -> Executor | None:
    """The executor the request asks for, checked against the suite (Ray connected here, so
    an unreachable cluster is refused before the run is created).

    Raises:
        InputError: ``--workers`` with an agent target, with Ray, or Ray flags without it, or
            Ray not installed or not reachable.
    """
    if request.ray_address is not None and request.executor != "ray":
        raise InputError("a Ray cluster is joined with --executor ray", field="--ray-address")
    if request.executor == "ray":
        if request.workers != 1:
            raise InputError(
                "Ray schedules the work on the cluster's CPUs; drop --workers", field="--workers"
            )
        for path, flag in (
            (request.record_agent, "--record-agent"),
            (request.replay_agent, "--replay-agent"),
        ):
            if path is not None:
                raise InputError(
                    "the agent's calls are recorded or replayed in this process; drop "
                    "--executor ray",
                    field=flag,
                )
        from ..runs.executors.ray import connect  # Ray only when it is asked for

        return connect(request.ray_address)
    if request.workers == 1:
        return None
    if suite.target is not None:
        raise InputError(
            f"the suite {suite.name!r} calls an agent: --workers scores recorded cases "
            "(agent calls scale with --concurrency, or across machines with --executor ray)",
            field="--workers",
        )
    return ProcessExecutor(request.workers)


def _policy(suite: Suite, t: Thresholds) -> PassPolicy:
    if t.pass_threshold is not None and suite.policy.pass_policy is PassMode.ALL_CHECKS:
        raise InputError(
            "the suite's pass_policy is all_checks, which uses no score threshold",
            field="--pass-threshold",
        )
    return suite.policy.with_thresholds(
        _percent(t.pass_threshold, "--pass-threshold"),
        _percent(t.metrics_threshold, "--metrics-threshold"),
        _percent(t.cases_threshold, "--cases-threshold"),
    )


def _percent(value: float | None, flag: str) -> float | None:
    if value is not None and not 0.0 <= value <= 100.0:
        raise InputError(f"expected a percentage from 0 to 100, got {value:g}", field=flag)
    return value


def parse_prices(text: str | None) -> Prices | None:
    """``INPUT,OUTPUT`` USD per million tokens (``--judge-prices``), checked."""
    if text is None:
        return None
    try:
        low, high = (float(x) for x in text.split(","))
    except ValueError:
        raise InputError(
            f"expected INPUT,OUTPUT USD per million tokens, e.g. 0.15,0.6; got {text!r}",
            field="--judge-prices",
        ) from None
    if not (low >= 0 and high >= 0 and math.isfinite(low + high)):  # NaN fails every >=
        raise InputError(f"prices must be finite and >= 0, got {text!r}", field="--judge-prices")
    return Prices(low, high)


def graded_weights(items: tuple[str, ...] | list[str], suite: Suite) -> dict[str, float]:
    """``METRIC=WEIGHT`` items (``--graded-weight``), checked against every graded check of
    ``suite``."""
    weights: dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            weights[name.strip()] = float(value)
        except ValueError:
            sep = ""
        if not sep or not name.strip():
            raise InputError(f"expected METRIC=WEIGHT, got {item!r}", field="--graded-weight")
    graded = [c.check for c in suite.checks.values() if isinstance(c.check, GradedJudgeCheck)]
    if weights and not graded:
        raise InputError("the suite has no graded check (type: graded)", field="--graded-weight")
    for check in graded:
        try:
            check.with_weights(weights)
        except ValueError as exc:
            raise InputError(str(exc), field="--graded-weight") from None
    return weights


def make_cached_judge(
    spec: str | None,
    *,
    no_cache: bool,
    replay: bool,
    options: JudgeOptions | None = None,
    prices: Prices | None = None,
) -> CachedJudge | None:
    """The run's judge behind its cache, from the --judge, --no-cache and --replay flags
    and the judge options (suite ``judge:`` block overridden by the --judge-* flags).

    Raises:
        InputError: a cache flag without a judge, both cache flags, or a bad judge spec.
    """
    if spec is None:
        if replay or no_cache:
            raise InputError("--replay and --no-cache apply to a judge: give --judge too")
        return None
    if replay and no_cache:
        raise InputError("--replay reads only the cache and --no-cache bypasses it: pick one")
    mode = CacheMode.REPLAY if replay else CacheMode.BYPASS if no_cache else CacheMode.USE
    options = options or JudgeOptions()
    model = make_judge(spec, options=options, offline=replay)
    options, reason = options.settle(model)
    metered = MeteredJudge(
        model, concurrency=options.limit, prices=prices, options=options, concurrency_reason=reason
    )
    return CachedJudge(metered, JudgeCache(cache_dir()), mode)
