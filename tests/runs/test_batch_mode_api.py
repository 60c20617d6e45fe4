"""Batch mode through the Python API (``checkweigh.arun`` over ``RunOptions``) with a judge
object the caller passes: its batch API answers every call, the object itself is never asked,
and a judge object without a batch API is refused in one line naming it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sqlalchemy import select

import checkweigh as cw
from checkweigh.errors import InputError
from checkweigh.judges import BatchProgress, JudgeReply, JudgeRequest, ScriptedJudge
from checkweigh.runs import JudgeSetup, RunOptions
from checkweigh.store import Store
from checkweigh.store._tables import RunRow
from support.judge_suite import CASES, judge_suite
from support.memory_batches import MemoryBatches, says_no_to

BATCH = RunOptions(judge=JudgeSetup(mode="batch", poll_s=0.01))


class BatchableJudge:
    """A judge object with a batch API; its own ``complete`` counts the sync calls."""

    def __init__(self, backend: MemoryBatches) -> None:
        self.backend = backend
        self.sync_calls = 0

    @property
    def name(self) -> str:
        return self.backend.name

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        self.sync_calls += 1
        return JudgeReply(text=self.backend.respond(request), model="gpt-test")

    def batch_backend(self) -> MemoryBatches:
        return self.backend


def test_a_callers_judge_object_answers_through_its_batch_api(tmp_path: Path) -> None:
    judge = BatchableJudge(MemoryBatches(says_no_to("Done."), polls=3))
    report = asyncio.run(cw.arun(judge_suite(tmp_path / "s"), BATCH, judge=judge))
    assert report.status.value == "complete"
    assert judge.sync_calls == 0
    assert judge.backend.submitted == CASES
    grounded = {r.case_id: r.verdicts["grounded"].state.value for r in report.results}
    assert grounded["terse"] == "failed"
    assert sorted(set(grounded.values())) == ["failed", "passed"]
    assert any("provider batch API" in n for n in report.summary.notes)


def test_expired_items_of_a_callers_judge_retry_through_the_object(tmp_path: Path) -> None:
    backend = MemoryBatches(
        says_no_to("Done."), expire=lambda r: "\nDone." in r.messages[-1].content
    )
    judge = BatchableJudge(backend)
    options = RunOptions(judge=JudgeSetup(mode="batch", poll_s=0.01, retry_sync=True))
    report = asyncio.run(cw.arun(judge_suite(tmp_path / "s"), options, judge=judge))
    assert judge.sync_calls == 1
    terse = next(r for r in report.results if r.case_id == "terse")
    assert terse.verdicts["grounded"].state.value == "failed"


def test_a_judge_object_without_a_batch_api_is_refused(tmp_path: Path) -> None:
    judge = ScriptedJudge([], model="scripted-model")
    with pytest.raises(InputError) as refused:
        asyncio.run(cw.arun(judge_suite(tmp_path / "s"), BATCH, judge=judge))
    assert refused.value.one_line() == (
        "--judge-mode: the judge scripted:scripted-model has no batch API; batch mode needs an "
        "openai: or anthropic: judge (use --judge-mode sync)"
    )
    assert judge.requests == []


def test_the_run_beats_its_heartbeat_while_it_polls(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'runs.db'}")
    beats: list[object] = []

    class Watched(MemoryBatches):
        async def progress(self, batch_id: str) -> BatchProgress:
            with store.engine.connect() as conn:
                beats.append(conn.execute(select(RunRow.heartbeat_at)).scalar_one())
            await asyncio.sleep(0.01)  # the clock moves between two polls
            return await super().progress(batch_id)

    judge = BatchableJudge(Watched(says_no_to("Done."), polls=3))
    report = asyncio.run(cw.arun(judge_suite(tmp_path / "s"), BATCH, judge=judge, store=store))
    assert report.status.value == "complete"
    assert len(beats) == 3
    assert beats[0] < beats[1] < beats[2]
