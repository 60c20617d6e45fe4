"""``checkweigh run --judge-mode batch``: the judge calls of recorded cases collected and sent
through a provider's batch API, here an in-memory one put behind the real OpenAI judge (the
wire protocols are tested against the fake provider in ``test_judge_batch_wire.py``).

What is checked through the real command: the verdicts equal a sync run's; cached answers are
never submitted; a run stopped after its batch was created resumes under the same id without a
second batch; expired items end errored with the reason, or are asked again synchronously on
request; the cost is at half the list price; runs batch mode cannot serve are refused in one
line.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from checkweigh.judges import OpenAIJudge
from checkweigh.store import Store, stored_batches
from checkweigh.testing import fake_llm_server
from support.judge_suite import CASES, judge_suite, run_judged
from support.judge_suite import says_no_to as http_says_no_to
from support.memory_batches import IN_TOKENS, OUT_TOKENS, MemoryBatches, says_no_to

NO_TO = ("Done.",)
FAST = ("--judge-mode", "batch", "--judge-poll", "0.01")


@pytest.fixture
def batches(monkeypatch: pytest.MonkeyPatch) -> MemoryBatches:
    """The batch API the run's OpenAI judge offers: answers as the sync server does."""
    backend = MemoryBatches(says_no_to(*NO_TO), polls=2)
    monkeypatch.setattr(OpenAIJudge, "batch_backend", lambda self: backend, raising=False)
    return backend


def _verdicts(db: Path, ref: str = "latest") -> dict[str, dict[str, str]]:
    store = Store(f"sqlite:///{db}")
    run = store.get_run(ref)
    return {
        r.case_id: {name: v.state.value for name, v in r.verdicts.items()}
        for r in store.iter_results(run.id)
    }


def test_batch_verdicts_equal_a_sync_runs_and_nothing_is_sent_synchronously(
    tmp_path: Path, batches: MemoryBatches
) -> None:
    suite = judge_suite(tmp_path / "s")
    with fake_llm_server([], respond=http_says_no_to(*NO_TO)) as server:
        code, out = run_judged(suite, server, tmp_path / "sync")
        assert code in (0, 1), out
        sync = _verdicts(tmp_path / "sync" / "runs.db")
        code, out = run_judged(suite, server, tmp_path / "batch", *FAST)
        assert code in (0, 1), out
        assert len(server.requests) == CASES  # the sync run's only
    batched = _verdicts(tmp_path / "batch" / "runs.db")
    assert batched == sync
    assert {v["grounded"] for v in batched.values() if "grounded" in v} == {"passed", "failed"}
    assert len(batches.batches) == 1 and batches.submitted == CASES
    assert "judge batch batch_001 ended" in out
    store = Store(f"sqlite:///{tmp_path / 'batch' / 'runs.db'}")
    run = store.get_run("latest")
    assert run.config["judge_api"] == "batch"
    assert [b.batch_id for b in stored_batches(store, run.id)] == ["batch_001"]
    stats = run.summary.judge
    assert stats is not None and stats.batch_calls == stats.calls == CASES
