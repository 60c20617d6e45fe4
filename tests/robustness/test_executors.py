"""Catalogue: bad executor flags of `checkweigh run` (--workers, --executor, --ray-address),
each refused before the run with exit 2 and one line naming the flag, nothing stored."""

from __future__ import annotations

import json
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from checkweigh.errors import CaseFileError
from checkweigh.runs import RunStopped
from checkweigh.runs.executors import ProcessExecutor
from checkweigh.runs.executors._processes import CHUNK
from checkweigh.store import Store
from checkweigh.suites import load_suite
from support import cli_process as cli
from support.engine import run_into
from support.worker_suite import write_worker_suite

AGENT_SUITE = """\
name: agent
cases: cases.jsonl
target: {agent: "agent:run"}
checks:
  said: {type: contains, path: output, values: ["10:00"]}
rubrics:
  r: {weights: {said: 1.0}}
"""

ROWS = [
    (["--workers", "0"], "--workers"),
    (["--workers", "2"], "--workers: the suite 'agent' calls an agent"),
    (["--ray-address", "127.0.0.1:6379"], "--ray-address: a Ray cluster is joined with"),
    (
        ["--executor", "dask"],
        "--executor: unknown executor 'dask'; expected one of local, processes, ray (or a "
        "package's entry point in the group checkweigh.executors)",
    ),
    (["--executor", "ray", "--workers", "2"], "--workers: Ray schedules the work"),
    (["--executor", "ray", "--record-agent", "rec"], "--record-agent: the agent's calls"),
]


@pytest.mark.parametrize(("flags", "fragment"), ROWS, ids=[" ".join(r[0]) for r in ROWS])
def test_bad_executor_flags_exit_2(tmp_path: Path, flags: list[str], fragment: str) -> None:
    write_worker_suite(tmp_path, 3)
    (tmp_path / "agent.py").write_text("def run(request):\n    return {'trace': []}\n")
    (tmp_path / "agent.yaml").write_text(AGENT_SUITE)
    suite = "agent.yaml" if flags[:2] != ["--workers", "0"] else "suite.yaml"
    db = tmp_path / "runs.db"
    done = cli.run(["run", suite, "-q", "--db", f"sqlite:///{db}", *flags], tmp_path)
    assert done.code == 2, done.out + done.err
    assert fragment in done.err
    assert "Traceback" not in done.err
    assert len(done.err.strip().splitlines()) <= 3  # typer's usage box for a bad range
    assert cli.stored(db) == 0


KILLER = """\
import os
import signal


def crashes_on_case_2700(case):
    if case.id == "booking-02700":  # a check whose C extension brings its process down
        os.kill(os.getpid(), signal.SIGKILL)
    return True


def exits_on_case_300(case):
    if case.id == "booking-00300":
        os._exit(0)  # refused during a run: the check's error, not the worker's end
    return True
"""


@pytest.mark.parametrize(
    ("check", "code", "fragment"),
    [
        ("crashes_on_case_2700", 2, "a worker process died while scoring cases 2049..4096, 3"),
        ("exits_on_case_300", 0, ""),
    ],
    ids=["worker-killed", "os-exit-in-check"],
)
def test_a_check_that_ends_its_worker(tmp_path: Path, check: str, code: int, fragment: str) -> None:
    suite = write_worker_suite(tmp_path, 5_000)
    (tmp_path / "killer_checks.py").write_text(KILLER)
    text = (
        suite.read_text()
        .replace(
            "  polite: {type: python",
            f"  killer: {{type: python, function: 'killer_checks:{check}'}}\n"
            "  polite: {type: python",
        )
        .replace("      polite: 0.2", "      polite: 0.1\n      killer: 0.1")
    )
    suite.write_text(text)
    db = tmp_path / "runs.db"
    done = cli.run(
        [
            "run",
            "suite.yaml",
            "-q",
            "--db",
            f"sqlite:///{db}",
            "--workers",
            "2",
            "--json",
            "r.json",
        ],
        tmp_path,
        timeout=120,
    )
    assert done.code == code, done.out + done.err
    assert "Traceback" not in done.err
    status, executions, _ = cli.run_row(db)
    if code == 2:  # the chunks before it are stored, the run is incomplete, nothing else lost
        assert fragment in done.err
        assert status == "incomplete"
        assert done.kept() == executions == cli.stored(db) == CHUNK
        return
    assert status == "complete"
    assert executions == cli.stored(db) == 5_000
    results = json.loads((tmp_path / "r.json").read_text())["results"]
    exited = next(r for r in results if r["case_id"] == "booking-00300")
    assert exited["verdicts"]["killer"]["state"] == "errored"
    assert "os._exit(0)" in exited["verdicts"]["killer"]["reason"] + str(
        exited["verdicts"]["killer"].get("error")
    )


