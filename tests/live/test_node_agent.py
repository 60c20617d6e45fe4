"""An agent in another language: a JavaScript program traced with the OpenTelemetry JS SDK
(tests/live/node_agent, its packages installed by ``.ci/run``) exports over OTLP/HTTP, JSON
and protobuf, to ``checkweigh serve --monitor``; each request is scored once, its failed tool
call seen by the checks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from checkweigh.store import Store, windows
from server.test_serve import _serving

AGENT = Path(__file__).parent / "node_agent"
TOKEN = "a-token-for-the-node-agent-test"
SUITE = """\
name: booking-js
cases: cases.jsonl
checks:
  checked:
    type: tool_called
    step: {name: check_availability}
  no_tool_error:
    type: count
    step: {kind: tool_call, error: true}
    max: 0
  replied:
    type: word_count
    path: output
    min: 3
rubrics:
  booking:
    weights: {checked: 1, no_tool_error: 1, replied: 1}
"""


def _installed() -> bool:
    return shutil.which("node") is not None and (AGENT / "node_modules").is_dir()


pytestmark = pytest.mark.skipif(
    not _installed() and not os.environ.get("CHECKWEIGH_REQUIRE_NODE_OTEL"),
    reason="the JS SDK is not installed: `npm ci --prefix tests/live/node_agent` (.ci/run does)",
)


def _node(url: str, protobuf: bool) -> list[str]:
    env = {**os.environ, "ENDPOINT": url, "TOKEN": TOKEN}
    if protobuf:
        env["PROTO"] = "1"
    done = subprocess.run(
        ["node", str(AGENT / "agent.mjs")], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == ""  # every export accepted
    ids: list[str] = json.loads(done.stdout)
    return ids


def test_a_javascript_agents_traces_are_scored(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(SUITE)
    (tmp_path / "monitor.yaml").write_text(
        "name: js\nsuite: suite.yaml\nwindow: 1h\nfilter: {service: booking-agent-js}\n"
    )
    db = f"sqlite:///{tmp_path / 'live.db'}"
    args = ("--monitor", str(tmp_path / "monitor.yaml"), "--quiet-window", "0.5")
    with _serving(db, tmp_path, {"CHECKWEIGH_TOKEN": TOKEN}, *args) as (url, _):
        sent = _node(url, protobuf=False) + _node(url, protobuf=True)
        began = time.monotonic()
        while True:
            with Store(db) as store:
                found = windows(store, "js")
                if found and found[0].traces == len(sent):
                    break
            assert time.monotonic() - began < 30, "the traces were never scored"
            time.sleep(0.2)
    with Store(db) as store:
        results = {r.case_id: r for r in store.iter_results(found[0].run_id, with_cases=True)}
    assert sorted(results) == sorted(sent)  # each request once, by its trace id
    for run in (sent[:5], sent[5:]):  # JSON, then protobuf: the last request's tool failed
        for i, trace_id in enumerate(run):
            verdicts = {n: v.state.value for n, v in results[trace_id].verdicts.items()}
            failed = i == 4
            assert verdicts == {
                "checked": "passed",
                "no_tool_error": "failed" if failed else "passed",
                "replied": "passed",
            }
            case = json.loads(results[trace_id].body or b"{}")
            assert case["input"] == f"Book a sync #{i} with Alice at 10:00"
            assert case["metadata"]["service.name"] == "booking-agent-js"
