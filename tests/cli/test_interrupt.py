"""Ctrl-C in the middle of a run keeps every finished case and marks the run incomplete."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.exc import OperationalError

from checkweigh.store import RunStatus, Store

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


def _stored(db: Path) -> int:
    if not db.exists():
        return 0
    engine = create_engine(f"sqlite:///{db}")
    try:
        with engine.connect() as conn:
            return int(conn.execute(text("select count(*) from case_results")).scalar_one())
    except OperationalError:  # the table may not exist yet
        return 0
    finally:
        engine.dispose()


def test_sigint_keeps_finished_cases(tmp_path: Path) -> None:
    (tmp_path / "slow_agent.py").write_text(AGENT)
    (tmp_path / "suite.yaml").write_text(SUITE)
    (tmp_path / "cases.jsonl").write_text(
        "".join(json.dumps({"id": f"c{i:02d}", "input": {"n": i}}) + "\n" for i in range(40))
    )
    db = tmp_path / "runs.db"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from checkweigh.cli import main; main()",
            "run",
            "suite.yaml",
            "--db",
            f"sqlite:///{db}",
            "-q",
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    deadline = time.monotonic() + 30
    while _stored(db) < 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, out + err
    assert "interrupted: run" in err
    assert "marked incomplete" in err
    store = Store(f"sqlite:///{db}")
    info = store.get_run("latest")
    assert info.status is RunStatus.INCOMPLETE
    results = list(store.iter_results(info.id))
    assert 3 <= len(results) < 40
    assert info.executions == len(results)
    assert [r.case_id for r in results] == [f"c{i:02d}" for i in range(len(results))]
    assert "[incomplete]" in out
