"""The HTTP agent example: ``python examples/http_agent/run.py`` starts the agent on a free
port of 127.0.0.1, scores it with ``checkweigh run`` through the http target, and stops it."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "http_agent"


def test_the_example_scores_the_agent_over_http_and_stops_it(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    done = subprocess.run(
        [sys.executable, str(EXAMPLE / "run.py"), "--db", f"sqlite:///{db}"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "43 execution(s) of 43 case(s); 0 errored" in done.stdout
    assert "gates passed" in done.stdout
    assert done.stderr.strip() == ""  # the agent served every request without a traceback
    with sqlite3.connect(db) as conn:
        rows = dict(conn.execute("select case_id, errored from case_results").fetchall())
    assert len(rows) == 43
    assert not any(rows.values())
    # the agent's deliberate mistakes reach the checks through HTTP as they do in-process
    assert "failed s21-put-on-calendar#0: required check failed: availability_before_booking" in (
        " ".join(done.stdout.split())
    )
