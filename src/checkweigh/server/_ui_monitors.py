"""The monitors' pages: the list (each monitor's latest window) and one monitor's page (pass
rate and TCR per window with their intervals, each check's trend, a window's failing traces
linked to their case pages, the sampling and budget figures, the alert rules' decisions).

Trace ids, check names, reasons and monitor names are data: the templates escape them, the
charts escape their text (see ``_charts``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from ..live import Monitor
from ..store import Store, Window, queue_state, window_at, windows
from . import _charts
from ._deps import store_of
from ._html import render
from ._monitor_models import FailedCheck, WindowOut
from ._monitors import (
    WINDOWS,
    budget_out,
    failing_traces,
    known_check,
    monitor_named,
    monitor_out,
    monitors_of,
    now_of,
    scorer_of,
    summaries_of,
    window_of_run,
)

router = APIRouter(include_in_schema=False)
FAILING_SHOWN = 100
"""Failing traces listed on the page (the API pages through all of them)."""


def _label(window: WindowOut) -> str:
    return window.start.strftime("%m-%d %H:%M")


def _trends(shown: list[WindowOut], rules: dict[str, float]) -> dict[str, Any]:
    """The charts of the windows (oldest first): pass rate, TCR, and each check's pass rate
    (an alert's floor drawn on its check's chart)."""
    oldest_first = list(reversed(shown))
    checks: list[str] = []
    for w in shown:
        checks += [c.check for c in w.checks if c.check not in checks]
    per_check = []
    for name in checks:
        points = []
        for w in oldest_first:
            rate = next((c for c in w.checks if c.check == name), None)
            points.append(
                (
                    _label(w),
                    None if rate is None else rate.pass_rate,
                    None if rate is None else rate.interval,
                )
            )
        per_check.append(
            {
                "check": name,
                "chart": _charts.trend_chart(
                    points, f"{name}: pass rate per window", mark=rules.get(name)
                ),
            }
        )
    return {
        "pass_rate": _charts.trend_chart(
            [(_label(w), w.pass_rate, w.pass_rate_interval) for w in oldest_first],
            "case pass rate per window with 95% intervals",
        ),
        "tcr": _charts.trend_chart(
            [(_label(w), w.tcr, w.tcr_interval) for w in oldest_first],
            "TCR (mean case score) per window with 95% intervals",
        ),
        "checks": per_check,
    }


@router.get("/monitors")
def monitors_page(request: Request) -> Response:
    """Every monitor this server runs, each with its latest window's figures."""
    store = store_of(request)
    rows = []
    for monitor in monitors_of(request):
        out = monitor_out(store, monitor, 2, summaries_of(request))
        closed = next((w for w in out.windows if w.closed), None)
        rows.append(
            {
                "monitor": out,
                "latest": out.windows[0] if out.windows else None,
                "fired": None
                if closed is None
                else sum(1 for a in closed.alerts if a.state == "fired"),
            }
        )
    scorer = scorer_of(request)
    return render(
        request,
        "monitors.html",
        rows=rows,
        queue=queue_state(store),
        stats=None if scorer is None else scorer.stats,
    )


WEEK_S = 7 * 86_400.0


def _comparisons(store: Store, monitor: Monitor) -> list[tuple[str, str, str]]:
    """The newest closed window against the one before it and against the window a week
    earlier, where the store has them: (what, base run, candidate run)."""
    closed = [w for w in windows(store, monitor.name, limit=3) if w.closed][:2]
    if not closed:
        return []
    newest = closed[0]
    out = []
    if len(closed) > 1:
        out.append(("the window before", closed[1].run_id, newest.run_id))
    week = window_at(store, monitor.name, newest.start - WEEK_S)
    if week is not None:
        out.append(("the same window a week before", week.run_id, newest.run_id))
    return out


@router.get("/monitors/{name}")
def monitor_page(request: Request, name: str) -> Response:
    """One monitor: its windows' figures and trends, a window's failing traces (the newest
    window's unless ``?window=RUN_ID``; one check's with ``?check=``), its judge sampling and
    budget, and its alert rules' decisions."""
    store = store_of(request)
    monitor = monitor_named(request, name)
    out = monitor_out(store, monitor, WINDOWS, summaries_of(request))
    params = request.query_params
    picked = params.get("window") or None
    window: Window | None
    if picked is not None:
        window = window_of_run(store, monitor, picked)
    else:
        newest = windows(store, monitor.name, limit=1)
        window = newest[0] if newest else None
    failing: list[tuple[str, int, list[FailedCheck]]] = []
    check = None
    if window is not None:
        check = known_check(store, window, params.get("check"))
        failing = list(failing_traces(store, window, check))
    floors = {r.check: r.below for r in out.alerts if r.below is not None}
    return render(
        request,
        "monitor.html",
        compare=_comparisons(store, monitor),
        monitor=out,
        budget=budget_out(store, monitor, now_of(request)),
        window=window,
        window_shown=next((w for w in out.windows if window and w.run_id == window.run_id), None),
        failing=failing[:FAILING_SHOWN],
        failing_total=len(failing),
        check=check or "",
        checks=[c.check for c in out.windows[0].checks] if out.windows else [],
        trends=_trends(out.windows, floors),
        rates={w.run_id: {c.check: c for c in w.checks} for w in out.windows},
        decided=[w for w in out.windows if w.closed and w.alerts],
    )
