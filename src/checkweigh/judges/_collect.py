"""Judge calls collected for a provider's batch API (``judge: {mode: batch}``).

A :class:`BatchCollector` stands where the provider judge would answer: its ``complete()``
parks the request and waits. A driver (``checkweigh.runs``) takes what is parked once every
evaluation in flight is waiting, submits it as one batch, polls, and hands each answer back,
so a check that asks more than once (samples, faithfulness's two steps) goes in rounds.

The cache stays in front (``CachedJudge(BatchCollector(MeteredJudge(...)))``): a cached
answer never parks, and an answer from a batch is remembered as a sync one is.
"""

from __future__ import annotations

import asyncio
import contextvars
from dataclasses import dataclass, field
from typing import TypeVar

from ..core import CheckJudgeStats, JudgeStats
from ._batch_api import BatchBackend, BatchItemFailure
from ._cache import cache_key
from ._exchanges import current_check
from ._metered import OUTSIDE_CHECKS, BudgetSpent, MeteredJudge, Prices
from ._model import JudgeError, JudgeModel, JudgeReply, JudgeRequest

EVALUATION: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "checkweigh_batch_evaluation", default=None
)
"""The evaluation (one execution of one case) a parked call belongs to, set by the runner
that starts it: the driver submits once every evaluation in flight has a call parked."""


BATCH_DISCOUNT = 0.5
"""The share of the list price a provider's batch API takes off (OpenAI's Batch API and
Anthropic's Message Batches both bill batch tokens at 50%)."""

BUDGET_SPENT = BatchItemFailure("budget")
"""The answer of a call not submitted because the judge budget was spent."""


def batch_backend_of(judge: object) -> BatchBackend | None:
    """The batch API of ``judge`` or of a judge it wraps (the provider clients offer one
    through ``batch_backend()``; None from it, as for Ollama, means the provider has none),
    else None."""
    layer, depth = judge, 0
    while layer is not None and depth < 8:  # wrappers nest a few deep at most
        make = getattr(layer, "batch_backend", None)
        if callable(make):
            backend = make()
            return backend if isinstance(backend, BatchBackend) else None
        layer, depth = getattr(layer, "judge", None), depth + 1
    return None


def custom_id(key: str, ordinal: int) -> str:
    """The batch item id of the ``ordinal``-th identical request with cache key ``key``:
    the same request gets the same id in every process, so results match requests across
    a resume (at most 64 characters of ``[A-Za-z0-9_-]``)."""
    return f"{key[:48]}-{ordinal}"


