"""A run's request checked and turned into its parts, in one place and one order, so that
``checkweigh run``, :func:`checkweigh.arun` and any server refuse the same request with the
same one-line message naming the flag (or the file and line)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from ..core import PassMode, PassPolicy
from ..errors import InputError
from ..judges import (
    MAX_WINDOW,
    CachedJudge,
    CacheMode,
    GradedJudgeCheck,
    JudgeCache,
    JudgeModel,
    JudgeOptions,
    MeteredJudge,
    Prices,
    batch_backend_of,
    cache_dir,
    make_judge,
)
from ..suites import Suite, check_conversations, load_suite
from ._agent_source import check_agent_flags
from ._batched import BatchSettings
from ._engine import judge_checks
from ._options import JudgeSetup, RunOptions, Thresholds
from .executors import Executor, make_executor
from .targets import check_record_dir, read_manifest


@dataclass
class RunPlan:
    """A checked request: the loaded suite and the parts the run is made of."""

    suite: Suite
    """The suite, reading the options' cases file when one was given."""
    judge: JudgeModel | None
    """The judge the judge checks ask (None: they are skipped)."""
    owns_judge: bool
    """Whether the run built the judge (and so closes it)."""
    graded_weights: dict[str, float]
    """Graded metrics' weights for this run."""
    policy: PassPolicy
    """The suite's pass policy with the options' overrides."""
    executor: Executor
    """Where the cases are evaluated."""
    total: int | None
    """Executions the run will make (cases x repeats), when the cases were counted."""
    screened: bool
    """Whether every case was validated before the run (else a bad one stops it)."""
    batch: BatchSettings | None = None
    """How the judge calls go through the provider's batch API (None: sync calls)."""


def plan_run(
    suite: Suite | str | Path,
    options: RunOptions,
    *,
    judge: JudgeModel | None,
    executor: Executor | None = None,
    cases_given: bool,
) -> RunPlan:
    """Check ``options`` against ``suite`` and build the run's parts: load the suite, check
    the agent flags, make the judge, the weights, the policy and the executor, then screen
    the cases, in this order. :func:`~checkweigh.runs.arun` does this first; a server may
    call it alone to refuse a request before it starts a run.

    Raises:
        InputError: bad input, in one line naming the flag (or the file) and what was expected.
    """
    loaded = _load(suite, options, cases_given=cases_given)
    check_agent_flags(loaded, options.record_agent, options.replay_agent)
    if options.replay_agent is not None:  # the calls are read when the run starts
        read_manifest(options.replay_agent)
    if options.record_agent is not None:
        check_record_dir(options.record_agent)
    owns = judge is None and options.judge.spec is not None
    if judge is not None and options.judge.spec is not None:
        raise InputError(
            "a judge is given both as an object and as a spec: give one", field="judge"
        )
    if judge is None:
        judge = _judge(options.judge, loaded)
    weights = graded_weights(options.graded_weights, loaded)
    policy = _policy(loaded, options.thresholds)
    batch = _batch(options, loaded, judge, executor)
    # before the cases file is screened: worker processes start meanwhile (--workers)
    executor = make_executor(options, loaded, given=executor)
    asks_judge = judge is not None and bool(judge_checks(loaded.checks))
    # an executor that validates every case as it scores it counts them without reading
    # them; a bad case then stops the run, which keeps nothing (see checkweigh.runs.arun)
    counted = None if cases_given else executor.counts_cases(loaded, asks_judge=asks_judge)
    screened = options.screen and counted is None and not cases_given
    if screened:
        counted = loaded.cases.count()
    if options.replay_agent is None and not cases_given:  # a replay reads them back
        check_conversations(loaded, judge=judge is not None)
    total = None
    if counted is not None:
        total = counted * (options.repeat or loaded.repeats)
        if total == 0:
            raise InputError("the cases file holds no cases", file=loaded.cases_path)
    return RunPlan(loaded, judge, owns, weights, policy, executor, total, screened, batch)


DEFAULT_POLL_S = 30.0
"""Seconds between two polls of a batch: a provider takes minutes to hours to answer one."""


