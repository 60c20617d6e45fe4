"""Every exit code of the README's table, through the real `checkweigh` process: 0 gates
passed, 1 a gate failed, 2 the user's input or database, 3 a bug (one line, no traceback
unless CHECKWEIGH_DEBUG=1), 130 interrupted."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from support import cli_process as cli
from support.recorded_suite import make_case, standard_cases, write_suite


def _suite(tmp_path: Path, *, passing: bool) -> None:
    cases = (
        standard_cases()
        if not passing
        else [make_case(f"ok-{i}", participants=["Alice", "Bob"], time="10:00") for i in range(3)]
    )
    write_suite(tmp_path, cases, thresholds=None)


def test_0_when_the_gates_pass(tmp_path: Path) -> None:
    _suite(tmp_path, passing=True)
    done = cli.run(["run", "suite.yaml", "--db", f"sqlite:///{tmp_path / 'r.db'}", "-q"], tmp_path)
    assert done.code == 0, done.out + done.err
    assert "gates passed" in done.out
    shown = cli.run(["show", "latest", "--db", f"sqlite:///{tmp_path / 'r.db'}"], tmp_path)
    assert shown.code == 0


def test_1_when_a_gate_fails(tmp_path: Path) -> None:
    _suite(tmp_path, passing=False)
    done = cli.run(["run", "suite.yaml", "--db", f"sqlite:///{tmp_path / 'r.db'}", "-q"], tmp_path)
    assert done.code == 1, done.out + done.err
    assert "gates FAILED" in done.out
    assert done.err == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "missing.yaml"], "missing.yaml"),
        (["run", "suite.yaml", "--db", "nosuchdriver://x"], "--db"),
        (["show", "latest", "--db", "sqlite:///{d}/cases.jsonl"], "file is not a database"),
        (["runs", "--db", "sqlite:///{d}/suite.yaml/r.db"], "is a file, not a folder"),
    ],
    ids=["missing-suite", "bad-url", "not-a-database", "db-under-a-file"],
)
def test_2_for_the_users_input_or_database(tmp_path: Path, args: list[str], message: str) -> None:
    _suite(tmp_path, passing=True)
    done = cli.run([a.replace("{d}", str(tmp_path)) for a in args], tmp_path)
    assert done.code == 2, done.out + done.err
    assert message in done.err
    assert len(done.err.strip().splitlines()) == 1
    assert "Traceback" not in done.err


# a bug, simulated: the console report raises something checkweigh never raises on purpose
BUG = (
    "import checkweigh.reports as reports\n"
    "def _broken(*args, **kwargs):\n"
    "    raise KeyError('rubric')\n"
    "reports.render_summary = _broken\n"
)


def test_3_for_a_bug_in_one_line_with_the_traceback_on_request(tmp_path: Path) -> None:
    _suite(tmp_path, passing=True)
    args = ["run", "suite.yaml", "--db", f"sqlite:///{tmp_path / 'r.db'}", "-q"]
    done = cli.run(args, tmp_path, prelude=BUG)
    assert done.code == 3, done.out + done.err
    assert done.err.startswith("internal error: KeyError: 'rubric'")
    assert "a bug in checkweigh: please report it" in done.err
    assert len(done.err.strip().splitlines()) == 1
    assert "Traceback" not in done.err

    debug = cli.run(
        args, tmp_path, prelude="import os; os.environ['CHECKWEIGH_DEBUG'] = '1'\n" + BUG
    )
    assert debug.code == 3
    assert "Traceback (most recent call last)" in debug.err
    assert "internal error: KeyError: 'rubric'" in debug.err


def test_130_when_interrupted(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(
        "import time\n\n\ndef run(request):\n    time.sleep(30)\n    return {}\n"
    )
    (tmp_path / "suite.yaml").write_text(
        "name: waits\ncases: cases.jsonl\ntarget: {agent: 'agent:run'}\n"
        "checks:\n  done: {type: equals, path: final_state.done, value: true}\n"
        "rubrics:\n  r: {weights: {done: 1.0}}\n"
    )
    (tmp_path / "cases.jsonl").write_text('{"id": "a", "input": {}}\n')
    db = tmp_path / "r.db"
    proc = cli.start(["run", "suite.yaml", "--db", f"sqlite:///{db}", "-q"], tmp_path)
    deadline = time.monotonic() + 20
    while not db.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    began = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    done = cli.finish(proc, began)
    assert done.code == 130, done.out + done.err
    assert "interrupted: run" in done.err
    assert "kept 0 finished execution(s), marked incomplete" in done.err
    assert done.seconds < 3.0
