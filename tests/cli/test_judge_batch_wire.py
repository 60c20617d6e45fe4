"""``checkweigh run --judge-mode batch`` end to end through the real SDKs: the OpenAI client
against the fake provider's Batch API (a JSONL file upload, ``/v1/batches``, the output and
error files) and the Anthropic client against its Message Batches, both served by
:func:`checkweigh.testing.fake_llm_server` on 127.0.0.1.

Per wire: the verdicts equal a sync run's; a second run submits nothing (cached); a run
stopped after its batch was created resumes under the same id with no second batch; expired
items end errored with the reason, and are asked again synchronously on request; the cost is
half the list price, recomputed from the stored token counts.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from checkweigh.server import create_app
from checkweigh.store import Store, stored_batches
from checkweigh.testing import BatchScript, FakeLLM, Reply, fake_llm_server
from support.html_page import parse
from support.judge_suite import CASES, judge_suite, run_judged
from support.postgres import fresh_database

WIRES = [("openai", "openai:gpt-test"), ("anthropic", "anthropic:claude-test")]
FAST = ("--judge-mode", "batch", "--judge-poll", "0.01")


def _says_no_to_done(body: dict[str, Any]) -> Reply:
    """No when the agent's last reply was "Done.", yes otherwise (either wire's body)."""
    prompt = json.dumps(body["messages"][-1])
    verdict = "no" if "\\nDone." in prompt else "yes"
    return Reply(json.dumps({"verdict": verdict, "reason": f"judged {verdict}"}))


def _verdicts(db: Path) -> dict[str, str]:
    store = Store(f"sqlite:///{db}")
    run = store.get_run("latest")
    return {r.case_id: r.verdicts["grounded"].state.value for r in store.iter_results(run.id)}


@pytest.mark.parametrize(("wire", "judge"), WIRES)
def test_batch_verdicts_equal_sync_and_cached_calls_are_never_resubmitted(
    tmp_path: Path, wire: str, judge: str
) -> None:
    suite = judge_suite(tmp_path / "s")
    with fake_llm_server([], wire=wire, respond=_says_no_to_done) as server:
        code, out = run_judged(suite, server, tmp_path / "sync", judge=judge)
        assert code in (0, 1), out
        code, out = run_judged(suite, server, tmp_path / "batch", *FAST, judge=judge)
        assert code in (0, 1), out
        assert server.batches.stats()["batches"] == 1
        assert server.batches.stats()["items"] == CASES
        # the same run again: every answer is cached, nothing is submitted
        code, again = run_judged(suite, server, tmp_path / "batch", *FAST, judge=judge)
        assert code in (0, 1), again
        assert server.batches.stats()["batches"] == 1
        assert server.batches.stats()["items"] == CASES
    batched = _verdicts(tmp_path / "batch" / "runs.db")
    assert batched == _verdicts(tmp_path / "sync" / "runs.db")
    assert batched["terse"] == "failed"
    assert batched["ok-1"] == "passed"
    assert "every answer came from the judge cache" in again


def _interrupt_once_submitted(server: FakeLLM) -> threading.Thread:
    """Ctrl-C to this process as soon as the fake holds a batch (the run then polls it)."""

    def watch() -> None:
        deadline = time.monotonic() + 30
        while server.batches.stats()["batches"] == 0 and time.monotonic() < deadline:
            time.sleep(0.005)
        os.kill(os.getpid(), signal.SIGINT)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize(("wire", "judge"), WIRES)
def test_a_run_stopped_while_polling_resumes_without_paying_twice(
    tmp_path: Path, wire: str, judge: str
) -> None:
    suite = judge_suite(tmp_path / "s")
    with fake_llm_server([], wire=wire, respond=_says_no_to_done) as server:
        server.batches.script = BatchScript(polls=10**6)  # in progress while the run polls
        watcher = _interrupt_once_submitted(server)
        code, out = run_judged(suite, server, tmp_path, *FAST, judge=judge)
        watcher.join(5)
        assert code == 130, out
        store = Store(f"sqlite:///{tmp_path / 'runs.db'}")
        stopped = store.get_run("latest")
        assert stopped.status.value == "incomplete"
        assert f"--resume {stopped.id}" in out
        (kept,) = stored_batches(store, stopped.id)
        assert kept.judge == judge
        assert len(kept.custom_ids) == CASES

        server.batches.script = BatchScript(polls=1)
        code, out = run_judged(suite, server, tmp_path, *FAST, "--resume", stopped.id, judge=judge)
        assert code in (0, 1), out
        assert server.batches.stats()["batches"] == 1
        assert server.batches.stats()["items"] == CASES
    resumed = Store(f"sqlite:///{tmp_path / 'runs.db'}").get_run("latest")
    assert (resumed.id, resumed.status.value, resumed.executions) == (
        stopped.id,
        "complete",
        CASES,
    )
    assert kept.batch_id in out
    assert _verdicts(tmp_path / "runs.db")["terse"] == "failed"


@pytest.mark.parametrize(("wire", "judge"), WIRES)
def test_expired_items_are_errored_then_retried_synchronously_on_request(
    tmp_path: Path, wire: str, judge: str
) -> None:
    suite = judge_suite(tmp_path / "s")
    with fake_llm_server([], wire=wire, respond=_says_no_to_done) as server:
        server.batches.script = BatchScript(expire=lambda _custom_id: True)
        code, out = run_judged(suite, server, tmp_path / "plain", *FAST, judge=judge)
        assert code in (0, 1), out
        store = Store(f"sqlite:///{tmp_path / 'plain' / 'runs.db'}")
        run = store.get_run("latest")
        errors = {r.verdicts["grounded"].error for r in store.iter_results(run.id)}
        assert errors == {"batch: expired"}

        synced_before = len(server.requests)
        code, out = run_judged(
            suite, server, tmp_path / "retried", *FAST, "--judge-retry-sync", judge=judge
        )
        assert code in (0, 1), out
    retried = _verdicts(tmp_path / "retried" / "runs.db")
    assert retried["terse"] == "failed"
    assert retried["ok-1"] == "passed"
    assert "errored" not in retried.values()
    assert len(server.requests) >= synced_before + CASES


@pytest.mark.parametrize(("wire", "judge"), WIRES)
def test_the_cost_is_half_the_list_price_of_the_stored_tokens(
    tmp_path: Path, wire: str, judge: str
) -> None:
    suite = judge_suite(tmp_path / "s")
    with fake_llm_server([], wire=wire, respond=_says_no_to_done) as server:
        code, out = run_judged(
            suite, server, tmp_path, *FAST, "--judge-prices", "0.15,0.6", judge=judge
        )
    assert code in (0, 1), out
    stats = Store(f"sqlite:///{tmp_path / 'runs.db'}").get_run("latest").summary.judge
    assert stats is not None
    assert stats.batch_calls == stats.calls == CASES
    assert stats.input_tokens > 0
    assert stats.output_tokens > 0
    assert (stats.batch_input_tokens, stats.batch_output_tokens) == (
        stats.input_tokens,
        stats.output_tokens,
    )
    list_price = (stats.input_tokens * 0.15 + stats.output_tokens * 0.6) / 1e6
    assert stats.cost_usd == pytest.approx(list_price / 2)
    assert "by batch (half price)" in out
    # the run page says so too
    with Store(f"sqlite:///{tmp_path / 'runs.db'}") as store, TestClient(create_app(store)) as c:
        page = parse(c.get(f"/runs/{store.get_run('latest').id}").text)
    assert page.by_id("judge-batch").text == f"{CASES} by batch, at half price"


def test_an_ollama_judge_has_no_batch_api_and_is_refused(tmp_path: Path) -> None:
    suite = judge_suite(tmp_path / "s")
    code, out = run_judged(suite, None, tmp_path, *FAST, judge="ollama:llama3.1")
    assert code == 2
    assert out.strip().splitlines() == [
        "error: --judge-mode: the judge ollama:llama3.1 has no batch API; batch mode needs an "
        "openai: or anthropic: judge (use --judge-mode sync)"
    ]


def test_stop_and_resume_on_postgresql(tmp_path: Path) -> None:
    suite = judge_suite(tmp_path / "s")
    with fresh_database() as db, fake_llm_server([], respond=_says_no_to_done) as server:
        server.batches.script = BatchScript(polls=10**6)
        watcher = _interrupt_once_submitted(server)
        # the last --db wins over run_judged's SQLite file
        code, out = run_judged(suite, server, tmp_path, *FAST, "--db", db)
        watcher.join(5)
        assert code == 130, out
        with Store(db) as store:
            stopped = store.get_run("latest")
            assert [len(b.custom_ids) for b in stored_batches(store, stopped.id)] == [CASES]
        server.batches.script = BatchScript(polls=1)
        code, out = run_judged(suite, server, tmp_path, *FAST, "--db", db, "--resume", stopped.id)
        assert code in (0, 1), out
        assert server.batches.stats()["batches"] == 1
        with Store(db) as store:
            resumed = store.get_run("latest")
            assert (resumed.id, resumed.status.value, resumed.executions) == (
                stopped.id,
                "complete",
                CASES,
            )


@pytest.mark.parametrize(("wire", "judge"), WIRES)
def test_a_batch_the_provider_refuses_errors_its_verdicts_with_the_reason(
    tmp_path: Path, wire: str, judge: str
) -> None:
    suite = judge_suite(tmp_path / "s")
    with fake_llm_server([], wire=wire, respond=_says_no_to_done) as server:
        server.batches.script = BatchScript(invalid="max_tokens is too large for this model")
        code, out = run_judged(suite, server, tmp_path, *FAST, judge=judge)
    assert code in (0, 1), out
    store = Store(f"sqlite:///{tmp_path / 'runs.db'}")
    run = store.get_run("latest")
    errors = {r.verdicts["grounded"].error for r in store.iter_results(run.id)}
    assert len(errors) == 1
    (error,) = errors
    assert error is not None
    assert error.startswith("batch: ")
    assert "max_tokens is too large for this model" in error
    assert run.status.value == "complete"
