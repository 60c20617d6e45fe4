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

from ..core import JudgeStats
from ._batch_api import BatchBackend, BatchItemFailure
from ._cache import cache_key
from ._metered import BudgetSpent, MeteredJudge
from ._model import JudgeError, JudgeModel, JudgeReply, JudgeRequest

EVALUATION: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "checkweigh_batch_evaluation", default=None
)
"""The evaluation (one execution of one case) a parked call belongs to, set by the runner
that starts it: the driver submits once every evaluation in flight has a call parked."""


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
        self._changed: asyncio.Event | None = None

    @property
    def name(self) -> str:
        """The wrapped judge's name (so the cache keys are a sync run's)."""
        return self.judge.name

    def stats(self) -> JudgeStats:
        """The wrapped judge's counts."""
        if isinstance(self.judge, MeteredJudge):
            return self.judge.stats()
        return JudgeStats(judge=self.name)

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
        metered = self.judge if isinstance(self.judge, MeteredJudge) else None
        if got is BUDGET_SPENT and metered is not None:
            metered.count_budget_stop()
            raise BudgetSpent(
                f"{self.name}: the judge budget of ${metered.budget_usd:g} is spent "
                f"(${metered.spent_usd() or 0.0:.4f} so far); call not submitted"
            )
        if isinstance(got, JudgeReply):
            if metered is not None:  # in the asking check's context: counted under it
                metered.count_batch(got)
            return got
        if metered is not None:
            metered.count_batch(None)
        if not self.retry_sync:
            raise JudgeError(f"batch: {got.reason}")
        self.retried += 1
        return await self.judge.complete(request)

    def budget_left(self) -> bool:
        """Whether another round may be submitted: the spend so far is under the judge's
        budget (a round, once submitted, is paid for whatever it costs)."""
        return not isinstance(self.judge, MeteredJudge) or self.judge.budget_left()

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
