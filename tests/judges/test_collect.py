"""The batch collector's item ids: deterministic from the request (its cache key, then an
ordinal among identical requests), so a resumed run finds its items in the stored batches."""

from __future__ import annotations

import asyncio

from checkweigh.judges import (
    BatchCollector,
    BatchItemFailure,
    JudgeError,
    JudgeReply,
    JudgeRequest,
    Message,
    ScriptedJudge,
    cache_key,
)
from support.memory_batches import MemoryBatches, says_no_to


def _request(text: str) -> JudgeRequest:
    return JudgeRequest(
        messages=(Message(role="system", content="Judge."), Message(role="user", content=text))
    )


async def _park(collector: BatchCollector, requests: list[JudgeRequest]) -> list[str]:
    """Park ``requests``, answer each from its item id, and return the ids in order."""
    asked = [asyncio.ensure_future(collector.complete(r)) for r in requests]
    await asyncio.sleep(0)
    ids = [p.custom_id for p in collector.waiting()]
    for p in collector.waiting():
        if p.custom_id.endswith("-1"):
            p.answer.set_result(BatchItemFailure("expired"))
        else:
            p.answer.set_result(JudgeReply(text=p.custom_id, model="m"))
    done = await asyncio.gather(*asked, return_exceptions=True)
    assert [d.text if isinstance(d, JudgeReply) else str(d) for d in done] == [
        ids[0],
        "batch: expired",
        ids[2],
    ]
    assert isinstance(done[1], JudgeError)
    return ids


def test_identical_requests_get_ordinals_and_the_ids_repeat_in_a_new_process() -> None:
    requests = [_request("Is it grounded?"), _request("Is it grounded?"), _request("Other?")]

    def collector() -> BatchCollector:
        inner = ScriptedJudge([], model="gpt-test")
        return BatchCollector(inner, MemoryBatches(says_no_to()), retry_sync=False)

    first = asyncio.run(_park(collector(), requests))
    key = cache_key("scripted:gpt-test", requests[0])
    other = cache_key("scripted:gpt-test", requests[2])
    assert first == [f"{key[:48]}-0", f"{key[:48]}-1", f"{other[:48]}-0"]
    assert all(len(i) <= 64 for i in first)
    assert asyncio.run(_park(collector(), requests)) == first  # as a resumed run asks again
