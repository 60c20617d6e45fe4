"""An in-memory provider batch API (:class:`~checkweigh.judges.BatchBackend`) for the run
engine's batch mode: each batch ends after a few polls, its items answered by a function of
the request, some of them expired on request. It counts what was submitted, so a test sees
what a provider would have billed."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from checkweigh.judges import (
    BatchItemFailure,
    BatchProgress,
    JudgeError,
    JudgeReply,
    JudgeRequest,
)

_CUSTOM_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
IN_TOKENS, OUT_TOKENS = 120, 18
"""What every answered item reports as its usage."""


@dataclass
class _Batch:
    items: list[tuple[str, JudgeRequest]]
    polls: int = 0


@dataclass
class MemoryBatches:
    """Batches answered by ``respond`` after ``polls`` polls each; an item whose request
    ``expire`` is true for ends ``expired``. ``on_submit`` runs once a batch was created
    (a test stops the run there)."""

    respond: Callable[[JudgeRequest], str]
    name: str = "openai:gpt-test"
    polls: int = 1
    max_items: int = 50_000
    expire: Callable[[JudgeRequest], bool] = lambda _request: False
    on_submit: Callable[[str], None] | None = None
    batches: dict[str, _Batch] = field(default_factory=dict)
    progress_calls: int = 0

    @property
    def submitted(self) -> int:
        """Items submitted over every batch."""
        return sum(len(b.items) for b in self.batches.values())

    async def submit(self, items: Sequence[tuple[str, JudgeRequest]]) -> str:
        ids = [cid for cid, _ in items]
        if len(set(ids)) != len(ids) or not all(_CUSTOM_ID.match(cid) for cid in ids):
            raise JudgeError(f"{self.name}: bad custom_ids {ids[:3]}")
        if len(items) > self.max_items:
            raise JudgeError(f"{self.name}: {len(items)} items over {self.max_items}")
        batch_id = f"batch_{len(self.batches) + 1:03d}"
        self.batches[batch_id] = _Batch(list(items))
        if self.on_submit is not None:
            self.on_submit(batch_id)
        return batch_id

    def _batch(self, batch_id: str) -> _Batch:
        try:
            return self.batches[batch_id]
        except KeyError:
            raise JudgeError(f"{self.name}: no batch {batch_id}") from None

    async def progress(self, batch_id: str) -> BatchProgress:
        self.progress_calls += 1
        batch = self._batch(batch_id)
        batch.polls += 1
        total = len(batch.items)
        if batch.polls < self.polls:
            return BatchProgress(batch_id, "in_progress", total)
        expired = sum(self.expire(r) for _, r in batch.items)
        return BatchProgress(batch_id, "ended", total, total - expired, expired)

    async def results(self, batch_id: str) -> dict[str, JudgeReply | BatchItemFailure]:
        out: dict[str, JudgeReply | BatchItemFailure] = {}
        for cid, request in self._batch(batch_id).items:
            if self.expire(request):
                out[cid] = BatchItemFailure("expired")
            else:
                text = self.respond(request)
                out[cid] = JudgeReply(
                    text=text, model="gpt-test", input_tokens=IN_TOKENS, output_tokens=OUT_TOKENS
                )
        return out

    async def cancel(self, batch_id: str) -> None:
        self._batch(batch_id)


def says_no_to(*replies: str) -> Callable[[JudgeRequest], str]:
    """A judge's answer to each request: no when the agent's last reply (a line of the
    prompt) is one of ``replies``, yes otherwise (as ``judge_suite.says_no_to`` over HTTP)."""
    import json

    def answer(request: JudgeRequest) -> str:
        prompt = request.messages[-1].content
        verdict = "no" if any(f"\n{text}" in prompt for text in replies) else "yes"
        return json.dumps({"verdict": verdict, "reason": f"judged {verdict}"})

    return answer
