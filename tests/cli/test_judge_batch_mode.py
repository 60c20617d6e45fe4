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
from typing import Any

import pytest

from checkweigh.judges import JudgeRequest, OpenAIJudge
from checkweigh.store import Store, stored_batches
from checkweigh.testing import Reply, fake_llm_server
from support.judge_suite import CASES, judge_suite, run_judged
from support.judge_suite import says_no_to as http_says_no_to
from support.memory_batches import IN_TOKENS, OUT_TOKENS, MemoryBatches, says_no_to
from support.recorded_suite import make_case

NO_TO = ("Done.",)
FAST = ("--judge-mode", "batch", "--judge-poll", "0.01")


@pytest.fixture
def batches(monkeypatch: pytest.MonkeyPatch) -> MemoryBatches:
    """The batch API the run's OpenAI judge offers: answers as the sync server does."""
    backend = MemoryBatches(says_no_to(*NO_TO), polls=2)
    monkeypatch.setattr(
        OpenAIJudge,
        "batch_backend",
        lambda self: backend if self.name.startswith("openai:") else None,  # not Ollama
        raising=False,
    )
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
    assert len(batches.batches) == 1
    assert batches.submitted == CASES
    assert "judge batch batch_001 ended" in out
    store = Store(f"sqlite:///{tmp_path / 'batch' / 'runs.db'}")
    run = store.get_run("latest")
    assert run.config["judge_api"] == "batch"
    assert [b.batch_id for b in stored_batches(store, run.id)] == ["batch_001"]
    stats = run.summary.judge
    assert stats is not None
    assert stats.batch_calls == stats.calls == CASES


def test_cached_answers_are_never_submitted(tmp_path: Path, batches: MemoryBatches) -> None:
    suite = judge_suite(tmp_path / "s")
    code, out = run_judged(suite, None, tmp_path, *FAST)
    assert code in (0, 1), out
    assert batches.submitted == CASES
    # two new cases: only their calls go in the second batch
    cases = suite.parent / "cases.jsonl"
    extra = [
        make_case("late-1", participants=["Alice", "Bob"], time="10:00", reply="Done."),
        make_case("late-2", participants=["Alice", "Bob"], time="10:00", reply="All set, 10:00."),
    ]
    cases.write_text(cases.read_text() + "".join(json.dumps(c) + "\n" for c in extra))
    code, out = run_judged(suite, None, tmp_path, *FAST)
    assert code in (0, 1), out
    assert [len(b.items) for b in batches.batches.values()] == [CASES, 2]
    verdicts = _verdicts(tmp_path / "runs.db")
    assert verdicts["late-1"]["grounded"] == "failed"
    assert verdicts["late-2"]["grounded"] == "passed"
    stats = Store(f"sqlite:///{tmp_path / 'runs.db'}").get_run("latest").summary.judge
    assert stats is not None
    assert (stats.cache_hits, stats.batch_calls) == (CASES, 2)
    # all cached: nothing is submitted at all, and the report says so
    code, out = run_judged(suite, None, tmp_path, *FAST)
    assert code in (0, 1), out
    assert len(batches.batches) == 2
    assert "every answer came from the judge cache" in out


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_run_stopped_after_its_batch_was_created_resumes_without_a_second_batch(
    tmp_path: Path, batches: MemoryBatches, sig: signal.Signals
) -> None:
    suite = judge_suite(tmp_path / "s")
    batches.polls = 10**6  # in progress as long as the first run polls
    # Ctrl-C (or SIGTERM) once the batch exists: the run is stopped while it polls
    batches.on_submit = lambda _batch_id: os.kill(os.getpid(), sig)
    code, out = run_judged(suite, None, tmp_path, *FAST)
    assert code == 130, out
    store = Store(f"sqlite:///{tmp_path / 'runs.db'}")
    stopped = store.get_run("latest")
    assert stopped.status.value == "incomplete"
    assert f"--resume {stopped.id}" in out
    assert "batch_001" in out
    assert [b.batch_id for b in stored_batches(store, stopped.id)] == ["batch_001"]

    batches.on_submit, batches.polls = None, 1  # done by the time the run is resumed
    code, out = run_judged(suite, None, tmp_path, *FAST, "--resume", stopped.id[:8])
    assert code in (0, 1), out
    assert len(batches.batches) == 1  # polled again, never submitted twice
    assert batches.submitted == CASES
    resumed = Store(f"sqlite:///{tmp_path / 'runs.db'}").get_run("latest")
    assert resumed.id == stopped.id
    assert resumed.status.value == "complete"
    assert resumed.executions == CASES
    assert any("0 submitted by this process, 1 resumed" in n for n in resumed.summary.notes)
    assert "judge batch batch_001 ended: 6 done, 0 failed of 6" in out
    assert _verdicts(tmp_path / "runs.db")["terse"]["grounded"] == "failed"


