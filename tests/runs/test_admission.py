"""Recorded cases are admitted as fast as the judge's pool takes them: its limit, never the
agent's concurrency, bounds a judged run of recorded cases."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from checkweigh.judges import JudgeReply, JudgeRequest, MeteredJudge
from checkweigh.runs import RunOptions, arun
from checkweigh.suites import load_suite

SUITE = """\
name: faithful
cases: cases.jsonl
checks:
  grounded:
    type: judge
    question: Is every claim of the reply supported by the retrieved passages?
rubrics:
  rag:
    weights: {grounded: 1.0}
"""


class SlowYes:
    """A judge that takes 20 ms a call and says yes."""

    name = "slow:yes"

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        await asyncio.sleep(0.02)
        return JudgeReply(text='{"reason": "supported", "verdict": "yes"}', model="yes")


def _suite(folder: Path, n: int) -> Path:
    lines = [
        {
            "id": f"rag-{i:03d}",
            "input": f"What does policy {i} cover?",
            "trace": [{"kind": "assistant", "content": f"Policy {i} covers water damage."}],
        }
        for i in range(n)
    ]
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in lines))
    (folder / "suite.yaml").write_text(SUITE)
    return folder / "suite.yaml"


def test_the_judge_pool_is_kept_full_by_default(tmp_path: Path) -> None:
    suite = load_suite(_suite(tmp_path, 200))
    for limit in (16, 48):
        judge = MeteredJudge(SlowYes(), concurrency=limit)
        report = asyncio.run(arun(suite, judge=judge))
        assert len(report.results) == 200
        stats = report.summary.judge
        assert stats is not None
        assert (stats.calls, stats.peak_in_flight, stats.concurrency) == (200, limit, limit)
        # every slot of the pool was in use at once (before, 8 cases were admitted at a time)
        assert judge.peak_in_flight == limit


def test_the_agent_concurrency_does_not_bound_recorded_cases(tmp_path: Path) -> None:
    # --concurrency limits agent calls only: a run of recorded cases that sets it still keeps
    # the judge's pool full
    suite = load_suite(_suite(tmp_path, 60))
    judge = MeteredJudge(SlowYes(), concurrency=16)
    asyncio.run(arun(suite, RunOptions(concurrency=3), judge=judge))
    assert judge.peak_in_flight == 16
