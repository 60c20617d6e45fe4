"""``/api/monitors``: the monitors this server runs (``serve --monitor``), each window's figures
(a window is a run in the store: its summary, as ``/api/runs/{id}`` gives it, is where they come
from), the failing traces of a window, and the queue of received traces.

The pages (see ``_ui_monitors``) show the same figures, built here.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from starlette.requests import Request

from ..core import RunSummary, VerdictState, false_alarm_statement, wilson_interval
from ..live import LiveScorer, Monitor, OpenSummaries
from ..reports import case_url
from ..store import Store, Window, budget_spent, queue_state, window_at, window_run_id, windows
from ._deps import store_of
from ._errors import bad_parameter, not_found, quoted
from ._monitor_models import (
    AlertOut,
    BudgetOut,
    CheckRate,
    FailedCheck,
    FailingOut,
    FailingTrace,
    MonitorDetailOut,
    MonitorOut,
    MonitorsOut,
    QueueOut,
    RubricRate,
    RuleOut,
    ScorerOut,
    WindowOut,
)
from ._params import MAX_COUNT

router = APIRouter(tags=["monitors"])
StoreDep = Annotated[Store, Depends(store_of)]
WINDOWS = 48
"""Windows shown of a monitor unless asked otherwise (two days of hourly windows)."""
LISTED_WINDOWS = 3
"""Windows each monitor of the list shows: the open one and the last closed ones."""


def scorer_of(request: Request) -> LiveScorer | None:
    """The app's live scorer (None: this server runs no monitor)."""
    scorer: LiveScorer | None = request.app.state.scorer
    return scorer


def monitors_of(request: Request) -> Sequence[Monitor]:
    """The monitors this server runs, in the order given."""
    scorer = scorer_of(request)
    return () if scorer is None else scorer.monitors


def monitor_named(request: Request, name: str) -> Monitor:
    """The monitor ``name``; 404 when this server runs none of that name."""
    for monitor in monitors_of(request):
        if monitor.name == name:
            return monitor
    raise not_found(f"no monitor {quoted(name)} on this server")


def now_of(request: Request) -> float:
    """The time the scorer keeps (its windows and budget hours are by it)."""
    scorer = scorer_of(request)
    return time.time() if scorer is None else scorer.clock()


def _utc(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


def window_text(seconds: float) -> str:
    """A window as its file would write it: ``60s`` is ``1m``, ``3600s`` is ``1h``."""
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g}{unit}"
    return f"{seconds:g}s"


def rules_of(monitor: Monitor) -> list[RuleOut]:
    """The monitor's alert rules, in words, with the false-alarm rate each states."""
    return [
        RuleOut(
            check=rule.check,
            text=rule.describe(),
            below=rule.below,
            drop=rule.drop,
            alpha=rule.alpha,
            false_alarms=false_alarm_statement(rule, monitor.window_s),
        )
        for rule in monitor.rules
    ]


def _checks(summary: RunSummary) -> list[CheckRate]:
    """Each check's counts as the first rubric weighing it has them."""
    seen: dict[str, CheckRate] = {}
    for rubric in summary.rubrics:
        for c in rubric.checks:
            if c.check not in seen:
                seen[c.check] = CheckRate(
                    check=c.check,
                    passed=c.passed,
                    failed=c.failed,
                    not_applicable=c.not_applicable,
                    errored=c.errored,
                    pass_rate=c.pass_rate,
                    interval=(c.ci_low, c.ci_high),
                )
    return list(seen.values())


def _share(pct: float | None) -> float | None:
    return None if pct is None else pct / 100