def test_resume_refuses_another_configuration_and_a_finished_run(
    tmp_path: Path, batches: MemoryBatches
) -> None:
    suite = judge_suite(tmp_path / "s")
    code, out = run_judged(suite, None, tmp_path, *FAST)
    assert code in (0, 1), out
    run_id = Store(f"sqlite:///{tmp_path / 'runs.db'}").get_run("latest").id
    code, out = run_judged(suite, None, tmp_path, *FAST, "--resume", run_id)
    assert code == 2
    assert f"--resume: run {run_id} is complete: there is nothing to resume" in out
    code, out = run_judged(
        suite, None, tmp_path, *FAST, "--resume", run_id, "--pass-threshold", "10"
    )
    assert code == 2
    assert "was made with another suite or settings (they differ in thresholds)" in out
    code, out = run_judged(suite, None, tmp_path, "--resume", run_id)
    assert code == 2
    assert "only a run judged in batch mode resumes" in out
    assert len(batches.batches) == 1


def _expire_terse(request: JudgeRequest) -> bool:
    return "\nDone." in request.messages[-1].content


def test_expired_items_end_errored_with_the_reason(tmp_path: Path, batches: MemoryBatches) -> None:
    batches.expire = _expire_terse
    suite = judge_suite(tmp_path / "s")
    code, out = run_judged(suite, None, tmp_path, *FAST)
    assert code in (0, 1), out
    assert "errored terse#0: errored: grounded: batch: expired" in out
    store = Store(f"sqlite:///{tmp_path / 'runs.db'}")
    run = store.get_run("latest")
    results = {r.case_id: r for r in store.iter_results(run.id)}
    terse = results["terse"].verdicts["grounded"]
    assert terse.state.value == "errored"
    assert terse.error == "batch: expired"
    assert all(
        r.verdicts["grounded"].state.value != "errored" for k, r in results.items() if k != "terse"
    )
    stats = run.summary.judge
    assert stats is not None
    assert (stats.batch_calls, stats.errors) == (CASES, 1)


def test_expired_items_are_asked_again_synchronously_on_request(
    tmp_path: Path, batches: MemoryBatches
) -> None:
    batches.expire = _expire_terse
    suite = judge_suite(tmp_path / "s")
    with fake_llm_server([], respond=http_says_no_to(*NO_TO)) as server:
        code, out = run_judged(suite, server, tmp_path, *FAST, "--judge-retry-sync")
        sent = [r["messages"][-1]["content"] for r in server.requests]
    assert code in (0, 1), out
    assert len(sent) == 1
    assert "\nDone." in sent[0]
    verdicts = _verdicts(tmp_path / "runs.db")
    assert verdicts["terse"]["grounded"] == "failed"
    run = Store(f"sqlite:///{tmp_path / 'runs.db'}").get_run("latest")
    assert run.summary.judge is not None
    assert (run.summary.judge.calls, run.summary.judge.batch_calls) == (CASES + 1, CASES)
    assert any("asked again synchronously" in n for n in run.summary.notes)


def test_batch_calls_cost_half_the_list_price(tmp_path: Path, batches: MemoryBatches) -> None:
    suite = judge_suite(tmp_path / "s")
    code, out = run_judged(suite, None, tmp_path, *FAST, "--judge-prices", "1000,1000")
    assert code in (0, 1), out
    stats = Store(f"sqlite:///{tmp_path / 'runs.db'}").get_run("latest").summary.judge
    assert stats is not None
    assert stats.batch_input_tokens == stats.input_tokens == CASES * IN_TOKENS
    assert stats.batch_output_tokens == stats.output_tokens == CASES * OUT_TOKENS
    # recomputed from the stored token counts: $1,000 per million both ways, halved
    list_price = (stats.input_tokens + stats.output_tokens) * 1000 / 1e6
    assert stats.cost_usd == pytest.approx(list_price / 2)
    assert stats.per_check["grounded"].cost_usd == pytest.approx(list_price / 2)
    assert "batch" in out


