"""``checkweigh run --workers N`` through the real command: the same report, files and exit
code as one worker, and Ctrl-C keeps what finished."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

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
import time


def slow(case):
    time.sleep(0.004)
    return True
"""


def test_ctrl_c_with_workers_keeps_what_finished(tmp_path: Path) -> None:
    suite = write_worker_suite(tmp_path / "s", 6_000)
    (suite.parent / "slow_check.py").write_text(SLOW_CHECK)
    text = (
        suite.read_text()
        .replace(
            "  polite: {type: python",
            "  slow: {type: python, function: 'slow_check:slow'}\n  polite: {type: python",
        )
        .replace("      polite: 0.2", "      polite: 0.1\n      slow: 0.1")
    )
    suite.write_text(text)
    db = suite.parent / "runs.db"
    proc = cli.start(
        ["run", "suite.yaml", "-q", "--db", f"sqlite:///{db}", "--workers", "2"], suite.parent
    )
    cli.wait_for_stored(db, 600, proc, timeout=90)
    began = time.monotonic()
    proc.send_signal(signal.SIGINT)
    done = cli.finish(proc, began, timeout=60)
    assert done.code == 130, done.out + done.err
    assert "interrupted: run" in done.err
    assert "Traceback" not in done.err
    assert done.seconds < 10
    status, executions, _ = cli.run_row(db)
    assert status == "incomplete"
    assert done.kept() == executions == cli.stored(db)
    assert 600 <= executions < 6_000
