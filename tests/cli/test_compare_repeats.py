"""`checkweigh compare` of two `run --repeat 5` runs of a flaky agent: compared task by task,
so the same agent run twice is no regression, and ten tasks that break are one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from checkweigh.cli import app

AGENT = """\
import hashlib
import os
import threading

RATES = [1.0, 1.0, 0.9, 0.8, 0.6, 0.5]
_lock = threading.Lock()
_tries = {}


def run(request):
    seed, n = os.environ["AGENT_SEED"], request["n"]
    with _lock:  # which try of this task this is, in this run
        k = _tries[seed, n] = _tries.get((seed, n), -1) + 1
    draw = int(hashlib.sha256(f"{seed}:{n}:{k}".encode()).hexdigest()[:8], 16) / 2**32
    rate = RATES[n % len(RATES)]
    if str(n) in os.environ.get("AGENT_BROKEN", "").split(","):
        rate *= 0.2
    ok = draw < rate
    return {
        "trace": [{"kind": "assistant", "content": "Booked the meeting for everyone."}],
        "final_state": {"success": ok, "time": "10:00" if ok else "11:00"},
    }
"""

SUITE = """\
name: flaky
cases: cases.jsonl
target:
  agent: flaky_agent:run
  concurrency: 4
checks:
  correct_time: {type: equals, path: final_state.time, value: "10:00"}
rubrics:
  completion:
    weights: {correct_time: 1.0}
thresholds: {cases_pass_threshold: 0.0, metrics_pass_threshold: 0.0}
"""

runner = CliRunner()


def _runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, broken: str) -> str:
    (tmp_path / "flaky_agent.py").write_text(AGENT)
    (tmp_path / "suite.yaml").write_text(SUITE)
    (tmp_path / "cases.jsonl").write_text(
        "".join(json.dumps({"id": f"task-{i:02d}", "input": {"n": i}}) + "\n" for i in range(30))
    )
    db = f"sqlite:///{tmp_path / 'r.db'}"
    for seed, broke in (("monday", ""), ("tuesday", broken)):
        monkeypatch.setenv("AGENT_SEED", seed)
        monkeypatch.setenv("AGENT_BROKEN", broke)
        done = runner.invoke(
            app, ["run", str(tmp_path / "suite.yaml"), "--db", db, "--repeat", "5", "-q"]
        )
        assert done.exit_code == 0, done.output
    return db


def test_the_same_flaky_agent_twice_is_no_regression(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _runs(tmp_path, monkeypatch, broken="")
    out_json = tmp_path / "cmp.json"
    done = runner.invoke(
        app, ["compare", "previous", "latest", "--db", db, "--json", str(out_json)]
    )
    assert done.exit_code == 0, done.output
    assert "REGRESSION" not in done.stdout.replace("NO REGRESSION", "")
    assert "30 task(s) tried in both runs, compared task by task" in done.stdout
    assert "per task: pass rate = passes / tries of the task in each run" in done.stdout
    assert "regressions:" not in done.stdout  # no try is paired with another by its number
    data = json.loads(out_json.read_text())
    assert data["per_task"] is True
    assert data["regression_detected"] is False
    assert data["regressions"] == []
    assert data["suite"][0]["metric"] == "mean task pass rate (%)"
    # this pair of runs happened to drop 2.7 points: past the 0-point threshold, and as
    # ordinary as flakiness gets (p 0.65): said as such, and not a regression
    assert data["verdict"] == "not_significant"
    assert data["threshold_exceeded"] is True
    assert data["suite"][0]["change"] == pytest.approx(-8 / 3)
    assert data["suite"][0]["p_value"] > 0.5
    assert "NOT SIGNIFICANT" in done.stdout
    # the flaky tasks moved both ways, and are listed as what they are
    assert all(t["base_tries"] == t["candidate_tries"] == 5 for t in data["tasks"])
    assert {t["case_id"] for t in data["tasks"]} <= {
        f"task-{i:02d}" for i in range(30) if i % 6 > 1
    }


def test_ten_broken_tasks_are_a_regression(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    broken = list(range(0, 30, 3))  # ten tasks, always-passing ones among them
    db = _runs(tmp_path, monkeypatch, broken=",".join(map(str, broken)))
    out_json, out_md = tmp_path / "cmp.json", tmp_path / "cmp.md"
    done = runner.invoke(
        app,
        [
            "compare",
            "previous",
            "latest",
            "--db",
            db,
            "--json",
            str(out_json),
            "--markdown",
            str(out_md),
        ],
    )
    assert done.exit_code == 1, done.output
    assert "REGRESSION" in done.stdout
    data = json.loads(out_json.read_text())
    assert (data["verdict"], data["regression_detected"], data["significant"]) == (
        "regression",
        True,
        True,
    )
    assert data["suite"][0]["p_value"] < 0.01
    dropped = {t["case_id"] for t in data["tasks"] if t["change"] < 0}
    assert {"task-00", "task-06", "task-12", "task-18", "task-24"} <= dropped  # rate 1.0 -> 0.2
    assert f"pass rate dropped: {len(dropped)} task(s) of 30" in done.stdout
    worst = data["tasks"][0]
    line = f"{worst['case_id']}: {worst['base_passes']}/5 -> {worst['candidate_passes']}/5 passed"
    assert line in done.stdout
    markdown = out_md.read_text()
    assert "### Tasks (runs with repeats)" in markdown
    assert f"**Pass rate dropped: {len(dropped)} task(s) of 30**" in markdown