@dataclass
class _Counts:
    """Batch calls and their tokens (the judge counts them among all its calls)."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0

    def add(self, reply: JudgeReply | None) -> None:
        self.calls += 1
        if reply is not None:
            self.input_tokens += reply.input_tokens
            self.output_tokens += reply.output_tokens
            self.cached_input_tokens += reply.cached_input_tokens
            self.cache_write_tokens += reply.cache_write_tokens

    def discount(self, prices: Prices | None) -> float:
        """What the batch price took off the list price of these calls (prompt-cached
        input at its own rate, as the judge's cost counts it)."""
        if prices is None:
            return 0.0
        return BATCH_DISCOUNT * prices.cost(
            self.input_tokens,
            self.output_tokens,
            self.cached_input_tokens,
            self.cache_write_tokens,
        )

    def figures(self) -> dict[str, int]:
        return {
            "batch_calls": self.calls,
            "batch_input_tokens": self.input_tokens,
            "batch_output_tokens": self.output_tokens,
        }


@dataclass(eq=False)
class Parked:
    """A judge call waiting for its batch."""

    custom_id: str
    request: JudgeRequest
    evaluation: int | None
    answer: asyncio.Future[JudgeReply | BatchItemFailure] = field(repr=False)


class BatchCollector:
    """A judge whose calls wait for a provider batch (see the module's docstring).

    Args:
        judge: the judge behind it (a :class:`MeteredJudge` counts the batch calls at batch
            prices; a failed item retried synchronously goes through it as a sync call).
        backend: the provider's batch API for ``judge``'s model.
        retry_sync: ask ``judge`` synchronously for an item the batch did not answer
            (expired, cancelled, errored), instead of ending its verdict errored.
    """

    def __init__(self, judge: JudgeModel, backend: BatchBackend, *, retry_sync: bool) -> None:
        self.judge = judge
        self.backend = backend
        self.retry_sync = retry_sync
        self.parked: dict[str, Parked] = {}
        """Calls waiting, by custom_id, in the order they came."""
        self.retried = 0
        """Items the batch did not answer that were asked again synchronously."""
        self._ordinals: dict[str, int] = {}
        self._batch = _Counts()
        self._batch_by_check: dict[str, _Counts] = {}
        self._changed: asyncio.Event | None = None

    @property
    def name(self) -> str:
        """The wrapped judge's name (so the cache keys are a sync run's)."""
        return self.judge.name

    @property
    def metered(self) -> MeteredJudge | None:
        """The judge that counts the calls, when it does."""
        return self.judge if isinstance(self.judge, MeteredJudge) else None

    def stats(self) -> JudgeStats:
        """The wrapped judge's counts, its batch calls priced at the batch price (the list
        price less :data:`BATCH_DISCOUNT`) and counted apart (``batch_calls``, ...)."""
        metered = self.metered
        if metered is None:
            return JudgeStats(judge=self.name, calls=self._batch.calls, **self._batch.figures())
        stats, prices = metered.stats(), metered.prices
        per_check = dict(stats.per_check)
        for check, counts in self._batch_by_check.items():
            part = per_check.get(check) or CheckJudgeStats()
            per_check[check] = _priced(part, counts, prices)
        total = _priced(stats, self._batch, prices)
        # a batch item has no latency of its own: the mean is the sync calls'
        synced = stats.calls - self._batch.calls
        mean = stats.mean_latency_ms
        if mean is not None:
            mean = mean * stats.calls / synced if synced else None
        return total.model_copy(update={"per_check": per_check, "mean_latency_ms": mean})

    def spent_usd(self) -> float | None:
        """The judge's spend so far, batch calls at the batch price (None without prices)."""
        metered = self.metered
        spent = metered.spent_usd() if metered is not None else None
        if metered is None or spent is None:
            return None
        return spent - self._batch.discount(metered.prices)

    def changed(self) -> asyncio.Event:
        """Set whenever a call parks (the driver clears it)."""
        if self._changed is None:
            self._changed = asyncio.Event()
        return self._changed

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        """Park ``request`` until the driver answers it from a batch.

        Raises:
            JudgeError: the batch did not answer it (``"batch: expired"``, say) and no
                synchronous retry was asked for, or the retry failed.
        """
        key = cache_key(self.name, request)
        ordinal = self._ordinals.get(key, 0)
        self._ordinals[key] = ordinal + 1
        cid = custom_id(key, ordinal)
        answer: asyncio.Future[JudgeReply | BatchItemFailure]
        answer = asyncio.get_running_loop().create_future()
        self.parked[cid] = Parked(cid, request, EVALUATION.get(), answer)
        self.changed().set()
        try:
            got = await answer
        finally:
            self.parked.pop(cid, None)
        metered = self.metered
        if got is BUDGET_SPENT and metered is not None:
            metered.count_budget_stop()
            raise BudgetSpent(
                f"{self.name}: the judge budget of ${metered.budget_usd:g} is spent "
                f"(${self.spent_usd() or 0.0:.4f} so far); call not submitted"
            )
        reply = got if isinstance(got, JudgeReply) else None
        # in the asking check's context: counted under it
        if metered is not None:
            metered.count_batch(reply)
        self._batch.add(reply)
        self._batch_by_check.setdefault(current_check() or OUTSIDE_CHECKS, _Counts()).add(reply)
        if reply is not None:
            return reply
        assert isinstance(got, BatchItemFailure)
        if not self.retry_sync:
            raise JudgeError(f"batch: {got.reason}")
        self.retried += 1
        return await self.judge.complete(request)

    def budget_left(self) -> bool:
        """Whether another round may be submitted: the spend so far, at batch prices, is
        under the judge's budget (a round, once submitted, is paid for whatever it costs)."""
        metered, spent = self.metered, self.spent_usd()
        if metered is None or metered.budget_usd is None or spent is None:
            return True
        return spent < metered.budget_usd

    def waiting(self) -> list[Parked]:
        """The parked calls not answered yet."""
        return [p for p in self.parked.values() if not p.answer.done()]

    def batch_note(self) -> str | None:
        """What the report says about items asked again synchronously."""
        if not self.retried:
            return None
        return (
            f"{self.retried} judge call(s) the batch did not answer were asked again "
            "synchronously (--judge-retry-sync), at the list price"
        )


_Stats = TypeVar("_Stats", JudgeStats, CheckJudgeStats)


def _priced(stats: _Stats, batch: _Counts, prices: Prices | None) -> _Stats:
    """``stats`` with its batch calls counted apart and priced at the batch price."""
    cost = stats.cost_usd
    update: dict[str, object] = {**batch.figures()}
    if cost is not None:
        update["cost_usd"] = cost - batch.discount(prices)
    return stats.model_copy(update=update)