# faults during a --workers run, whose workers store their chunks themselves: the report's
# count is what the store holds, whatever stopped the run --------------------------------------

BAD_LINES = [
    (
        '{"id": "booking-x", "input": {"message": "hi"}',
        "cases.jsonl:4801: invalid JSON",
        4_800,
    ),
    (
        '{"id": "booking-00005", "input": {"message": "hi"}}',
        "cases.jsonl:4801: id: duplicate case id 'booking-00005'",
        4_800,
    ),
    ('{"id": "booking-y", "input": {"message": "hi"}, "trace": 3}', "cases.jsonl:4801", 4_800),
]


def _with_line(suite: Path, line: str) -> None:
    # line 4801 is in the third chunk of 2048, while later chunks are being stored
    cases = suite.parent / "cases.jsonl"
    lines = cases.read_text().splitlines()
    lines.insert(4_800, line)
    cases.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize(
    ("line", "fragment", "kept"), BAD_LINES, ids=["broken-json", "duplicate-id", "bad-trace"]
)
def test_a_bad_line_in_the_middle_of_a_workers_run(
    tmp_path: Path, line: str, fragment: str, kept: int
) -> None:
    """Met during the run (the API, which does not screen the file first): the chunks before
    it stay, the rows the workers stored past it go."""
    suite = write_worker_suite(tmp_path, 8_000)
    _with_line(suite, line)
    db = tmp_path / "runs.db"
    store = Store(f"sqlite:///{db}")
    with pytest.raises(RunStopped) as stopped:
        run_into(load_suite(suite), store, executor=ProcessExecutor(2))
    assert fragment in str(stopped.value.cause)
    assert isinstance(stopped.value.cause, CaseFileError)
    outcome = stopped.value.outcome
    assert outcome.kept == kept == cli.stored(db)
    assert outcome.summary.executions == kept
    assert cli.run_row(db) == ("incomplete", kept, False)
    with sqlite3.connect(db) as conn:  # the stored prefix, and nothing past it in any table
        assert conn.execute("select max(idx) from case_results").fetchone()[0] == kept - 1
        assert conn.execute("select max(idx) from case_bodies").fetchone()[0] == kept - 1
        assert conn.execute("select max(idx) from verdicts_not_passed").fetchone()[0] < kept


@pytest.mark.parametrize(
    ("line", "fragment", "kept"), BAD_LINES, ids=["broken-json", "duplicate-id", "bad-trace"]
)
def test_the_cli_refuses_a_bad_line_the_workers_meet_and_keeps_nothing(
    tmp_path: Path, line: str, fragment: str, kept: int
) -> None:
    """The workers validate every case as they score it (the file is not screened first):
    a bad one ends the run, which is then deleted, as a screened file's refusal keeps
    nothing."""
    suite = write_worker_suite(tmp_path, 8_000)
    _with_line(suite, line)
    db = tmp_path / "runs.db"
    done = cli.run(
        ["run", "suite.yaml", "-q", "--db", f"sqlite:///{db}", "--workers", "2"],
        tmp_path,
        timeout=120,
    )
    assert done.code == 2, done.out + done.err
    assert fragment in done.err
    assert "Traceback" not in done.err
    assert len(done.err.strip().splitlines()) == 1
    assert cli.stored(db) == 0
    with sqlite3.connect(db) as conn:
        for table in ("runs", "case_results", "case_bodies", "verdicts_not_passed"):
            assert conn.execute(f"select count(*) from {table}").fetchone()[0] == 0


def test_ctrl_c_during_a_workers_run_keeps_what_it_reports(tmp_path: Path) -> None:
    write_worker_suite(tmp_path, 40_000)
    db = tmp_path / "runs.db"
    proc = cli.start(
        ["run", "suite.yaml", "--db", f"sqlite:///{db}", "-q", "--workers", "2"], tmp_path
    )
    cli.wait_for_stored(db, 2_000, proc, timeout=60)
    began = time.monotonic()
    proc.send_signal(signal.SIGINT)
    done = cli.finish(proc, began, timeout=60)
    assert "Traceback" not in done.out + done.err
    assert done.code == 130, done.out + done.err
    kept = done.kept()
    assert kept is not None
    assert 2_000 <= kept < 40_000
    assert kept == cli.stored(db)
    assert cli.run_row(db) == ("incomplete", kept, False)
    with sqlite3.connect(db) as conn:  # the first cases in order, a chunk cut where it halted
        for table in ("case_results", "case_bodies"):
            first, last, n = conn.execute(
                f"select min(idx), max(idx), count(distinct idx) from {table}"
            ).fetchone()
            assert (first, last, n) == (0, kept - 1, kept)
