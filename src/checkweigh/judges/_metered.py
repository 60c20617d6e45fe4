"""Judge calls under a concurrency limit, with their tokens, time, errors and cost counted,
in total and per check, and stopped once a budget is spent.

The budget is checked each time an attempt is about to be sent, once it holds its
concurrency slot: calls already in flight when the budget is reached finish and are paid
for, so the spend can pass the budget by at most ``concurrency`` calls.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..core import CheckJudgeStats, JudgeStats
from ._context import known_limit
from ._exchanges import current_check
from ._limit_headers import read_limits
from ._model import JudgeError, JudgeModel, JudgeReply, JudgeRequest
from ._options import DEFAULT_CONCURRENCY, JudgeOptions
from ._pacing import Costs, Pacer, rate_costs
from ._prompt_cache import cache_figures, with_cache_rates

OUTSIDE_CHECKS = "(no check)"
"""The per-check key of calls made outside any check's evaluation."""


async def close_judge(judge: object) -> None:
    """Call ``judge.aclose()`` when the judge has one (provider clients do)."""
    close = getattr(judge, "aclose", None)
    if close is not None:
        await close()


class BudgetSpent(JudgeError):
    """A call not sent because the run's judge budget was spent: its verdict is errored."""


@dataclass(frozen=True, slots=True)
class Prices:
    """US dollars per million tokens."""

    input_per_m: float
    output_per_m: float
    cached_input_per_m: float | None = None
    """Input read from the provider's prompt cache (None: not known yet; the run fills in
    the provider's usual rate, see ``with_cache_rates``)."""
    cache_write_per_m: float | None = None
    """Input written to the provider's prompt cache (Anthropic bills it above input)."""
    note: str | None = None
    """How the prompt cache is priced, and which rates were assumed, for the report."""

    def cost(
        self,
        input_tokens: int,
        output_tokens: int,
        cached_input_tokens: int = 0,
        cache_write_tokens: int = 0,
    ) -> float:
        """The price of a call: ``input_tokens`` counts all input, the cached and written
        ones among it are billed at their own rates (at the input rate when not known)."""
        cached_rate = self.cached_input_per_m
        write_rate = self.cache_write_per_m
        plain = input_tokens - cached_input_tokens - cache_write_tokens
        return (
            plain * self.input_per_m
            + cached_input_tokens * (self.input_per_m if cached_rate is None else cached_rate)
            + cache_write_tokens * (self.input_per_m if write_rate is None else write_rate)
            + output_tokens * self.output_per_m
        ) / 1e6


