"""OpenAI's Batch API as a :class:`~._batch_api.BatchBackend`: the requests go up as a JSONL
file (``purpose=batch``), a batch on ``/v1/chat/completions`` answers them within 24 hours,
and its output and error files bring the answers back.

Each request's body is the one the judge would post synchronously (same messages, same output
format), so answers parse as a call's do and prompts (and caches keyed on them) stay the same.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import orjson

from ._batch_api import BatchItemFailure, BatchProgress, BatchState
from ._batch_items import MISSING, SdkBatch, check_items, errored
from ._model import JudgeError, JudgeReply, JudgeRequest
from ._sdk import judge_error, scrub

if TYPE_CHECKING:
    from ._openai import OpenAIJudge


ENDPOINT = "/v1/chat/completions"

STATES: dict[str, BatchState] = {
    "validating": "in_progress",
    "in_progress": "in_progress",
    "finalizing": "in_progress",
    "cancelling": "in_progress",  # answers may still arrive until it is cancelled
    "completed": "ended",
    "failed": "failed",
    "expired": "expired",
    "cancelled": "cancelled",
}
"""OpenAI's batch statuses, in :data:`~._batch_api.BatchState` terms."""

_STOPPED = {"expired": "expired", "cancelled": "cancelled"}
"""The reason of an item without a line in a batch that stopped as a whole."""