def test_runs_batch_mode_cannot_serve_are_refused_in_one_line(
    tmp_path: Path, batches: MemoryBatches
) -> None:
    suite = judge_suite(tmp_path / "s")
    live = suite.read_text().replace(
        "cases: cases.jsonl\n", "cases: cases.jsonl\ntarget:\n  agent: some_agent:run\n"
    )
    (suite.parent / "some_agent.py").write_text("def run(case):\n    return {}\n")
    (suite.parent / "live.yaml").write_text(live)
    code, out = run_judged(suite.parent / "live.yaml", None, tmp_path, *FAST)
    assert code == 2
    assert out.strip().splitlines() == [
        "error: --judge-mode: batch mode judges recorded cases only, and this suite runs a live "
        "agent (target:): use --judge-mode sync, or replay a recording (--replay-agent)"
    ]
    code, out = run_judged(suite, None, tmp_path, *FAST, judge="ollama:llama3.1")
    assert code == 2
    assert "error: --judge-mode: the judge ollama:llama3.1 has no batch API" in out
    code, out = run_judged(suite, None, tmp_path, "--judge-mode", "later")
    assert code == 2
    assert "--judge-mode: expected sync or batch, got 'later'" in out
    code, out = run_judged(suite, None, tmp_path, *FAST, "--workers", "2")
    assert code == 2
    assert "batch mode evaluates the cases in this process" in out
    assert not batches.batches
    assert (
        not (tmp_path / "runs.db").exists()
        or not Store(f"sqlite:///{tmp_path / 'runs.db'}").list_runs()
    )


def test_the_suites_judge_block_turns_batch_mode_on(tmp_path: Path, batches: MemoryBatches) -> None:
    block = "judge:\n  mode: batch\n  poll_s: 0.01\n  retry_sync: false\n"
    suite = judge_suite(tmp_path / "s", block=block)
    code, out = run_judged(suite, None, tmp_path)
    assert code in (0, 1), out
    assert batches.submitted == CASES
    bad = judge_suite(tmp_path / "bad", block="judge:\n  mode: later\n")
    code, out = run_judged(bad, None, tmp_path)
    assert code == 2
    assert "judge.mode" in out


_FAITHFUL = """\
  faithful:
    type: faithfulness
    threshold: 0.7
rubrics:
"""


def _faithfulness_answer(system: str, prompt: str) -> str:
    """Two statements per answer, both supported; one unsupported statement for "Done."."""
    if system.startswith("You decompose answers"):
        said = [{"text": "The meeting was booked.", "load_bearing": True}]
        said.append({"text": "The meeting is at 10:00.", "load_bearing": True})
        if "Done." in prompt:
            said = [{"text": "The task is finished.", "load_bearing": True}]
        return json.dumps({"statements": said})
    verdict = "no" if "The task is finished." in prompt else "yes"
    count = prompt.count("\n1. ") + prompt.count("\n2. ")
    rows = [{"index": i, "verdict": verdict, "reason": "the trace"} for i in range(1, count + 1)]
    return json.dumps({"answers": rows})


def _faithfulness_suite(folder: Path, batches: MemoryBatches) -> Path:
    """The judge suite plus a faithfulness check (two calls a case), answered by ``batches``."""
    plain = batches.respond

    def answer(request: JudgeRequest) -> str:
        system, prompt = request.messages[0].content, request.messages[-1].content
        if system.startswith(("You decompose answers", "You judge whether statements")):
            return _faithfulness_answer(system, prompt)
        return plain(request)

    batches.respond = answer
    suite = judge_suite(folder)
    text = suite.read_text().replace("rubrics:\n", _FAITHFUL, 1)
    suite.write_text(text.replace("grounded: 0.2\n", "grounded: 0.2\n      faithful: 0.2\n"))
    return suite


def test_checks_that_ask_twice_go_in_rounds_and_match_a_sync_run(
    tmp_path: Path, batches: MemoryBatches
) -> None:
    suite = _faithfulness_suite(tmp_path / "s", batches)

    def over_http(body: dict[str, Any]) -> Reply:
        system, prompt = body["messages"][0]["content"], body["messages"][-1]["content"]
        if system.startswith(("You decompose answers", "You judge whether statements")):
            return Reply(_faithfulness_answer(system, prompt))
        return http_says_no_to(*NO_TO)(body)

    with fake_llm_server([], respond=over_http) as server:
        code, out = run_judged(suite, server, tmp_path / "sync")
    assert code in (0, 1), out
    code, out = run_judged(suite, None, tmp_path / "batch", *FAST)
    assert code in (0, 1), out
    rounds = [[r.messages[0].content for _, r in b.items] for b in batches.batches.values()]
    assert len(rounds) == 2  # every case's first step together, then every second step
    assert sum(s.startswith("You decompose answers") for s in rounds[0]) == CASES
    assert len(rounds[0]) == 2 * CASES  # with the yes/no check's calls
    assert all(s.startswith("You judge whether statements") for s in rounds[1])
    assert len(rounds[1]) == CASES
    batched = _verdicts(tmp_path / "batch" / "runs.db")
    assert batched == _verdicts(tmp_path / "sync" / "runs.db")
    assert batched["terse"]["faithful"] == "failed"
    assert batched["ok-1"]["faithful"] == "passed"


