"""A loaded monitor: its suite's evaluators (with and without the judge), the traces it takes,
how it samples them for the judge, and the snapshot its window runs are stored with."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core import CaseResult, JudgeExchange, PassPolicy, Verdict, not_applicable
from ..errors import InputError
from ..importers import TraceItems
from ..judges import JudgeModel, Prices, close_judge
from ..runs import (
    Evaluator,
    JudgeSetup,
    RunOptions,
    judge_checks,
    parse_prices,
    plan_run,
    run_config,
)
from ..suites import Suite
from ._spec import FilterSpec, MonitorError, MonitorSpec, read_monitor

SKIP_REASON = "skipped: "
"""How a judge check's verdict begins when the run had no judge for it (see checks)."""


@dataclass
class Monitor:
    """A monitor ready to score cases."""

    spec: MonitorSpec
    path: Path
    suite: Suite
    policy: PassPolicy
    judge: JudgeModel | None
    prices: Prices | None
    judged: Evaluator
    """The suite's checks, the judge checks asking the judge."""
    plain: Evaluator
    """The suite's checks with the judge checks left out (not applicable)."""
    judge_checks: tuple[str, ...]
    config: dict[str, Any]
    """The window runs' configuration snapshot."""
    rules: list[Any] = field(default_factory=list)
    """The alert rules (:class:`checkweigh.core.AlertRule`)."""
    usd_per_trace: float = 0.0
    """What judging a trace has cost on average here (a moving average): reserved from the
    dollar budget before a trace's judge calls are sent."""

    def judged_cost(self, usd: float) -> None:
        """Count what judging one trace cost into :attr:`usd_per_trace`."""
        if self.usd_per_trace == 0.0:
            self.usd_per_trace = usd
        else:
            self.usd_per_trace += 0.2 * (usd - self.usd_per_trace)

    @property
    def name(self) -> str:
        """The monitor's name."""
        return self.spec.name

    @property
    def window_s(self) -> float:
        """Its window, in seconds."""
        return self.spec.window_s

    @property
    def calls_per_trace(self) -> int:
        """The judge calls a judged trace is expected to make (reserved from the budget)."""
        if self.judge is None or not self.judge_checks:
            return 0
        return 1 if self.config.get("judge_mode") == "batch" else len(self.judge_checks)

    def window_of(self, when: float) -> tuple[float, float]:
        """The window (start, end) that time ``when`` falls in, aligned to the epoch (UTC)."""
        start = math.floor(when / self.window_s) * self.window_s
        return start, start + self.window_s

    def matches(self, items: TraceItems) -> bool:
        """Whether the trace is one the monitor scores."""
        return trace_matches(self.spec.filter, items)

    def sampled(self, trace_id: str) -> bool:
        """Whether the sampling rate puts this trace's judge checks in (the same answer in
        every process: a hash of the monitor and the trace id)."""
        rate = self.spec.sample.judge
        if rate >= 1:
            return True
        digest = hashlib.sha256(f"{self.name}\x00{trace_id}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64 < rate

    def cost(self, exchanges: Iterable[JudgeExchange]) -> tuple[int, float]:
        """The judge calls sent (cache hits cost nothing) and their dollars at the prices."""
        calls, usd = 0, 0.0
        for x in exchanges:
            if x.cached:
                continue
            calls += 1
            if self.prices is not None:
                usd += self.prices.cost(
                    x.input_tokens, x.output_tokens, x.cached_input_tokens, x.cache_write_tokens
                )
        return calls, usd

    async def close(self) -> None:
        """Close the judge it built."""
        await close_judge(self.judge)


def left_out(result: CaseResult, why: str) -> CaseResult:
    """``result`` with each judge check that was left out saying why (not applicable)."""
    verdicts: Mapping[str, Verdict] = result.verdicts
    if not any(v.reason.startswith(SKIP_REASON) for v in verdicts.values()):
        return result
    told = not_applicable(why)
    changed = {n: told if v.reason.startswith(SKIP_REASON) else v for n, v in verdicts.items()}
    return result._replace(verdicts=changed)


def _values(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _holds(attrs: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    return all(k in attrs and attrs[k] in _values(v) for k, v in wanted.items())


def trace_matches(spec: FilterSpec, items: TraceItems) -> bool:
    """Whether a trace passes a monitor's filter: the service and resource conditions hold on
    some span's resource, the span conditions on some span."""
    if not items.spans:
        return False
    if spec.service is not None or spec.resource:
        wanted: dict[str, Any] = dict(spec.resource)
        if spec.service is not None:
            wanted["service.name"] = spec.service
        if not any(_holds(s.resource, wanted) for s in items.spans):
            return False
    if spec.span:
        return any(_holds(s.attributes, spec.span) for s in items.spans)
    return True


def load_monitor(path: str | Path) -> Monitor:
    """Read a monitor file and build what it needs: its suite (relative to it), its judge
    and its alert rules.

    Raises:
        InputError: one line naming the file (the monitor's or its suite's), line and field.
    """
    path = Path(path)
    spec, lines = read_monitor(path)
    suite_path = (path.parent / spec.suite).resolve()
    setup = JudgeSetup(spec=spec.judge, prices=spec.judge_prices, no_cache=not spec.judge_cache)
    options = RunOptions(judge=setup)
    try:
        plan = plan_run(suite_path, options, judge=None, cases_given=True)
    except InputError as exc:
        if exc.file is not None:  # the suite's own error, naming its file
            raise
        raise MonitorError(
            exc.message, file=path, line=lines.line(("judge",)), field="judge"
        ) from None
    suite = plan.suite
    prices = parse_prices(spec.judge_prices) if spec.judge_prices else None
    judge = plan.judge
    rules = [_rule(path, lines, i, raw) for i, raw in enumerate(spec.alerts)]
    if spec.webhook is not None:
        _webhook(path, lines, spec.webhook)
    known = set(suite.checks) | {f"{n}.{v}" for n, c in suite.checks.items() for v in _verdicts(c)}
    for i, rule in enumerate(rules):
        if rule.check not in known:
            raise MonitorError(
                f"no check {rule.check!r} in suite {suite.name!r}; expected one of "
                f"{', '.join(sorted(suite.checks)[:8])}",
                file=path,
                line=lines.line(("alerts", i, "check")),
                field=f"alerts[{i}].check",
            )
    _settings_that_change_nothing(path, lines, spec, suite, rules)
    config = run_config(
        suite,
        judge=judge,
        judge_batch=options.judge.batch,
        graded_weights=plan.graded_weights,
        policy=plan.policy,
        agent_source=None,
    )
    config["monitor"] = {
        "name": spec.name,
        "file": str(path),
        "window_s": spec.window_s,
        "filter": spec.filter.model_dump(mode="json", exclude_defaults=True),
        "sample": spec.sample.model_dump(mode="json"),
        "budget": spec.budget.model_dump(mode="json") if spec.budget else None,
    }
    judged = Evaluator.from_suite(suite, judge, graded_weights=plan.graded_weights)
    plain = Evaluator.from_suite(suite, None, graded_weights=plan.graded_weights)
    return Monitor(
        spec,
        path,
        suite,
        plan.policy,
        judge,
        prices,
        judged,
        plain,
        tuple(judge_checks(suite.checks)),
        config,
        rules,
    )


def _verdicts(check: Any) -> list[str]:
    from ..checks import verdict_names

    return [str(v) for v in verdict_names(check.check)]


def _rule(path: Path, lines: Any, index: int, raw: dict[str, Any]) -> Any:
    from ..core import AlertRule

    try:
        return AlertRule.from_yaml(raw, f"alerts[{index}]", file=path)
    except InputError as exc:
        key = (exc.field or "").rpartition(".")[2]
        at = ("alerts", index, key) if key and not key.startswith("alerts[") else ("alerts", index)
        raise MonitorError(exc.message, file=path, line=lines.line(at), field=exc.field) from None


def _webhook(path: Path, lines: Any, url: str) -> None:
    from ._webhook import validate_webhook_url

    try:
        validate_webhook_url(url)
    except InputError as exc:
        raise MonitorError(
            exc.message, file=path, line=lines.line(("webhook",)), field="webhook"
        ) from None


def _settings_that_change_nothing(
    path: Path, lines: Any, spec: MonitorSpec, suite: Suite, rules: list[Any]
) -> None:
    """Refuse a setting that could never change anything: a mistake, not a choice.

    Raises:
        MonitorError: naming the setting and why it is idle.
    """
    judged = {n for n, c in suite.checks.items() if c.judged}

    def idle(loc: tuple[str | int, ...], why: str) -> MonitorError:
        field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
        return MonitorError(why, file=path, line=lines.line(loc), field=field)

    if spec.judge is None:
        if spec.budget is not None:
            raise idle(
                ("budget",),
                "the monitor has no judge (judge: PROVIDER:MODEL), so a "
                "judge budget changes nothing",
            )
        if "sample" in spec.model_fields_set:
            raise idle(
                ("sample",),
                "the monitor has no judge (judge: PROVIDER:MODEL), so a "
                "judge sampling rate changes nothing",
            )
        for i, rule in enumerate(rules):
            if rule.check.partition(".")[0] in judged:
                raise idle(
                    ("alerts", i, "check"),
                    f"{rule.check!r} is a judge check and the monitor has no judge: its rate "
                    "is never decided",
                )
    elif not judged:
        raise idle(
            ("judge",),
            f"suite {suite.name!r} has no judge check: the judge would never be asked",
        )