class OpenAIBatch(SdkBatch["OpenAIJudge"]):
    """An :class:`~._openai.OpenAIJudge`'s calls, batched (see the module). A batch resumed
    by another process reads its custom_ids from its input file."""

    max_items = 50_000
    """OpenAI takes up to 50,000 requests a batch."""

    def __init__(self, judge: OpenAIJudge) -> None:
        super().__init__(judge, judge._openai)

    async def _content(self, file_id: str) -> bytes:
        client = self._judge._client

        async def fetch() -> bytes:
            response = await client.files.content(file_id)
            data: bytes = response.content
            return data

        return await self._call(fetch)

    async def submit(self, items: Sequence[tuple[str, JudgeRequest]]) -> str:
        """Upload ``items`` as a JSONL file and create a batch over it; returns its id.

        Raises:
            JudgeError: the items are not a valid batch, or the upload or creation failed.
        """
        ids = check_items(self.name, items, self.max_items)
        judge, client = self._judge, self._judge._client
        fmt = judge.output_format
        # stdlib json, as the SDK's own requests: it writes lone surrogates as escapes
        data = "".join(
            json.dumps(
                {"custom_id": custom_id, "method": "POST", "url": ENDPOINT}
                | {"body": judge._params(request, fmt)},
                separators=(",", ":"),
            )
            + "\n"
            for custom_id, request in items
        ).encode()
        upload = ("checkweigh-batch.jsonl", data, "application/jsonl")
        file = await self._call(lambda: client.files.create(file=upload, purpose="batch"))
        attempts: list[None] = []

        async def create() -> Any:
            attempts.append(None)
            if len(attempts) > 1:
                # the failed attempt may have created the batch before its answer was lost:
                # the input file is this submit's own, so a batch over it is that one
                page = await client.batches.list(limit=100)
                for made in page.data:
                    if made.input_file_id == file.id:
                        return made
            return await client.batches.create(
                input_file_id=file.id, endpoint=ENDPOINT, completion_window="24h"
            )

        batch = await self._call(create)
        batch_id: str = batch.id
        self._submitted[batch_id] = ids
        return batch_id

    async def _retrieve(self, batch_id: str) -> tuple[Any, BatchState]:
        client = self._judge._client
        batch = await self._call(lambda: client.batches.retrieve(batch_id))
        state = STATES.get(batch.status)
        if state is None:
            raise judge_error(
                self.name, f"batch {batch_id} has an unknown status {batch.status!r}", None
            )
        return batch, state

    async def progress(self, batch_id: str) -> BatchProgress:
        """Poll the batch: its state and request counts.

        Raises:
            JudgeError: the provider could not be asked, or has no such batch.
        """
        batch, state = await self._retrieve(batch_id)
        counts = batch.request_counts
        total = max(getattr(counts, "total", 0) or 0, len(self._submitted.get(batch_id, ())))
        return BatchProgress(
            batch_id=batch_id,
            state=state,
            total=total,
            succeeded=getattr(counts, "completed", 0) or 0,
            failed=getattr(counts, "failed", 0) or 0,
            detail=self._detail(batch) if state == "failed" else None,
        )

    def _detail(self, batch: Any) -> str:
        """Why a batch failed as a whole (OpenAI's validation errors, first three)."""
        errors = getattr(batch.errors, "data", None) or []
        said = [
            (f"line {e.line}: " if e.line is not None else "") + f"{e.code}: {e.message}"
            for e in errors[:3]
        ]
        text = "; ".join(said) if said else "no reason given"
        return scrub(" ".join(text.split())[:500], self._judge._secret)

    async def results(self, batch_id: str) -> dict[str, JudgeReply | BatchItemFailure]:
        """Every item's reply or failure, from the batch's output and error files.

        Raises:
            JudgeError: the batch is still running, or its files could not be fetched.
        """
        batch, state = await self._retrieve(batch_id)
        if state == "in_progress":
            raise judge_error(self.name, f"batch {batch_id} is still {batch.status}", None)
        found: dict[str, JudgeReply | BatchItemFailure] = {}
        for file_id in (batch.output_file_id, batch.error_file_id):
            if file_id:
                for line in (await self._content(file_id)).splitlines():
                    self._read(line, found)
        ids = self._submitted.get(batch_id)
        if ids is None:
            ids = _custom_ids(await self._content(batch.input_file_id))
        if state == "failed":
            missing = BatchItemFailure(f"batch failed: {self._detail(batch)}")
        else:
            missing = BatchItemFailure(_STOPPED.get(state, MISSING))
        for custom_id in ids:
            found.setdefault(custom_id, missing)
        return found

    def _read(self, line: bytes, found: dict[str, JudgeReply | BatchItemFailure]) -> None:
        """One line of an output or error file into ``found`` (a line without a custom_id
        is skipped: its item stays missing, and fails as such)."""
        try:
            row = orjson.loads(line)
        except orjson.JSONDecodeError:
            return
        custom_id = row.get("custom_id") if isinstance(row, dict) else None
        if not isinstance(custom_id, str):
            return
        secret = self._judge._secret
        error, response = row.get("error"), row.get("response")
        if isinstance(error, dict):
            code = error.get("code")
            if code == "batch_expired":
                found[custom_id] = BatchItemFailure("expired")
            elif code == "batch_cancelled":
                found[custom_id] = BatchItemFailure("cancelled")
            else:
                found[custom_id] = errored(None, code, error.get("message"), secret)
            return
        if not isinstance(response, dict):
            found[custom_id] = errored(None, None, "a line with neither response nor error", secret)
            return
        status, body = response.get("status_code"), response.get("body")
        if status != 200:
            detail = body.get("error") if isinstance(body, dict) else None
            detail = detail if isinstance(detail, dict) else {"message": str(body)[:200]}
            found[custom_id] = errored(status, detail.get("type"), detail.get("message"), secret)
            return
        try:
            found[custom_id] = self._judge._reply(orjson.dumps(body), 0.0)
        except JudgeError as exc:
            found[custom_id] = BatchItemFailure(f"errored: {exc}")

    async def cancel(self, batch_id: str) -> None:
        """Ask OpenAI to cancel the batch (it goes ``cancelling``, then ``cancelled``)."""
        client = self._judge._client
        await self._call(lambda: client.batches.cancel(batch_id))


def _custom_ids(data: bytes) -> list[str]:
    """The custom_ids of a batch's input file."""
    ids: list[str] = []
    for line in data.splitlines():
        try:
            row = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(row, dict) and isinstance(row.get("custom_id"), str):
            ids.append(row["custom_id"])
    return ids
