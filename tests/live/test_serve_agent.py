"""End to end, as a team would run it: ``checkweigh serve --monitor`` as a real process, the
example agent (the ``openai`` SDK, the official OpenAI instrumentation, the OpenTelemetry SDK
and its OTLP/HTTP exporter) sending its traces to it, and each request scored once, in its
window, as the same spans imported from a file are scored: what the instrumented program sends
is what checkweigh scores."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from checkweigh.cli import app
from checkweigh.core import Case, VerdictState
from checkweigh.store import Store, queue_state, windows
from checkweigh.testing import Reply, fake_llm_server, scripted_agents
from live.test_otel_agent import (
    EXAMPLE,
    PROMPTS,
    SCRIPT,
    Captured,
    assert_cases_are_the_requests,
)
from server.test_serve import _serving

TOKEN = "a-token-for-the-live-server"
MONITOR = """\
name: booking
suite: {suite}
window: 1h
filter:
  service: booking-agent
judge: openai:gpt-test
judge_cache: false
alerts:
  - check: availability_checked
    below: 0.9
"""


def _judge(request: dict[str, Any]) -> Reply:
    return Reply(json.dumps({"verdict": "yes", "reason": "matches the tool results"}))


def _agent(url: str, llm: str, env: dict[str, str]) -> list[dict[str, Any]]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "OPENAI_"))}
    done = subprocess.run(
        [sys.executable, str(EXAMPLE / "agent.py"), "--concurrency", "2"]
        + [a for p in PROMPTS for a in ("--prompt", p)],
        env={
            **base,
            "OPENAI_BASE_URL": llm,
            "OPENAI_API_KEY": "sk-test",
            "OTEL_EXPORTER_OTLP_ENDPOINT": url,
            "OTEL_EXPORTER_OTLP_HEADERS": f"Authorization=Bearer%20{TOKEN}",
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true",
            "OTEL_BSP_SCHEDULE_DELAY": "50",
            "OTEL_BLRP_SCHEDULE_DELAY": "50",
            **env,
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == ""  # every export accepted: no exporter warning
    return [json.loads(line) for line in done.stdout.splitlines()]


def _wait_scored(db: str, traces: int) -> None:
    began = time.monotonic()
    while True:
        with Store(db) as store:
            found = windows(store, "booking")
            if found and found[0].traces >= traces and queue_state(store).open == 0:
                return
        assert time.monotonic() - began < 60, "the traces were never scored"
        time.sleep(0.2)


@pytest.mark.parametrize("protocol", ["http/protobuf", "http/json"])
def test_the_agents_traces_are_scored_live_as_their_file_import_is(
    tmp_path: Path, protocol: str
) -> None:
    monitor = tmp_path / "monitor.yaml"
    monitor.write_text(MONITOR.format(suite=EXAMPLE / "suite.yaml"))
    db = f"sqlite:///{tmp_path / 'live.db'}"
    with (
        fake_llm_server([], respond=scripted_agents(SCRIPT)) as llm,
        fake_llm_server([], respond=_judge) as judge,
    ):
        env = {
            "CHECKWEIGH_TOKEN": TOKEN,
            "OPENAI_BASE_URL": judge.base_url,
            "OPENAI_API_KEY": "sk-judge",
            "CHECKWEIGH_CACHE_DIR": str(tmp_path / "cache"),
        }
        logs: list[str] = []
        args = ("--monitor", str(monitor), "--quiet-window", "0.5")
        with _serving(db, tmp_path, env, *args, logs=logs) as (url, _):
            extra = {"OTEL_EXPORTER_OTLP_PROTOCOL": protocol}
            if protocol == "http/protobuf":
                extra["OTEL_EXPORTER_OTLP_COMPRESSION"] = "gzip"
            outcomes = _agent(url, llm.base_url, extra)
            _wait_scored(db, len(PROMPTS))
            listed = httpx.get(f"{url}/api/runs", headers={"Authorization": f"Bearer {TOKEN}"})
            assert listed.status_code == 200
        judged = len(judge.requests)
    assert "monitor booking: suite booking-agent" in "".join(logs)
    assert TOKEN not in "".join(logs)

    with Store(db) as store:
        [window] = windows(store, "booking")
        assert (window.traces, window.judged, window.judge_calls) == (4, 4, judged)
        results = list(store.iter_results(window.run_id, with_cases=True))
        live = {r.case_id: r for r in results}
        # what the store kept of each trace, written as an OTLP/JSON file, imported offline
        from sqlalchemy import select

        from checkweigh.store._tables import LiveChunkRow

        with store.engine.connect() as conn:
            bodies = [row[0] for row in conn.execute(select(LiveChunkRow.body))]
    assert len(live) == len(PROMPTS)  # each request scored exactly once
    (tmp_path / "kept.jsonl").write_bytes(b"\n".join(bytes(b) for b in bodies) + b"\n")
    imported = CliRunner().invoke(
        app, ["import", "otel", str(tmp_path / "kept.jsonl"), "--out", str(tmp_path / "c.jsonl")]
    )
    assert imported.exit_code == 0, imported.output
    offline = {
        c.id: c
        for c in map(Case.model_validate_json, (tmp_path / "c.jsonl").read_text().splitlines())
    }
    scored = {cid: Case.model_validate_json(r.body or b"") for cid, r in live.items()}
    assert sorted(offline) == sorted(scored)
    for cid, case in scored.items():
        assert case.trace == offline[cid].trace
        assert case.input == offline[cid].input
    # the live cases are the agent's requests, with what was said
    assert_cases_are_the_requests(Captured(outcomes, [], scored, ""))
    # and the verdicts: the booking that skipped the availability check fails its check
    rushed = next(o["trace_id"] for o in outcomes if "check-in with Dan" in o["prompt"])
    for cid, result in live.items():
        state = result.verdicts["availability_checked"].state
        if cid == rushed:
            assert state is VerdictState.FAILED
        else:  # checked first, or nothing booked at all
            assert state in (VerdictState.PASSED, VerdictState.NOT_APPLICABLE)
        assert result.verdicts["grounded_and_polite"].state is VerdictState.PASSED
    assert live[rushed].verdicts["no_tool_error"].state is VerdictState.FAILED
