"""Anthropic's Message Batches as a :class:`~._batch_api.BatchBackend`: the requests go up
in one call, Anthropic answers them within 24 hours, and the results come back as JSONL.

Each request's ``params`` are what the judge would send synchronously (same system prompt,
messages and forced answer tool), so answers parse as a call's do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ._batch_api import BatchItemFailure, BatchProgress, BatchState
from ._batch_items import ERROR_STATUS, MISSING, SdkBatch, check_items, errored
from ._model import JudgeError, JudgeReply, JudgeRequest
from ._sdk import FormatRejected, judge_error, sdk_call

if TYPE_CHECKING:
    from ._anthropic import AnthropicJudge


_NOT_CREATED = frozenset({408, 409, 429, 529})
"""Statuses after which a batch was certainly not created (its creation may be retried)."""


class AnthropicBatch(SdkBatch["AnthropicJudge"]):
    """An :class:`~._anthropic.AnthropicJudge`'s calls, batched (see the module). Anthropic
    returns a line for every item of an ended batch."""

    max_items = 100_000
    """Anthropic takes up to 100,000 requests a batch."""

    def __init__(self, judge: AnthropicJudge) -> None:
        super().__init__(judge, judge._anthropic)

    async def submit(self, items: Sequence[tuple[str, JudgeRequest]]) -> str:
        """Create a batch of ``items``; returns its id.

        Raises:
            JudgeError: the items are not a valid batch, or Anthropic refused it.
        """
        ids = check_items(self.name, items, self.max_items)
        judge = self._judge
        requests = [
            {"custom_id": custom_id, "params": judge._params(request)}
            for custom_id, request in items
        ]
        sdk = judge._anthropic

        def unsafe(exc: BaseException) -> bool:
            # a batch's items cannot be matched to a listed batch, so a failure after which
            # the batch may exist (5xx, timeout, dropped connection) is not retried: a
            # second batch would be paid twice. 408/409/429/529 mean it was not created.
            status = getattr(exc, "status_code", None)
            return isinstance(exc, sdk.APIError) and status not in _NOT_CREATED

        async def create() -> Any:
            return await judge._client.messages.batches.create(requests=requests)

        try:
            # no attempt timeout of the retry loop (it retries every timeout): the SDK's
            # own timeout ends a hung attempt, and ``unsafe`` keeps it from being retried
            policy = replace(judge._retry, timeout_s=None)
            batch = await sdk_call(
                self.name, sdk, create, policy, secret=judge._secret, final=unsafe
            )
        except FormatRejected as exc:
            raise JudgeError(
                f"{exc}; not retried: the batch may exist (see Anthropic's console), and "
                "submitting again could pay twice"
            ) from None
        batch_id: str = batch.id
        self._submitted[batch_id] = ids
        return batch_id

    async def _retrieve(self, batch_id: str) -> Any:
        client = self._judge._client
        return await self._call(lambda: client.messages.batches.retrieve(batch_id))

    async def progress(self, batch_id: str) -> BatchProgress:
        """Poll the batch: its processing status and request counts.

        Raises:
            JudgeError: the provider could not be asked, or has no such batch.
        """
        batch = await self._retrieve(batch_id)
        counts = batch.request_counts
        failed = counts.errored + counts.canceled + counts.expired
        return BatchProgress(
            batch_id=batch_id,
            state=_state(batch),
            total=counts.processing + counts.succeeded + failed,
            succeeded=counts.succeeded,
            failed=failed,
        )

    async def results(self, batch_id: str) -> dict[str, JudgeReply | BatchItemFailure]:
        """Every item's reply or failure, from the batch's results file.

        Raises:
            JudgeError: the batch has not ended, or its results could not be fetched.
        """
        batch = await self._retrieve(batch_id)
        if batch.processing_status != "ended":
            raise judge_error(
                self.name, f"batch {batch_id} is still {batch.processing_status}", None
            )
        client = self._judge._client

        async def fetch() -> list[Any]:
            # the whole download is one attempt: a retry starts the file again
            lines = await client.messages.batches.results(batch_id)
            return [line async for line in lines]

        found: dict[str, JudgeReply | BatchItemFailure] = {}
        for line in await self._call(fetch):
            found[line.custom_id] = self._read(line.result)
        for custom_id in self._submitted.get(batch_id, ()):
            found.setdefault(custom_id, BatchItemFailure(MISSING))
        return found

    def _read(self, result: Any) -> JudgeReply | BatchItemFailure:
        kind = getattr(result, "type", None)
        if kind == "succeeded":
            try:
                return self._judge._reply(result.message, 0.0)
            except JudgeError as exc:
                return BatchItemFailure(f"errored: {exc}")
        if kind == "errored":
            error = getattr(getattr(result, "error", None), "error", None)
            kind = getattr(error, "type", None)
            status = ERROR_STATUS.get(kind) if isinstance(kind, str) else None
            return errored(status, kind, getattr(error, "message", None), self._judge._secret)
        if kind == "canceled":
            return BatchItemFailure("cancelled")
        if kind == "expired":
            return BatchItemFailure("expired")
        return errored(None, None, f"an unknown result type {kind!r}", self._judge._secret)

    async def cancel(self, batch_id: str) -> None:
        """Ask Anthropic to cancel the batch (it goes ``canceling``, then ``ended``)."""
        client = self._judge._client
        await self._call(lambda: client.messages.batches.cancel(batch_id))


def _state(batch: Any) -> BatchState:
    """A batch's :data:`~._batch_api.BatchState`: an ended batch someone cancelled reads
    ``cancelled`` (its unanswered items carry ``canceled`` results)."""
    if batch.processing_status != "ended":
        return "in_progress"
    return "cancelled" if batch.cancel_initiated_at is not None else "ended"
