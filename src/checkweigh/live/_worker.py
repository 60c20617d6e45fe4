"""The scorer a ``serve`` process runs beside its HTTP server: it takes the traces that are
complete from the store's queue, makes each a case (as ``checkweigh import otel`` does), scores
it with every monitor whose filter it passes, stores the results in the monitor's window run,
closes the windows that ended (their summary, their alert rules) and prunes what is older than
the retention. Several processes over one database share the work: each trace is scored once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio.to_thread

from ..core import Case, JudgeExchange
from ..errors import CheckweighError
from ..importers import trace_case, trace_items
from ..store import (
    Claimed,
    Finished,
    Store,
    claim_ready,
    finish_traces,
    open_window,
    prune,
    renew_leases,
    reserve_budget,
    spend_budget,
)
from ._monitor import Monitor, left_out
from ._windows import close_windows

_log = logging.getLogger("checkweigh.live")

QUIET_S = 5.0
"""Seconds without a new span after which a trace whose root span came is complete."""
MAX_AGE_S = 300.0
"""Seconds after its first span at which a trace is scored even without its root span."""
LEASE_S = 60.0
"""Seconds a claim holds without renewal: a process that died gives its traces up after it."""
RETENTION_S = 30 * 86400.0
"""Age past which scored traces' spans and closed windows' case bodies are removed."""


@dataclass
class LiveSettings:
    """How the scorer decides a trace is complete, how it leases and how long it keeps."""

    quiet_s: float = QUIET_S
    max_age_s: float = MAX_AGE_S
    lease_s: float = LEASE_S
    retention_s: float = RETENTION_S
    batch: int = 64
    """Traces claimed at once."""
    concurrency: int = 16
    """Traces scored at once (their judge calls are bounded by the judge's own limit)."""
    poll_s: float = 0.25
    """Seconds to wait when no trace is ready."""
    housekeeping_s: float = 1.0
    """Seconds between two looks at windows to close."""
    prune_s: float = 60.0
    """Seconds between two prunings of what retention no longer keeps."""
    note_s: float = 60.0
    """Seconds between two progress lines (when something was scored)."""


@dataclass
class ScorerStats:
    """What this process did (the API's status shows it)."""

    claimed: int = 0
    cases: int = 0
    """Traces that made a case (whether a monitor took them or not)."""
    matched: dict[str, int] = field(default_factory=dict)
    """Per monitor, the cases its filter took (a filter that takes none is named by it)."""
    scored: int = 0
    no_case: int = 0
    lost_leases: int = 0
    errors: int = 0
    last_error: str | None = None


def owner_name() -> str:
    """This process, as claims name it: host, pid and a random part (a pid is reused)."""
    return f"{socket.gethostname()[:40]}:{os.getpid()}:{secrets.token_hex(4)}"


@dataclass
class LiveScorer:
    """Scores traces from ``store`` with ``monitors`` until stopped."""

    store: Store
    monitors: Sequence[Monitor]
    settings: LiveSettings = field(default_factory=LiveSettings)
    clock: Callable[[], float] = time.time
    owner: str = field(default_factory=owner_name)
    stats: ScorerStats = field(default_factory=ScorerStats)
    on_note: Callable[[str], None] | None = None
    """Called with a progress line now and then (``serve`` prints it)."""
    _windows: set[tuple[str, float]] = field(default_factory=set)
    _held: set[int] = field(default_factory=set)
    _last_housekeeping: float = 0.0
    _last_prune: float = 0.0
    _last_note: float = 0.0
    _priced: dict[str, asyncio.Event] = field(default_factory=dict)
    """Per monitor with a dollar budget: set once one trace's judging was priced here; until
    then one trace is judged and the others wait, so that no batch is sent unpriced."""
    _noted: int = 0

    async def run(self, stop: asyncio.Event) -> None:
        """Score until ``stop`` is set; the traces in hand are finished first."""
        renewer = asyncio.ensure_future(self._renew(stop))
        try:
            while not stop.is_set():
                worked = await self.step()
                if not worked:
                    with contextlib.suppress(TimeoutError):  # no trace ready: wait a little
                        await asyncio.wait_for(stop.wait(), self.settings.poll_s)
        finally:
            renewer.cancel()

    async def step(self) -> bool:
        """One round: claim ready traces and score them, then the housekeeping when due;
        True when some trace was claimed."""
        s = self.settings
        now = self.clock()
        try:
            claimed = await anyio.to_thread.run_sync(
                lambda: claim_ready(
                    self.store,
                    self.owner,
                    now=now,
                    quiet_s=s.quiet_s,
                    max_age_s=s.max_age_s,
                    lease_s=s.lease_s,
                    limit=s.batch,
                )
            )
        except CheckweighError as exc:
            self._failed("claim traces", exc)
            return False
        if claimed:
            await self._score_all(claimed)
        if now - self._last_housekeeping >= s.housekeeping_s:
            self._last_housekeeping = now
            await self.housekeeping(now)
        if self.on_note is not None and now - self._last_note >= s.note_s:
            self._note(now)
        return bool(claimed)

    def _note(self, now: float) -> None:
        done = self.stats.scored + self.stats.no_case
        if done == self._noted:
            return
        assert self.on_note is not None
        since = done - self._noted
        minutes = (now - self._last_note) / 60 if self._last_note else None
        rate = f" ({since / minutes:.0f} a minute)" if minutes else ""
        line = f"live: {since} trace(s) done{rate}; {self.stats.scored} scored in all"
        idle = [m.name for m in self.monitors if not self.stats.matched.get(m.name)]
        if idle and self.stats.cases:
            line += f"; no trace passed the filter of {', '.join(idle)}"
        if self.stats.no_case:
            line += f", {self.stats.no_case} without a GenAI span"
        if self.stats.errors:
            line += f", {self.stats.errors} error(s), last: {self.stats.last_error}"
        self._noted, self._last_note = done, now
        self.on_note(line)

    async def housekeeping(self, now: float) -> None:
        """Close the windows that ended and prune what retention no longer keeps."""
        try:
            await close_windows(self.store, self.monitors, now, self.settings.quiet_s + 2.0)
            if now - self._last_prune >= self.settings.prune_s:
                self._last_prune = now
                await anyio.to_thread.run_sync(prune, self.store, now - self.settings.retention_s)
        except CheckweighError as exc:
            self._failed("housekeeping", exc)

    async def _score_all(self, claimed: list[Claimed]) -> None:
        self.stats.claimed += len(claimed)
        self._held.update(c.seq for c in claimed)
        gate = asyncio.Semaphore(self.settings.concurrency)

        async def one(c: Claimed) -> Finished:
            async with gate:
                try:
                    return await self.score(c)
                except Exception as exc:  # noqa: BLE001 - a defect must not hold the trace forever
                    _log.exception("live scoring failed on trace %s", c.trace_id)
                    self.stats.errors += 1
                    self.stats.last_error = f"trace {c.trace_id}: {type(exc).__name__}: {exc}"
                    return Finished(c, {"no_case": f"scoring failed: {type(exc).__name__}"})

        try:
            finished = await asyncio.gather(*(one(c) for c in claimed))
            stored = await anyio.to_thread.run_sync(finish_traces, self.store, self.owner, finished)
        except CheckweighError as exc:  # the leases run out: another round takes them
            self._failed("store results", exc)
            return
        finally:
            self._held.difference_update(c.seq for c in claimed)
        self.stats.lost_leases += len(claimed) - len(stored)
        kept = set(stored)
        for item in finished:
            if item.claimed.seq in kept:
                if item.results:
                    self.stats.scored += 1
                elif "no_case" in item.outcome:
                    self.stats.no_case += 1

    async def score(self, claimed: Claimed) -> Finished:
        """The case a trace makes and each matching monitor's result of it."""
        items = trace_items(claimed.requests)
        outcome: dict[str, Any] = {"spans": claimed.spans, "monitors": {}}
        finished = Finished(claimed, outcome)
        made = trace_case(claimed.trace_id, items)
        if isinstance(made, str):
            outcome["no_case"] = made
            return finished
        case = _live_case(made, claimed, items)
        outcome["case_id"] = case.id
        self.stats.cases += 1
        for monitor in self.monitors:
            if monitor.matches(items):
                self.stats.matched[monitor.name] = self.stats.matched.get(monitor.name, 0) + 1
                await self._score_with(monitor, case, claimed, finished)
        return finished

    async def _score_with(
        self, monitor: Monitor, case: Case, claimed: Claimed, finished: Finished
    ) -> None:
        start, end = monitor.window_of(claimed.last_seen)
        run_id = await self._window(monitor, start, end)
        counts: dict[str, float] = {"traces": 1}
        sampled, why = await self._sample(monitor, claimed.trace_id, counts)
        evaluator = monitor.judged if sampled else monitor.plain
        try:
            if evaluator.needs_async:
                result = await evaluator.aevaluate(case, index=claimed.seq)
            else:
                result = evaluator.evaluate(case, index=claimed.seq)
            if sampled and monitor.calls_per_trace:
                await self._spent(monitor, result.exchanges, counts)
        finally:
            # priced and spent (or failed): the traces waiting for a price reserve now
            if counts.pop("prices", 0):
                self._priced[monitor.name].set()
        if not sampled:
            result = left_out(result, why)
        finished.results.setdefault(run_id, []).append(result)
        finished.counts[(monitor.name, start)] = counts
        finished.outcome["monitors"][monitor.name] = {
            "run_id": run_id,
            "window": start,
            "judged": sampled and bool(monitor.calls_per_trace),
            **({"left_out": why} if not sampled else {}),
        }

    async def _spent(
        self, monitor: Monitor, exchanges: Sequence[JudgeExchange], counts: dict[str, float]
    ) -> None:
        """Count a judged trace's calls and dollars in its window and correct its budget
        reservation by them."""
        calls, usd = monitor.cost(exchanges)
        counts["judged"] = 1
        counts["judge_calls"] = calls
        counts["judge_usd"] = usd
        monitor.judged_cost(usd)
        reserved = counts.pop("reserved_usd", 0.0)
        if monitor.spec.budget is not None:
            hour = int(self.clock() // 3600)
            await anyio.to_thread.run_sync(
                spend_budget,
                self.store,
                monitor.name,
                hour,
                calls - monitor.calls_per_trace,
                usd - reserved,
            )

    async def _sample(
        self, monitor: Monitor, trace_id: str, counts: dict[str, float]
    ) -> tuple[bool, str]:
        """Whether the trace's judge checks run, and why not."""
        if not monitor.calls_per_trace:
            return False, "skipped: the monitor has no judge (judge: in its file)"
        if not monitor.sampled(trace_id):
            counts["skipped_rate"] = 1
            return False, f"not sampled (judge rate {monitor.spec.sample.judge:g})"
        budget = monitor.spec.budget
        if budget is None:
            return True, ""
        if budget.usd_per_hour is not None:
            priced = self._priced.get(monitor.name)
            if priced is None:  # the first: judged alone, its cost the estimate for the rest
                self._priced[monitor.name] = asyncio.Event()
                counts["prices"] = 1
            else:
                await priced.wait()
        hour = int(self.clock() // 3600)
        expected = monitor.usd_per_trace if budget.usd_per_hour is not None else 0.0
        granted = await anyio.to_thread.run_sync(
            lambda: reserve_budget(
                self.store,
                monitor.name,
                hour,
                monitor.calls_per_trace,
                max_calls=budget.calls_per_hour,
                max_usd=budget.usd_per_hour,
                usd=expected,
            )
        )
        if granted:
            counts["reserved_usd"] = expected
            return True, ""
        if counts.pop("prices", 0):  # refused: the traces waiting are refused too
            self._priced[monitor.name].set()
        counts["skipped_budget"] = 1
        spent = (
            f"{budget.calls_per_hour} calls"
            if budget.calls_per_hour is not None
            else f"${budget.usd_per_hour:g}"
        )
        return False, f"not sampled: the judge budget of {spent} this hour is spent"

    async def _window(self, monitor: Monitor, start: float, end: float) -> str:
        from ..store import window_run_id

        key = (monitor.name, start)
        if key not in self._windows:
            config = {**monitor.config, "monitor": {**monitor.config["monitor"], "start": start}}
            await anyio.to_thread.run_sync(
                lambda: open_window(
                    self.store,
                    monitor.name,
                    start,
                    end,
                    monitor.suite.name,
                    str(monitor.suite.path),
                    config,
                )
            )
            self._windows.add(key)
        return window_run_id(monitor.name, start)

    async def _renew(self, stop: asyncio.Event) -> None:
        """Renew the leases of the traces in hand, a few times per lease."""
        every = self.settings.lease_s / 3
        while not stop.is_set():
            await asyncio.sleep(every)
            held = list(self._held)
            if held:
                try:
                    until = self.clock() + self.settings.lease_s
                    await anyio.to_thread.run_sync(
                        renew_leases, self.store, self.owner, held, until
                    )
                except CheckweighError as exc:
                    self._failed("renew leases", exc)

    def _failed(self, what: str, exc: CheckweighError) -> None:
        self.stats.errors += 1
        self.stats.last_error = f"{what}: {exc}"
        _log.warning("live scoring could not %s: %s", what, exc)


def _live_case(case: Case, claimed: Claimed, items: Any) -> Case:
    """The case a monitor scores: its id is the trace's (unique in a window); an id the
    trace named (``checkweigh.case.id``) is kept in the metadata, with the service."""
    service = next(
        (s.resource.get("service.name") for s in items.spans if s.resource.get("service.name")),
        None,
    )
    metadata = {**case.metadata, "trace_id": claimed.trace_id}
    if case.id != claimed.trace_id:
        metadata["case_id"] = case.id
    if isinstance(service, str):
        metadata["service.name"] = service
    return case.model_copy(update={"id": claimed.trace_id, "metadata": metadata})


class ScorerThread:
    """A scorer on a thread of its own (its own event loop), beside a server's: started with
    :meth:`start`, stopped (the traces in hand finished, the monitors' judges closed) with
    :meth:`stop`."""

    def __init__(self, scorer: LiveScorer) -> None:
        self.scorer = scorer
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._main, name="checkweigh-live", daemon=True)

    def start(self) -> None:
        """Start scoring."""
        self._thread.start()
        self._ready.wait()

    def _main(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        self._ready.set()
        try:
            await self.scorer.run(self._stop)
        finally:
            for monitor in self.scorer.monitors:
                await monitor.close()

    def stop(self, timeout_s: float = 30.0) -> None:
        """Stop after the round in hand, and wait for it (at most ``timeout_s``)."""
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout_s)