def window_out(store: Store, window: Window, summaries: OpenSummaries) -> WindowOut:
    """A window's figures, from its run's summary (made now from its results while open)."""
    summary = summaries.get(store, window)
    gates = summary.case_gates
    executions = summary.executions
    passed = 0 if gates is None else gates.passed
    tcr_interval = None
    if gates is not None:
        low, high = gates.weighted_metrics_score_low_pct, gates.weighted_metrics_score_high_pct
        if low is not None and high is not None:
            tcr_interval = (low / 100, high / 100)
    return WindowOut(
        start=_utc(window.start),
        end=_utc(window.end),
        run_id=window.run_id,
        closed=window.closed,
        traces=window.traces,
        judged=window.judged,
        skipped_rate=window.skipped_rate,
        skipped_budget=window.skipped_budget,
        judge_calls=window.judge_calls,
        judge_usd=window.judge_usd,
        executions=executions,
        cases_passed=passed,
        pass_rate=passed / executions if executions else None,
        pass_rate_interval=wilson_interval(passed, executions) if executions else None,
        tcr=None if gates is None else _share(gates.weighted_metrics_score_pct),
        tcr_interval=tcr_interval,
        rubrics=[
            RubricRate(
                rubric=r.rubric,
                scored=r.scored,
                tcr=r.tcr,
                interval=None
                if r.tcr_low is None or r.tcr_high is None
                else (r.tcr_low, r.tcr_high),
            )
            for r in summary.rubrics
        ],
        checks=_checks(summary),
        alerts=[AlertOut.model_validate(a) for a in window.alerts if isinstance(a, dict)],
    )


def summaries_of(request: Request) -> OpenSummaries:
    """The open windows' summaries the app keeps a few seconds."""
    summaries: OpenSummaries = request.app.state.window_summaries
    return summaries


def monitor_out(store: Store, monitor: Monitor, limit: int, summaries: OpenSummaries) -> MonitorOut:
    """The monitor, with its ``limit`` newest windows."""
    spec = monitor.spec
    return MonitorOut(
        name=monitor.name,
        suite=monitor.suite.name,
        window=window_text(monitor.window_s),
        window_s=monitor.window_s,
        filter=spec.filter.model_dump(mode="json", exclude_defaults=True),
        sample_judge=spec.sample.judge,
        budget=None if spec.budget is None else spec.budget.model_dump(mode="json"),
        judge=spec.judge,
        judge_checks=list(monitor.judge_checks),
        alerts=rules_of(monitor),
        webhook=spec.webhook is not None,
        windows=[
            window_out(store, w, summaries) for w in windows(store, monitor.name, limit=limit)
        ],
    )


