"""Two runs writing to one database at the same time, from separate processes, lose nothing."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from checkweigh.store import RunStatus, Store

WRITER = Path(__file__).with_name("_writer_process.py")
RESULTS = 600


def test_two_processes_writing_at_once_lose_nothing(db_url: str, tmp_path: Path) -> None:
    # A new database: the writers also race each other to create its schema.
    names = ["alpha", "beta"]
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, WRITER, db_url, name, str(RESULTS), tmp_path / name, go],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in names
    ]
    deadline = time.monotonic() + 60
    while not all((tmp_path / n).exists() for n in names) and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err for _, err in outputs]
    run_ids = {out.strip() for out, _ in outputs}

    with Store(db_url) as store:
        runs = {r.id: r for r in store.list_runs()}
        assert set(runs) == run_ids
        for run in runs.values():
            assert run.status is RunStatus.COMPLETE
            assert run.executions == RESULTS
            assert run.summary is not None
            results = list(store.iter_results(run.id))
            assert [r.case_id for r in results] == [f"{run.suite}-{i}" for i in range(RESULTS)]
            assert results[3].verdicts["correct_time"].reason == f"{run.suite} booked 11:00"
        assert {r.suite for r in runs.values()} == set(names)