@dataclass
class _Tally:
    """One check's share of the counts."""

    calls: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    budget_stopped: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0

    def tokens(self) -> tuple[int, int, int, int]:
        """Input, output, cached input and cache-write tokens."""
        return (
            self.input_tokens,
            self.output_tokens,
            self.cached_input_tokens,
            self.cache_write_tokens,
        )

    def add(self, reply: JudgeReply) -> None:
        """Count ``reply``'s tokens."""
        self.input_tokens += reply.input_tokens
        self.output_tokens += reply.output_tokens
        self.cached_input_tokens += reply.cached_input_tokens
        self.cache_write_tokens += reply.cache_write_tokens

    def stats(self, prices: Prices | None) -> CheckJudgeStats:
        return CheckJudgeStats(
            calls=self.calls,
            errors=self.errors,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            budget_stopped=self.budget_stopped,
            **cache_figures(prices, self.tokens()),
        )


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
    budget_usd: float | None = None
    """No call is sent once the cost at ``prices`` reaches this (needs ``prices``)."""
    adaptive: bool = False
    """Find the provider's limit (see ``_pacing``): ``concurrency`` is then the most the
    window may grow to; else it is a fixed cap."""
    calls: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    latency_ms: float = 0.0
    in_flight: int = 0
    """Calls holding a slot now (attempts being sent or awaited)."""
    peak_in_flight: int = 0
    """The most calls that held a slot at once: how much of ``concurrency`` the run used."""
    budget_stopped: int = 0
    """Calls not sent because the budget was spent."""
    per_check: dict[str, _Tally] = field(default_factory=dict)
    """The counts above, by the check that made each call."""
    prompt_cache: _Tally = field(default_factory=_Tally)
    """The run's tokens with the prompt-cached ones (the run's own input/output counts
    above stay as they were)."""
    answered_429: int = 0
    """Attempts the provider answered 429 (retried after waiting)."""
    pacer: Pacer | None = field(default=None, repr=False)
    """The adaptive pacing of the latest run (None: a fixed cap)."""
    _gate: tuple[asyncio.AbstractEventLoop, _Gate] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError("concurrency must be >= 1")
        if self.budget_usd is not None and self.prices is None:
            raise ValueError("a judge budget needs prices")
        if self.prices is not None and self.prices.cached_input_per_m is None:
            self.prices = with_cache_rates(self.prices, self.judge.name)

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

    def spent_usd(self) -> float | None:
        """The cost of the calls answered so far (None without prices)."""
        if self.prices is None:
            return None
        return self.prices.cost(*self.prompt_cache.tokens())

    def budget_left(self) -> bool:
        """Whether another attempt may be sent."""
        spent = self.spent_usd()
        return self.budget_usd is None or spent is None or spent < self.budget_usd

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        """One call, holding a slot while an attempt is in flight.

        A judge with ``complete_slotted`` (the provider clients) takes the slot for each
        attempt and gives it back while it waits to retry; any other judge holds it for the
        whole call.

        Raises:
            BudgetSpent: the budget was spent before the call (or its retry) was sent.
            JudgeError: the call failed for good.
        """
        slotted = getattr(self.judge, "complete_slotted", None)
        tally = self.per_check.setdefault(current_check() or OUTSIDE_CHECKS, _Tally())
        gate = self._semaphore()
        slot = _CallSlot(gate, rate_costs(request) if gate.pacer is not None else {})
        try:
            if slotted is not None:
                reply: JudgeReply = await slotted(request, slot)
            else:
                async with slot():
                    reply = await self.judge.complete(request)
        except BudgetSpent:
            if slot.attempts:
                # a retry was refused: the call was sent, and failed for good
                self._count_call(tally, failed=True)
            else:
                self.budget_stopped += 1
                tally.budget_stopped += 1
            raise
        except JudgeError:
            self._count_call(tally, failed=True)
            raise
        self._count_call(tally, failed=False)
        self.input_tokens += reply.input_tokens
        self.output_tokens += reply.output_tokens
        self.prompt_cache.add(reply)
        tally.add(reply)
        self.latency_ms += reply.latency_ms
        return reply

    def count_batch(self, reply: JudgeReply | None) -> None:
        """Count a call answered through the provider's batch API (``reply``), or one of its
        items that got no answer (None), under the check that asked (the batch collector
        counts which calls were batch ones, and prices them)."""
        tally = self.per_check.setdefault(current_check() or OUTSIDE_CHECKS, _Tally())
        self._count_call(tally, failed=reply is None)
        if reply is not None:
            self.input_tokens += reply.input_tokens
            self.output_tokens += reply.output_tokens
            self.prompt_cache.add(reply)
            tally.add(reply)

    def count_budget_stop(self) -> None:
        """Count a call not sent because the budget was spent, under the check that asked."""
        self.budget_stopped += 1
        self.per_check.setdefault(current_check() or OUTSIDE_CHECKS, _Tally()).budget_stopped += 1

    def _count_call(self, tally: _Tally, *, failed: bool) -> None:
        self.calls += 1
        tally.calls += 1
        if failed:
            self.errors += 1
            tally.errors += 1

    def stats(self, cache_hits: int = 0) -> JudgeStats:
        """The counts so far, as stored with the run."""
        return JudgeStats(
            judge=self.name,
            calls=self.calls,
            cache_hits=cache_hits,
            errors=self.errors,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            mean_latency_ms=self.latency_ms / self.calls if self.calls else None,
            **cache_figures(self.prices, self.prompt_cache.tokens()),
            prompt_cache_prices=None if self.prices is None else self.prices.note,
            concurrency=self.concurrency,
            peak_in_flight=self.peak_in_flight,
            budget_usd=self.budget_usd,
            budget_stopped=self.budget_stopped,
            **self._pacing_stats(),
            per_check={
                name: tally.stats(self.prices) for name, tally in sorted(self.per_check.items())
            },
        )

    def _pacing_stats(self) -> dict[str, object]:
        """What the adaptive pacing learned, for :class:`JudgeStats`."""
        if self.pacer is None:
            return {"answered_429": self.answered_429}
        state = self.pacer.state
        return {
            "adaptive": True,
            "answered_429": self.answered_429,
            "peak_window": state.peak_window,
            "learned_rpm": state.learned_rpm(),
            "learned_tpm": state.learned_tpm(),
        }


