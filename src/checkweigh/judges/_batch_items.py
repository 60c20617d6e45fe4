"""What the OpenAI and Anthropic batch clients share: their judge and SDK calls with its
retries, checking the items before they are sent, and the one-line reason an item got no
answer."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from types import ModuleType
from typing import Generic, Protocol, TypeVar

from ._batch_api import BatchItemFailure
from ._model import JudgeError, JudgeRequest
from ._retry import RetryPolicy
from ._sdk import scrub, sdk_call

T = TypeVar("T")

_CUSTOM_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")

MISSING = "missing from the batch's results"
"""The reason of an item submitted and absent from everything the provider returned."""

ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
"""The HTTP status of each Anthropic error type (a batch item's error carries only the type)."""


def check_items(name: str, items: Sequence[tuple[str, JudgeRequest]], most: int) -> list[str]:
    """The custom_ids of ``items``, which must be a non-empty batch of at most ``most``.

    Raises:
        JudgeError: a custom_id is malformed or repeated, or the batch is empty or too large.
    """
    ids = [custom_id for custom_id, _ in items]
    if not ids or len(ids) > most:
        raise JudgeError(f"{name}: a batch holds 1 to {most} requests, got {len(ids)}")
    for custom_id in ids:
        if not isinstance(custom_id, str) or not _CUSTOM_ID.fullmatch(custom_id):
            raise JudgeError(
                f"{name}: batch custom_id {custom_id!r}: expected 1-64 characters of [A-Za-z0-9_-]"
            )
    if len(set(ids)) != len(ids):
        twice = next(i for i in ids if ids.count(i) > 1)
        raise JudgeError(f"{name}: batch custom_id {twice!r} is used twice")
    return ids


def errored(status: object, kind: object, message: object, secret: str | None) -> BatchItemFailure:
    """``errored: <status> <type>: <message>``, on one line, short, with the key scrubbed."""
    head = " ".join(str(part) for part in (status, kind) if part not in (None, ""))
    text = " ".join(str(message or "no message").split())[:300]
    return BatchItemFailure(
        scrub(f"errored: {head}: {text}" if head else f"errored: {text}", secret)
    )


class SdkJudge(Protocol):
    """What a batch client reads of the SDK judge it batches for."""

    @property
    def name(self) -> str: ...

    @property
    def _retry(self) -> RetryPolicy: ...

    @property
    def _secret(self) -> str | None: ...


J = TypeVar("J", bound=SdkJudge)


class SdkBatch(Generic[J]):
    """A judge's batch client: the judge, its SDK module, the custom_ids of the batches
    submitted through this client (an item absent from the results is then reported), and
    the batch API's calls made with the judge's retries."""

    max_items: int
    """The most requests the provider takes in one batch."""

    def __init__(self, judge: J, sdk: ModuleType) -> None:
        self._judge = judge
        self._sdk = sdk
        self._submitted: dict[str, list[str]] = {}

    @property
    def name(self) -> str:
        """``provider:model``, the judge's."""
        return self._judge.name

    async def _call(self, call: Callable[[], Awaitable[T]]) -> T:
        judge = self._judge
        return await sdk_call(judge.name, self._sdk, call, judge._retry, secret=judge._secret)
