"""Judge calls under a concurrency limit, with their tokens, time, errors and cost counted."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from ..core import JudgeStats
from ._context import known_limit
from ._model import JudgeError, JudgeModel, JudgeReply, JudgeRequest
from ._options import DEFAULT_CONCURRENCY, JudgeOptions


async def close_judge(judge: object) -> None:
    """Call ``judge.aclose()`` when the judge has one (provider clients do)."""
    close = getattr(judge, "aclose", None)
    if close is not None:
        await close()


@dataclass(frozen=True, slots=True)
class Prices:
    """US dollars per million tokens."""

    input_per_m: float
    output_per_m: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """The price of a call."""
        return (input_tokens * self.input_per_m + output_tokens * self.output_per_m) / 1e6


@dataclass
class MeteredJudge:
    """At most ``concurrency`` calls to ``judge`` at once; every call counted."""

    judge: JudgeModel
    concurrency: int = DEFAULT_CONCURRENCY
    prices: Prices | None = None
    options: JudgeOptions | None = None
    """The settings the judge was built with, recorded with the run."""
    concurrency_reason: str | None = None
    """Why the concurrency is below the default, for the report (a local server)."""
    calls: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    latency_ms: float = 0.0
    in_flight: int = 0
    """Calls holding a slot now (attempts being sent or awaited)."""
    peak_in_flight: int = 0
    """The most calls that held a slot at once: how much of ``concurrency`` the run used."""
    _gate: tuple[asyncio.AbstractEventLoop, _Gate] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError("concurrency must be >= 1")

    @property
    def name(self) -> str:
        """The wrapped judge's name."""
        return self.judge.name

    @property
    def max_input_tokens(self) -> int | None:
        """The judge's input limit: the options' ``max_input_tokens``, else the model's known
        limit, else None (no limit)."""
        given = self.options.max_input_tokens if self.options is not None else None
        return given if given is not None else known_limit(self.name)

    def _semaphore(self) -> _Gate:
        # a semaphore belongs to one event loop; each run has its own loop
        loop = asyncio.get_running_loop()
        if self._gate is None or self._gate[0] is not loop:
            self._gate = (loop, _Gate(self))
        return self._gate[1]

    def concurrency_note(self) -> str | None:
        """What the run's report says about the concurrency when it was lowered."""
        return self.concurrency_reason

    async def aclose(self) -> None:
        """Close the wrapped judge's client, if it has one."""
        await close_judge(self.judge)

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        """One call, holding a slot while an attempt is in flight.

        A judge with ``complete_slotted`` (the provider clients) takes the slot for each
        attempt and gives it back while it waits to retry; any other judge holds it for the
        whole call.
        """
        slotted = getattr(self.judge, "complete_slotted", None)
        self.calls += 1
        try:
            if slotted is not None:
                reply: JudgeReply = await slotted(request, self._semaphore)
            else:
                async with self._semaphore():
                    reply = await self.judge.complete(request)
        except JudgeError:
            self.errors += 1
            raise
        self.input_tokens += reply.input_tokens
        self.output_tokens += reply.output_tokens
        self.latency_ms += reply.latency_ms
        return reply

    def stats(self, cache_hits: int = 0) -> JudgeStats:
        """The counts so far, as stored with the run."""
        cost = None
        if self.prices is not None:
            cost = self.prices.cost(self.input_tokens, self.output_tokens)
        return JudgeStats(
            judge=self.name,
            calls=self.calls,
            cache_hits=cache_hits,
            errors=self.errors,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            mean_latency_ms=self.latency_ms / self.calls if self.calls else None,
            cost_usd=cost,
            concurrency=self.concurrency,
            peak_in_flight=self.peak_in_flight,
        )


class _Gate:
    """The judge's slots in one event loop, counting the calls that hold one."""

    __slots__ = ("_owner", "_slots")

    def __init__(self, owner: MeteredJudge) -> None:
        self._owner = owner
        self._slots = asyncio.Semaphore(owner.concurrency)

    async def __aenter__(self) -> None:
        await self._slots.acquire()
        owner = self._owner
        owner.in_flight += 1
        if owner.in_flight > owner.peak_in_flight:
            owner.peak_in_flight = owner.in_flight

    async def __aexit__(self, *exc: object) -> None:
        self._owner.in_flight -= 1
        self._slots.release()