def _batch(
    options: RunOptions, suite: Suite, judge: JudgeModel | None, executor: Executor | None
) -> BatchSettings | None:
    """The run's batch settings (``--judge-mode``, ``judge: {mode}``), checked."""
    setup, flag = options.judge, "--judge-mode"
    block = suite.spec.judge.batch_settings() if suite.spec.judge else {}
    if (setup.mode or block.get("mode", "sync")) != "batch":
        if options.resume is not None:
            raise InputError(
                "only a run judged in batch mode resumes: give --judge-mode batch too",
                field="--resume",
            )
        return None
    if judge is None:
        raise InputError("batch mode sends the judge checks' calls: give --judge too", field=flag)
    if suite.target is not None and options.replay_agent is None:
        raise InputError(
            "batch mode judges recorded cases only, and this suite runs a live agent (target:): "
            "use --judge-mode sync, or replay a recording (--replay-agent)",
            field=flag,
        )
    local = executor.name == "local" if executor is not None else options.executor == "local"
    if not local or options.workers > 1:
        raise InputError(
            "batch mode evaluates the cases in this process: drop --executor and --workers",
            field=flag,
        )
    backend = batch_backend_of(judge)
    if backend is None:
        raise InputError(
            f"the judge {judge.name} has no batch API; batch mode needs an openai: or "
            "anthropic: judge (use --judge-mode sync)",
            field=flag,
        )
    poll_s = setup.poll_s if setup.poll_s is not None else block.get("poll_s", DEFAULT_POLL_S)
    if not (poll_s > 0 and math.isfinite(poll_s)):  # NaN fails every >
        raise InputError(f"expected seconds > 0, got {poll_s:g}", field="--judge-poll")
    retry = setup.retry_sync if setup.retry_sync is not None else block.get("retry_sync", False)
    return BatchSettings(backend, float(poll_s), bool(retry))


def _load(suite: Suite | str | Path, options: RunOptions, *, cases_given: bool) -> Suite:
    if isinstance(suite, Suite):
        loaded = suite
    else:
        # a replay calls no agent: it need not be importable (nor reachable, nor installed);
        # with other cases, the suite's own file need not exist
        loaded = load_suite(
            Path(suite),
            load_agent=options.replay_agent is None,
            own_cases=options.cases is None and not cases_given,
        )
    if options.cases is not None or options.on_bad_record is not None:
        if cases_given:
            raise InputError("cases are given: drop the cases file option", field="--cases")
        loaded = loaded.with_cases(options.cases, options.on_bad_record)
    return loaded


def _judge(setup: JudgeSetup, suite: Suite) -> CachedJudge | None:
    prices = parse_prices(setup.prices)
    block = suite.spec.judge.settings() if suite.spec.judge else None
    options = JudgeOptions.build(
        block,
        timeout_s=setup.timeout_s,
        retries=setup.retries,
        deadline_s=setup.deadline_s,
        format=setup.format,
        concurrency=setup.concurrency,
    )
    return make_cached_judge(
        setup.spec,
        no_cache=setup.no_cache,
        replay=setup.replay,
        options=options,
        prices=prices,
        budget_usd=_budget(setup.budget_usd, prices),
    )


def _budget(budget: float | None, prices: Prices | None) -> float | None:
    if budget is None:
        return None
    if not (budget >= 0 and math.isfinite(budget)):  # NaN fails every >=
        raise InputError(f"expected US dollars >= 0, got {budget:g}", field="--judge-budget")
    if prices is None:
        raise InputError(
            "a budget needs the judge's prices to count the cost: give --judge-prices too",
            field="--judge-budget",
        )
    return budget


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
    """``INPUT,OUTPUT[,CACHED_INPUT[,CACHE_WRITE]]`` USD per million tokens
    (``--judge-prices``), checked; the prompt cache's rates left out are the provider's
    usual ones, filled in once the judge is known."""
    if text is None:
        return None
    parts = text.split(",")
    try:
        if not 2 <= len(parts) <= 4:
            raise ValueError(text)
        rates = [float(x) for x in parts]
    except ValueError:
        raise InputError(
            "expected INPUT,OUTPUT[,CACHED_INPUT[,CACHE_WRITE]] USD per million tokens, "
            f"e.g. 0.15,0.6; got {text!r}",
            field="--judge-prices",
        ) from None
    if not (all(r >= 0 for r in rates) and math.isfinite(sum(rates))):  # NaN fails every >=
        raise InputError(f"prices must be finite and >= 0, got {text!r}", field="--judge-prices")
    cached = rates[2] if len(rates) > 2 else None
    write = rates[3] if len(rates) > 3 else None
    return Prices(rates[0], rates[1], cached, write)


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
    budget_usd: float | None = None,
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
    # no concurrency given and not a one-request local server: find the provider's limit
    adaptive = options.concurrency is None
    options, reason = options.settle(model)
    adaptive = adaptive and reason is None
    metered = MeteredJudge(
        model,
        concurrency=MAX_WINDOW if adaptive else options.limit,
        adaptive=adaptive,
        prices=prices,
        options=options,
        concurrency_reason=reason,
        budget_usd=budget_usd,
    )
    return CachedJudge(metered, JudgeCache(cache_dir()), mode)
