"""Adaptive judge concurrency: find the provider's limit by itself.

When the user sets no concurrency, a run's judge calls go through a :class:`Pacer`:

- **Concurrency window.** One call goes first, so that its answer's headers tell the limits
  before a burst is sent; then :data:`START_WINDOW` calls may be in flight, growing while
  answers come back and the window is in use: by one per answer (doubling per round trip) until
  the first 429, then by one per window's worth of answers, up to :data:`MAX_WINDOW`. A 429
  halves it (at most once per pause, so a burst of 429s to calls sent together counts once).
- **Pauses.** A 429's ``retry-after-ms`` / ``retry-after`` holds every send, not only the
  refused call's retry, until it has passed.
- **Rate budgets.** Every answer's rate-limit headers (see ``_limit_headers``) teach the
  limits per minute, of requests and of tokens. Each learned limit is a client-side token
  bucket refilled continuously at ``limit / 60`` per second times a margin
  (:data:`MARGIN`), holding one second's worth, never fuller than the provider's last
  ``remaining``. A send waits until every bucket holds its cost: 1 request, and the request's
  tokens as the providers' limiters estimate them (:func:`rate_costs`). A 429 while the limits
  are known lowers the margin by a tenth; answers bring it back.

Retries wait in front of first attempts, so a call refused once is not sent behind every call
of the run (and its deadline). The state is plain and clocked from outside
(:class:`Controller`, every method takes ``now``); :class:`Pacer` runs it on an event loop.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

from ._limit_headers import Kind, Reading
from ._model import JudgeRequest
from ._sdk import retry_after

R = TypeVar("R")

START_WINDOW = 32
"""Calls in flight at first: today's fixed default (see ``_options.DEFAULT_CONCURRENCY``)."""
MAX_WINDOW = 256
"""The most calls in flight the window grows to."""
MARGIN = 0.97
"""The share of a learned limit the buckets refill at: requests reach the provider a little
unevenly, and its own bucket must not run dry."""
MIN_MARGIN = 0.5
"""The lowest the margin falls after 429s."""
BURST_S = 1.0
"""Seconds of a learned limit a bucket holds: providers may enforce a minute's limit over
shorter intervals ("60 RPM may be enforced as 1 request per second")."""
CALM_S = 1.0
"""The shortest spell between two cuts of the window when a 429 names no wait."""

Costs = Mapping[Kind, float]


def rate_costs(request: JudgeRequest) -> dict[Kind, float]:
    """What ``request`` takes from each limit: one request, and its tokens as the providers'
    limiters count them before the answer exists (OpenAI: the prompt's characters / 4, plus
    ``max_tokens``), not as the model's tokenizer would."""
    prompt = math.ceil(sum(len(m.content) for m in request.messages) / 4)
    return {
        "requests": 1.0,
        "tokens": float(prompt + request.max_tokens),
        "input-tokens": float(prompt),
        "output-tokens": float(request.max_tokens),
    }


@dataclass(slots=True)
class Bucket:
    """A client-side token bucket for one learned limit."""

    limit: int
    """The provider's limit per minute."""
    level: float
    """What may be sent now (below 0 after a cost larger than the bucket)."""
    at: float
    """When ``level`` was last brought up to date."""

    def capacity(self, margin: float) -> float:
        """What the bucket holds when full."""
        return max(self.limit * margin * BURST_S / 60.0, 1.0)

    def refill(self, now: float, margin: float) -> None:
        """Add what flowed in since :attr:`at`."""
        rate = self.limit * margin / 60.0
        self.level = min(self.capacity(margin), self.level + max(now - self.at, 0.0) * rate)
        self.at = now

    def wait(self, cost: float, now: float, margin: float) -> float:
        """Seconds until ``cost`` may be taken (a cost over the capacity waits for a full one)."""
        self.refill(now, margin)
        need = min(cost, self.capacity(margin))
        if self.level >= need:
            return 0.0
        return (need - self.level) / (self.limit * margin / 60.0)