class _Gate:
    """The judge's slots in one event loop, counting the calls that hold one: a fixed
    semaphore, or the adaptive :class:`Pacer`."""

    __slots__ = ("_owner", "_slots", "pacer")

    def __init__(self, owner: MeteredJudge) -> None:
        self._owner = owner
        self._slots = asyncio.Semaphore(owner.concurrency)
        self.pacer: Pacer | None = None
        if owner.adaptive:
            self.pacer = owner.pacer = Pacer(max_window=owner.concurrency)

    @property
    def owner(self) -> MeteredJudge:
        """The judge whose slots these are."""
        return self._owner

    async def __aenter__(self) -> None:
        await self.enter({}, retry=False)

    async def enter(self, costs: Costs, *, retry: bool) -> None:
        """Wait for a slot (and, adaptive, for the pacing to let a call of ``costs`` go)."""
        if self.pacer is not None:
            await self.pacer.enter(costs, retry=retry)
        else:
            await self._slots.acquire()
        owner = self._owner
        owner.in_flight += 1
        if owner.in_flight > owner.peak_in_flight:
            owner.peak_in_flight = owner.in_flight

    async def __aexit__(self, *exc: object) -> None:
        self._owner.in_flight -= 1
        if self.pacer is not None:
            self.pacer.leave()
        else:
            self._slots.release()


class _CallSlot:
    """One call's hold on the judge's slots, refused once the budget is spent: a call that
    queued for a slot, or waits to retry, is not sent past the budget."""

    __slots__ = ("_costs", "_gate", "attempts")

    def __init__(self, gate: _Gate, costs: Costs) -> None:
        self._gate = gate
        self._costs = costs
        self.attempts = 0
        """Attempts that were let through (sent)."""

    def __call__(self) -> _CallSlot:
        return self

    async def __aenter__(self) -> None:
        await self._gate.enter(self._costs, retry=self.attempts > 0)
        owner = self._gate.owner
        if not owner.budget_left():
            await self._gate.__aexit__()
            raise BudgetSpent(
                f"{owner.name}: the judge budget of ${owner.budget_usd:g} is spent "
                f"(${owner.spent_usd() or 0.0:.4f} so far); call not sent"
            )
        self.attempts += 1

    async def __aexit__(self, *exc: object) -> None:
        await self._gate.__aexit__()

    def observe_answer(self, headers: Mapping[str, str]) -> None:
        """An attempt was answered: the pacing learns from its rate-limit headers."""
        pacer = self._gate.pacer
        if pacer is not None:
            pacer.answered(read_limits(headers, time.time()))

    def observe_429(self, headers: Mapping[str, str], wait_s: float | None) -> None:
        """An attempt was answered 429: counted, and the pacing backs off."""
        self._gate.owner.answered_429 += 1
        pacer = self._gate.pacer
        if pacer is not None:
            pacer.refused(read_limits(headers, time.time()), wait_s)