def test_every_recorded_case_parks_together_split_at_the_providers_limit(
    tmp_path: Path, batches: MemoryBatches
) -> None:
    # more cases than a sync run admits at once (4 per judge slot: 128)
    many = [
        make_case(f"c{i:03d}", participants=["Alice", "Bob"], time="10:00", reply=reply)
        for i in range(300)
        for reply in ["Done." if i % 10 == 0 else f"Booked Alice and Bob at 10:00 (#{i})."]
    ]
    suite = judge_suite(tmp_path / "s")
    (suite.parent / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in many))
    code, out = run_judged(suite, None, tmp_path, *FAST)
    assert code in (0, 1), out
    assert len(batches.batches) == 1
    assert batches.submitted == 300
    batches.batches.clear()
    batches.max_items = 128
    code, out = run_judged(suite, None, tmp_path / "split", *FAST)
    assert code in (0, 1), out
    assert [len(b.items) for b in batches.batches.values()] == [128, 128, 44]
    verdicts = _verdicts(tmp_path / "split" / "runs.db")
    assert sum(v["grounded"] == "failed" for v in verdicts.values()) == 30


def test_a_spent_budget_submits_no_further_round(tmp_path: Path, batches: MemoryBatches) -> None:
    suite = _faithfulness_suite(tmp_path / "s", batches)
    # the first round (12 calls at $0.069 by batch) passes the budget: no second round
    report = tmp_path / "run.md"
    code, out = run_judged(
        suite,
        None,
        tmp_path,
        *FAST,
        *("--judge-prices", "1000,1000", "--judge-budget", "0.5", "--markdown", str(report)),
    )
    assert code in (0, 1), out
    assert len(batches.batches) == 1
    store = Store(f"sqlite:///{tmp_path / 'runs.db'}")
    run = store.get_run("latest")
    faithful = [r.verdicts["faithful"] for r in store.iter_results(run.id)]
    assert {(v.state.value, v.reason) for v in faithful} == {("errored", "budget")}
    stats = run.summary.judge
    assert stats is not None
    assert stats.budget_stopped == stats.per_check["faithful"].budget_stopped == CASES
    assert stats.cost_usd == pytest.approx(2 * CASES * 0.069)
    # the by-check table says which calls went by batch
    faithful_stats = stats.per_check["faithful"]
    assert faithful_stats.batch_calls == faithful_stats.calls > 0
    calls = f"{faithful_stats.calls} ({faithful_stats.batch_calls} by batch)"
    assert f"| faithful | {calls} |" in report.read_text()


@pytest.mark.parametrize("poll", ["0", "-1", "nan"])
def test_a_poll_interval_that_is_not_positive_seconds_is_refused(
    tmp_path: Path, batches: MemoryBatches, poll: str
) -> None:
    suite = judge_suite(tmp_path / "s")
    code, out = run_judged(suite, None, tmp_path, "--judge-mode", "batch", "--judge-poll", poll)
    assert code == 2
    assert out.strip().splitlines() == [f"error: --judge-poll: expected seconds > 0, got {poll}"]
    assert not batches.batches


def test_samples_of_one_check_go_together_with_distinct_item_ids(
    tmp_path: Path, batches: MemoryBatches
) -> None:
    suite = judge_suite(tmp_path / "s")
    text = suite.read_text().replace(
        "    question: Is every statement in the final answer supported by the trace?\n",
        "    question: Is every statement in the final answer supported by the trace?\n"
        "    samples: 3\n",
    )
    suite.write_text(text)
    code, out = run_judged(suite, None, tmp_path, *FAST)
    assert code in (0, 1), out
    (batch,) = batches.batches.values()
    ids = [cid for cid, _ in batch.items]
    assert len(ids) == len(set(ids)) == 3 * CASES
    assert {cid.rsplit("-", 1)[1] for cid in ids} == {"0"}  # each sample its own request
    verdicts = _verdicts(tmp_path / "runs.db")
    assert verdicts["terse"]["grounded"] == "failed"
    assert verdicts["ok-1"]["grounded"] == "passed"


def test_identical_calls_of_repeats_are_items_of_their_own(
    tmp_path: Path, batches: MemoryBatches
) -> None:
    suite = judge_suite(tmp_path / "s")
    code, out = run_judged(suite, None, tmp_path, *FAST, "--repeat", "2")
    assert code in (0, 1), out
    (batch,) = batches.batches.values()
    ids = sorted(cid for cid, _ in batch.items)
    keys = {cid.rsplit("-", 1)[0] for cid in ids}
    assert len(keys) == CASES
    assert ids == sorted(f"{key}-{n}" for key in keys for n in (0, 1))
    store = Store(f"sqlite:///{tmp_path / 'runs.db'}")
    assert store.get_run("latest").executions == 2 * CASES