@dataclass
class Controller:
    """The pacing state: the window, the pause and the learned budgets."""

    window: float = START_WINDOW
    """Calls allowed in flight now."""
    probing: bool = True
    """Whether no answer came yet: one call goes first, so that the provider's limits are
    known before a burst of calls is sent."""
    max_window: int = MAX_WINDOW
    """The most the window grows to."""
    margin: float = MARGIN
    """The share of learned limits the buckets refill at."""
    pause_until: float = 0.0
    """No send before this time."""
    slow_start: bool = True
    """Whether no 429 came yet (the window doubles per round trip until one does)."""
    calm_at: float = 0.0
    """The window is not cut again before this time."""
    answered_429: int = 0
    """Attempts the provider answered 429."""
    peak_window: int = START_WINDOW
    """The widest the window was."""
    limits: dict[Kind, int] = field(default_factory=dict)
    """The limits per minute learned from the headers."""
    buckets: dict[Kind, Bucket] = field(default_factory=dict)

    @property
    def allowed(self) -> int:
        """Whole calls allowed in flight."""
        return 1 if self.probing else max(int(self.window), 1)

    def learn(self, readings: Iterable[Reading], now: float) -> None:
        """Take in the limits an answer reported; a bucket never holds more than the
        provider said remains."""
        for reading in readings:
            if reading.limit is not None and reading.limit > 0:
                bucket = self.buckets.get(reading.kind)
                if bucket is None:
                    full = max(reading.limit * self.margin * BURST_S / 60.0, 1.0)
                    bucket = Bucket(reading.limit, full, now)
                    self.buckets[reading.kind] = bucket
                else:
                    bucket.refill(now, self.margin)
                    bucket.limit = reading.limit
                self.limits[reading.kind] = reading.limit
            bucket = self.buckets.get(reading.kind)
            if bucket is not None and reading.remaining is not None:
                bucket.refill(now, self.margin)
                bucket.level = min(bucket.level, float(reading.remaining))

    def answered(self, in_flight: int) -> None:
        """An answer came back with ``in_flight`` calls (itself included) holding the window:
        grow when the window was what held calls back."""
        if self.probing:
            self.probing = False
            return
        if in_flight < self.allowed - 1 or self.window >= self.max_window:
            self.margin = min(MARGIN, self.margin + 0.002)
            return
        self.window += 1.0 if self.slow_start else 1.0 / self.window
        self.window = min(self.window, float(self.max_window))
        self.peak_window = max(self.peak_window, self.allowed)
        self.margin = min(MARGIN, self.margin + 0.002)

    def refused(self, wait_s: float | None, now: float) -> None:
        """The provider answered 429, asking to wait ``wait_s`` (None: it did not say)."""
        self.answered_429 += 1
        self.probing = False
        wait = wait_s if wait_s is not None and wait_s > 0 else 0.0
        if now >= self.calm_at:
            self.slow_start = False
            self.window = max(self.window / 2.0, 1.0)
            if self.buckets:
                self.margin = max(self.margin * 0.9, MIN_MARGIN)
            self.calm_at = now + max(wait, CALM_S)
        self.pause_until = max(self.pause_until, now + wait)

    def delay(self, costs: Costs, now: float) -> float:
        """Seconds before a call of ``costs`` may be sent (0: now)."""
        wait = self.pause_until - now
        for kind, bucket in self.buckets.items():
            wait = max(wait, bucket.wait(costs.get(kind, 0.0), now, self.margin))
        return max(wait, 0.0)

    def take(self, costs: Costs, now: float) -> None:
        """A call of ``costs`` is sent now."""
        for kind, bucket in self.buckets.items():
            bucket.refill(now, self.margin)
            bucket.level -= costs.get(kind, 0.0)

    def learned_rpm(self) -> int | None:
        """The requests-per-minute limit learned, if any."""
        return self.limits.get("requests")

    def learned_tpm(self) -> int | None:
        """The tokens-per-minute limit learned (all tokens, else input tokens), if any."""
        return self.limits.get("tokens") or self.limits.get("input-tokens")


