"""Ctrl-C or SIGTERM in the middle of a run keeps every finished case and marks the run
incomplete; the count printed is the count stored."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from checkweigh.store import RunStatus, Store
from support import cli_process as cli

AGENT = """\
import time


def run(request):
    time.sleep(0.15)
    return {
        "trace": [{"kind": "assistant", "content": "Booked the meeting at 10:00 for everyone."}],
        "final_state": {"success": True, "time": "10:00"},
    }
"""

SUITE = """\
name: slow
cases: cases.jsonl
target:
  agent: slow_agent:run
  concurrency: 1
checks:
  correct_time: {type: equals, path: final_state.time, value: "10:00"}
rubrics:
  completion:
    weights: {correct_time: 1.0}
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_keeps_finished_cases(tmp_path: Path, sig: signal.Signals) -> None:
    (tmp_path / "slow_agent.py").write_text(AGENT)
    (tmp_path / "suite.yaml").write_text(SUITE)
    (tmp_path / "cases.jsonl").write_text(
        "".join(json.dumps({"id": f"c{i:02d}", "input": {"n": i}}) + "\n" for i in range(40))
    )
    db = tmp_path / "runs.db"
    proc = cli.start(["run", "suite.yaml", "--db", f"sqlite:///{db}", "-q"], tmp_path)
    # the handler is in place once results are stored; wait generously on a loaded machine
    cli.wait_for_stored(db, 3, proc, timeout=60)
    began = time.monotonic()
    proc.send_signal(sig)
    done = cli.finish(proc, began, timeout=60)
    assert done.code == 130, done.out + done.err
    assert "interrupted: run" in done.err
    assert "marked incomplete" in done.err
    assert "Traceback" not in done.err
    store = Store(f"sqlite:///{db}")
    info = store.get_run("latest")
    assert info.status is RunStatus.INCOMPLETE
    results = list(store.iter_results(info.id))
    assert 3 <= len(results) < 40
    assert info.executions == len(results) == done.kept()
    assert [r.case_id for r in results] == [f"c{i:02d}" for i in range(len(results))]
    assert "[incomplete]" in done.out
