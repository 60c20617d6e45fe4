"""``checkweigh run --workers N`` through the real command: the same report, files and exit
code as one worker, and Ctrl-C keeps what finished."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

from checkweigh.runs.executors._chunks import STOP_GRACE_S
from support import cli_process as cli
from support.worker_suite import write_worker_suite


def _report(out: str) -> list[str]:
    """The report's lines without the ones that name the run."""
    return [line for line in out.splitlines() if "run " not in line and "stored in" not in line]


def test_two_workers_report_and_export_what_one_does(tmp_path: Path) -> None:
    suite = write_worker_suite(tmp_path / "s", 1_200)
    common = ["run", "suite.yaml", "-q", "--repeat", "2"]
    one = cli.run([*common, "--db", "sqlite:///one.db", "--json", "one.json"], suite.parent)
    two = cli.run(
        [*common, "--db", "sqlite:///two.db", "--json", "two.json", "--workers", "2"],
        suite.parent,
        timeout=120,
    )
    assert one.code == two.code == 0, two.err
    assert "Traceback" not in two.err
    assert _report(one.out) == _report(two.out.replace("two.json", "one.json"))
    first = json.loads((suite.parent / "one.json").read_text())
    second = json.loads((suite.parent / "two.json").read_text())
    assert len(second["results"]) == 2_400
    assert first["results"] == second["results"]
    assert first["summary"] == second["summary"]


SLOW_CHECK = """\
import os
import time


def slow(case):
    # one byte per case begun, from every worker, so the test sees the scoring under way
    marks = os.path.join(os.path.dirname(__file__), "begun")
    fd = os.open(marks, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    os.write(fd, b".")
    os.close(fd)
    time.sleep(SECONDS)
    return True
"""


def _slow_run(folder: Path, cases: int, seconds: float) -> tuple[Path, subprocess.Popen[str]]:
    """``checkweigh run --workers 2`` started on the worker suite with a check that takes
    ``seconds`` per case; the run's SQLite file, and the command."""
    suite = write_worker_suite(folder, cases)
    (folder / "slow_check.py").write_text(SLOW_CHECK.replace("SECONDS", repr(seconds)))
    text = (
        suite.read_text()
        .replace(
            "  polite: {type: python",
            "  slow: {type: python, function: 'slow_check:slow'}\n  polite: {type: python",
        )
        .replace("      polite: 0.2", "      polite: 0.1\n      slow: 0.1")
    )
    suite.write_text(text)
    db = folder / "runs.db"
    proc = cli.start(
        ["run", "suite.yaml", "-q", "--db", f"sqlite:///{db}", "--workers", "2"], folder
    )
    return db, proc


def _wait_begun(folder: Path, cases: int, proc: subprocess.Popen[str]) -> None:
    """Wait until the workers have begun ``cases`` cases (the command is killed if not)."""
    marks = folder / "begun"
    deadline = time.monotonic() + 60
    while not marks.exists() or marks.stat().st_size < cases:
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"{cases} cases never begun; exit {proc.wait()}")
        time.sleep(0.05)


def _interrupted(db: Path, proc: subprocess.Popen[str]) -> cli.Finished:
    """Ctrl-C to ``proc``; checks the run ended as a stopped one and kept what it says."""
    began = time.monotonic()
    proc.send_signal(signal.SIGINT)
    done = cli.finish(proc, began, timeout=60)
    assert done.code == 130, done.out + done.err
    assert "interrupted: run" in done.err
    assert "Traceback" not in done.err
    status, executions, _ = cli.run_row(db)
    assert status == "incomplete"
    assert done.kept() == executions == cli.stored(db)
    with sqlite3.connect(db) as conn:  # the cases' first ones, none missing
        ids = [r[0] for r in conn.execute("select case_id from case_results order by idx")]
    assert ids == [f"booking-{i:05d}" for i in range(executions)]
    return done


def test_ctrl_c_with_workers_keeps_what_finished(tmp_path: Path) -> None:
    # chunks of 2,048 at 4 ms a case: a stop after the first chunk was committed keeps it
    # and what the next chunk finished, and waits for no chunk's end
    db, proc = _slow_run(tmp_path / "s", 10_000, 0.004)
    cli.wait_for_stored(db, 2_048, proc, timeout=90)
    done = _interrupted(db, proc)
    assert done.seconds < 3
    assert 2_048 <= cli.stored(db) < 10_000


def test_ctrl_c_with_workers_mid_chunk_keeps_the_cases_finished(tmp_path: Path) -> None:
    # 50 ms a case: a chunk takes 100 s; a stop ends each worker's chunk after its case
    db, proc = _slow_run(tmp_path / "s", 6_000, 0.05)
    _wait_begun(db.parent, 40, proc)
    assert cli.stored(db) == 0  # nothing committed yet: the first chunks are under way
    done = _interrupted(db, proc)
    assert done.seconds < 3
    # the first chunk's finished cases are kept (the second's are not: they follow a gap)
    assert 15 <= cli.stored(db) < 2_048


def test_ctrl_c_with_a_check_that_hangs_in_a_worker_still_ends(tmp_path: Path) -> None:
    db, proc = _slow_run(tmp_path / "s", 100, 3_600)
    _wait_begun(db.parent, 1, proc)  # one chunk: one worker
    done = _interrupted(db, proc)
    # the grace for a case to end, then its worker is stopped
    assert STOP_GRACE_S <= done.seconds < STOP_GRACE_S + 5
    assert cli.stored(db) == 0