class Pacer:
    """Runs a :class:`Controller` on the running event loop: calls wait in a queue (retries
    first, then in arrival order) until the window has room and the pause and the budgets
    allow them."""

    def __init__(self, controller: Controller | None = None, *, max_window: int = MAX_WINDOW):
        if controller is None:
            start = min(START_WINDOW, max_window)
            controller = Controller(window=start, max_window=max_window, peak_window=start)
        self.state = controller
        self.in_flight = 0
        self.peak_in_flight = 0
        self._loop = asyncio.get_running_loop()
        self._queue: list[tuple[int, int, Costs, asyncio.Future[None]]] = []
        self._order = itertools.count()
        self._timer: asyncio.TimerHandle | None = None

    def now(self) -> float:
        """The loop's clock."""
        return self._loop.time()

    async def enter(self, costs: Costs, *, retry: bool = False) -> None:
        """Wait for a turn to send a call of ``costs``; the caller must :meth:`leave`."""
        ticket: asyncio.Future[None] = self._loop.create_future()
        heapq.heappush(self._queue, (0 if retry else 1, next(self._order), costs, ticket))
        self._dispatch()
        try:
            await ticket
        except asyncio.CancelledError:
            if ticket.done() and not ticket.cancelled():
                self.leave()  # granted as it was cancelled: give the turn back
            ticket.cancel()
            raise

    def leave(self) -> None:
        """A call that held a turn is done."""
        self.in_flight -= 1
        self._dispatch()

    def answered(self, readings: Iterable[Reading]) -> None:
        """An answer came back with these rate-limit readings."""
        self.state.learn(readings, self.now())
        self.state.answered(self.in_flight)
        self._dispatch()

    def refused(self, readings: Iterable[Reading], wait_s: float | None) -> None:
        """A 429 came back with these readings, asking to wait ``wait_s``."""
        now = self.now()
        self.state.learn(readings, now)
        self.state.refused(wait_s, now)
        self._dispatch()

    def _dispatch(self) -> None:
        queue = self._queue
        while queue:
            ticket = queue[0][3]
            if ticket.done():
                heapq.heappop(queue)
                continue
            if self.in_flight >= self.state.allowed:
                return  # a call that leaves dispatches again
            now = self.now()
            wait = self.state.delay(queue[0][2], now)
            if wait > 0:
                self._arm(now + wait)
                return
            _, _, costs, _ = heapq.heappop(queue)
            self.state.take(costs, now)
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            ticket.set_result(None)

    def _arm(self, when: float) -> None:
        if self._timer is not None:
            if self._timer.when() <= when:
                return
            self._timer.cancel()
        self._timer = self._loop.call_at(when, self._fire)

    def _fire(self) -> None:
        self._timer = None
        self._dispatch()


@runtime_checkable
class Observer(Protocol):
    """What a slot that wants to see every attempt's outcome offers (the metered judge's)."""

    def observe_answer(self, headers: Mapping[str, str]) -> None:
        """An attempt was answered with these headers."""

    def observe_429(self, headers: Mapping[str, str], wait_s: float | None) -> None:
        """An attempt was answered 429 with these headers, asking to wait ``wait_s``."""


async def watched(
    slot: object, attempt: Callable[[], Awaitable[R]], headers: Callable[[R], Any]
) -> R:
    """Run one ``attempt`` and show its answer's headers (read by ``headers``), or its 429's,
    to ``slot`` when the slot observes (see :class:`Observer`)."""
    observe = slot if isinstance(slot, Observer) else None
    try:
        result = await attempt()
    except Exception as exc:
        if observe is not None and getattr(exc, "status_code", None) == 429:
            response = getattr(exc, "response", None)
            given = getattr(response, "headers", None)
            observe.observe_429(given if isinstance(given, Mapping) else {}, retry_after(exc))
        raise
    if observe is not None:
        given = headers(result)
        observe.observe_answer(given if isinstance(given, Mapping) else {})
    return result