def budget_out(store: Store, monitor: Monitor, now: float) -> BudgetOut:
    """The monitor's judge spend in the clock hour of ``now``."""
    hour = int(now // 3600)
    calls, usd = budget_spent(store, monitor.name, hour)
    budget = monitor.spec.budget
    return BudgetOut(
        hour=_utc(hour * 3600),
        calls=calls,
        usd=usd,
        calls_per_hour=None if budget is None else budget.calls_per_hour,
        usd_per_hour=None if budget is None else budget.usd_per_hour,
    )


def window_of_run(store: Store, monitor: Monitor, run_id: str) -> Window:
    """The monitor's window whose run is ``run_id``; 404 when it has none.

    A window run's id ends in its start's minute (see :func:`checkweigh.store.window_run_id`):
    the window starting in that minute is the only candidate."""
    missing = not_found(f"monitor {monitor.name} has no window {quoted(run_id)}")
    try:
        minute = datetime.strptime(run_id.rpartition("-")[2], "%Y%m%dT%H%M").replace(tzinfo=UTC)
    except ValueError:
        raise missing from None
    first = minute.timestamp()
    for start in {monitor.window_of(first)[0], monitor.window_of(first + 59.999)[0]}:
        if window_run_id(monitor.name, start) == run_id:
            found = window_at(store, monitor.name, start)
            if found is not None:
                return found
    raise missing


def failing_traces(
    store: Store, window: Window, check: str | None
) -> Iterator[tuple[str, int, list[FailedCheck]]]:
    """The window's traces with a failed check (``check``, when given): id, repeat and the
    failed checks with their reasons, in the order they were scored."""
    for result in store.iter_results(window.run_id):
        failed = [
            FailedCheck(check=name, reason=v.reason)
            for name, v in result.verdicts.items()
            if v.state is VerdictState.FAILED
        ]
        if failed and (check is None or any(f.check == check for f in failed)):
            yield result.case_id, result.repeat, failed


def known_check(store: Store, window: Window, check: str | None) -> str | None:
    """``check`` when the window's suite has it (422 otherwise); None for any check."""
    if check is None or check == "":
        return None
    checks: dict[str, Any] = store.get_run(window.run_id).config.get("checks", {})
    if check not in checks:
        names = ", ".join(list(checks)[:20]) + (", ..." if len(checks) > 20 else "")
        raise bad_parameter("check", f"expected a check of the suite, one of {names}")
    return check


@router.get("/monitors")
def list_monitors(request: Request, store: StoreDep) -> MonitorsOut:
    """Every monitor this server runs, with its newest windows' figures; the queue of received
    traces; and what this process's scorer did."""
    scorer = scorer_of(request)
    q = queue_state(store)
    stats = None
    if scorer is not None:
        s = scorer.stats
        stats = ScorerOut(
            claimed=s.claimed,
            cases=s.cases,
            matched={m.name: s.matched.get(m.name, 0) for m in monitors_of(request)},
            scored=s.scored,
            no_case=s.no_case,
            lost_leases=s.lost_leases,
            errors=s.errors,
            # "what: detail": the detail can name the database, which answers never do
            last_error_in=None if s.last_error is None else s.last_error.split(":", 1)[0],
        )
    return MonitorsOut(
        monitors=[
            monitor_out(store, m, LISTED_WINDOWS, summaries_of(request))
            for m in monitors_of(request)
        ],
        queue=QueueOut(
            open=q.open, claimed=q.claimed, done=q.done, late_spans=q.late_spans, chunks=q.chunks
        ),
        scorer=stats,
    )


@router.get("/monitors/{name}")
def get_monitor(
    request: Request,
    store: StoreDep,
    name: str,
    limit: Annotated[int, Query(ge=1, le=1000, description="Windows, newest first.")] = WINDOWS,
) -> MonitorDetailOut:
    """One monitor: its windows, newest first, each with its pass rate, TCR and each check's
    pass rate (with their 95% intervals), its sampling counts and its alert decisions; and the
    judge spend this hour against the budget."""
    monitor = monitor_named(request, name)
    return MonitorDetailOut(
        monitor=monitor_out(store, monitor, limit, summaries_of(request)),
        budget=budget_out(store, monitor, now_of(request)),
    )


@router.get("/monitors/{name}/windows/{run_id}/failing")
def get_failing(
    request: Request,
    store: StoreDep,
    name: str,
    run_id: str,
    check: Annotated[str | None, Query(description="Only traces that failed this check.")] = None,
    limit: Annotated[int, Query(ge=1, le=1000, description="Traces per page.")] = 100,
    offset: Annotated[int, Query(ge=0, le=MAX_COUNT, description="Traces to skip.")] = 0,
) -> FailingOut:
    """The traces of one window with a failed check, each with the checks that failed and
    the link to its case page."""
    monitor = monitor_named(request, name)
    window = window_of_run(store, monitor, run_id)
    wanted = known_check(store, window, check)
    found = list(failing_traces(store, window, wanted))
    return FailingOut(
        monitor=monitor.name,
        run_id=window.run_id,
        start=_utc(window.start),
        check=wanted,
        total=len(found),
        items=[
            FailingTrace(
                trace_id=trace,
                repeat=repeat,
                url=f"{case_url('', window.run_id, trace)}?repeat={repeat}",
                failed=failed,
            )
            for trace, repeat, failed in found[offset : offset + limit]
        ],
    )
