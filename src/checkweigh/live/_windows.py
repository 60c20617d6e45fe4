"""A monitor's windows: their figures (summarised from the stored results, as a run's are),
closing those that ended (summary stored, alert rules decided, webhooks sent) and the counts
alert rules read."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import anyio.to_thread

from ..core import RunSummary
from ..store import (
    RunStatus,
    Store,
    Window,
    note_alerts,
    rebuild_summary,
    take_closable,
    windows,
)
from ._monitor import Monitor

_log = logging.getLogger("checkweigh.live")


def when(start: float) -> str:
    """A window's start as people read it (UTC, to the minute)."""
    return datetime.fromtimestamp(start, UTC).strftime("%Y-%m-%d %H:%M UTC")


def window_note(window: Window) -> str:
    """What the window's sampling did, for its summary's notes."""
    left = window.skipped_rate + window.skipped_budget
    text = (
        f"monitor window from {when(window.start)}: {window.traces} trace(s), "
        f"{window.judged} judged"
    )
    if left:
        text += (
            f"; judge checks left out of {left} ({window.skipped_rate} by the sampling rate, "
            f"{window.skipped_budget} by the hour's judge budget)"
        )
    return text


def window_summary(store: Store, window: Window) -> RunSummary:
    """The window's summary: the stored one once it is closed, else made now from its
    results (as a run's that died is rebuilt)."""
    info = store.get_run(window.run_id)
    if window.closed and info.summary is not None and info.status is RunStatus.COMPLETE:
        return info.summary
    results = store.iter_results(window.run_id)
    return rebuild_summary(info.config, 1, results, window_note(window))


def check_counts(summary: RunSummary) -> dict[str, tuple[int, int]]:
    """Each check's (passed, failed) in a summary (the first rubric that weighs it)."""
    counts: dict[str, tuple[int, int]] = {}
    for rubric in summary.rubrics:
        for stats in rubric.checks:
            counts.setdefault(stats.check, (stats.passed, stats.failed))
    return counts


async def close_windows(
    store: Store, monitors: Sequence[Monitor], now: float, grace_s: float
) -> list[Window]:
    """Close every window that ended ``grace_s`` ago: store its summary, decide its alert
    rules against the window before it and send the webhook of those that fired. Each window
    is closed by one process (see :func:`checkweigh.store.take_closable`)."""
    closed: list[Window] = []
    for monitor in monitors:
        taken = await anyio.to_thread.run_sync(take_closable, store, monitor.name, now, grace_s)
        for window in taken:
            summary = await anyio.to_thread.run_sync(_finish, store, window)
            await _alerts(store, monitor, window, summary)
            closed.append(window)
    return closed


def _finish(store: Store, window: Window) -> RunSummary:
    summary = window_summary(store, window)
    store.finish_run(window.run_id, RunStatus.COMPLETE, summary)
    return summary


async def _alerts(store: Store, monitor: Monitor, window: Window, summary: RunSummary) -> None:
    if not monitor.rules:
        return
    from ..core import Counts, evaluate_rule, false_alarm_statement
    from ._webhook import send_alert

    before = await anyio.to_thread.run_sync(
        lambda: windows(store, monitor.name, limit=1, before=window.start)
    )
    previous = None
    if before:
        previous = check_counts(await anyio.to_thread.run_sync(window_summary, store, before[0]))
    current = check_counts(summary)
    # a window closed again (a late trace) does not post an alert a second time
    posted = {
        (a.get("check"), a.get("rule")): a["webhook"]
        for a in window.alerts
        if a.get("state") == "fired" and (a.get("webhook") or {}).get("ok")
    }
    decided: list[dict[str, Any]] = []
    for rule in monitor.rules:
        now = Counts(*current.get(rule.check, (0, 0)))
        prev = Counts(*previous[rule.check]) if previous and rule.check in previous else None
        decision = evaluate_rule(rule, now, prev)
        entry: dict[str, Any] = {
            "check": rule.check,
            "rule": rule.describe(),
            "false_alarms": false_alarm_statement(rule, monitor.window_s, cases=now.n),
            **decision.model_dump(mode="json"),
        }
        if (entry["check"], entry["rule"]) in posted and decision.state == "fired":
            entry["webhook"] = posted[entry["check"], entry["rule"]]
        elif decision.state == "fired" and monitor.spec.webhook:
            sent = await send_alert(
                monitor.spec.webhook,
                {
                    "monitor": monitor.name,
                    "window": {"start": when(window.start), "run_id": window.run_id},
                    **entry,
                },
            )
            entry["webhook"] = {"ok": sent.ok, "status": sent.status, "error": sent.error}
            if not sent.ok:
                _log.warning("alert webhook of monitor %s failed: %s", monitor.name, sent.error)
        decided.append(entry)
    await anyio.to_thread.run_sync(note_alerts, store, monitor.name, window.start, decided)


class OpenSummaries:
    """Open windows' summaries, made from their results and kept a few seconds: a busy
    window gains traces every second, and each summary reads all of its results, so a page
    asked for often reads them once per ``max_age_s`` (a closed window's summary is stored)."""

    def __init__(self, max_age_s: float = 10.0, clock: Callable[[], float] = time.monotonic):
        self._max_age_s = max_age_s
        self._clock = clock
        self._lock = threading.Lock()
        self._kept: dict[str, tuple[float, int, RunSummary]] = {}

    def get(self, store: Store, window: Window) -> RunSummary:
        """The window's summary: stored when closed; else made now, unless one made less than
        ``max_age_s`` ago (or of as many traces) is kept."""
        if window.closed:
            return window_summary(store, window)
        now = self._clock()
        with self._lock:
            kept = self._kept.get(window.run_id)
        if kept is not None and (kept[1] == window.traces or now - kept[0] < self._max_age_s):
            return kept[2]
        summary = window_summary(store, window)
        with self._lock:
            self._kept[window.run_id] = (now, window.traces, summary)
            for run_id in [r for r, (t, _, _) in self._kept.items() if now - t > 60]:
                del self._kept[run_id]  # windows nobody asked for in a minute
        return summary
