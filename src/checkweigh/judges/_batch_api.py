"""Provider batch APIs: many judge calls submitted as one batch, answered hours later at a
lower price.

A judge whose provider has a batch API (OpenAI's Batch API, Anthropic's Message Batches)
offers a :class:`BatchBackend` through ``judge.batch_backend()``. A run in
``judge: {mode: batch}`` collects its judge calls, submits them, keeps the batch ids with the
run (so an interrupted run resumes and never pays twice), polls, and answers each call from the
batch's results.

Not to be confused with ``--judge-batch`` (:mod:`._batch`), which puts a case's yes/no checks
to the judge as one checklist call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from ._model import JudgeReply, JudgeRequest

BatchState = Literal["in_progress", "ended", "failed", "expired", "cancelled"]
"""Where a batch stands. ``ended``: every item has a result (succeeded or not); ``failed``,
``expired``, ``cancelled``: the batch as a whole stopped, and items without a result are
failures."""


@dataclass(frozen=True, slots=True)
class BatchProgress:
    """One poll of a submitted batch."""

    batch_id: str
    state: BatchState
    total: int
    """Items submitted."""
    succeeded: int = 0
    """Items answered so far."""
    failed: int = 0
    """Items errored, expired or cancelled so far."""
    detail: str | None = None
    """The provider's reason when the batch as a whole failed (validation errors, say)."""

    @property
    def done(self) -> bool:
        """No further poll will change the results."""
        return self.state != "in_progress"


@dataclass(frozen=True, slots=True)
class BatchItemFailure:
    """An item of a batch that got no answer; its verdict ends errored with ``reason``."""

    reason: str
    """E.g. ``"expired"``, ``"cancelled"``, ``"errored: 400 invalid_request_error: ..."``."""


@runtime_checkable
class BatchBackend(Protocol):
    """A provider's batch API for one judge model.

    ``custom_id`` values are the caller's: unique within a batch, 1-64 characters of
    ``[A-Za-z0-9_-]`` (Anthropic's rule, the stricter of the two).
    """

    @property
    def name(self) -> str:
        """``provider:model``, the same as the judge's."""
        ...

    @property
    def max_items(self) -> int:
        """The most requests one batch may hold (the caller splits larger sets)."""
        ...

    async def submit(self, items: Sequence[tuple[str, JudgeRequest]]) -> str:
        """Submit ``(custom_id, request)`` pairs as one batch; returns the batch id.

        Raises:
            JudgeError: the batch could not be created (the message names why).
        """
        ...

    async def progress(self, batch_id: str) -> BatchProgress:
        """Poll the batch.

        Raises:
            JudgeError: the provider could not be asked (after retries) or has no such batch.
        """
        ...

    async def results(self, batch_id: str) -> dict[str, JudgeReply | BatchItemFailure]:
        """Every item of a batch that is done, by ``custom_id``: its reply (usage counted
        as the provider reports it) or why it got none. Items missing from the provider's
        output are failures, never dropped.

        Raises:
            JudgeError: the results could not be fetched.
        """
        ...

    async def cancel(self, batch_id: str) -> None:
        """Ask the provider to stop the batch (items already answered are still billed)."""
        ...
