"""Catalogue: agent faults and interrupts against the real `checkweigh run` in a subprocess.

Each row is a realistic fault with its exact expected outcome: exit code, a one-line message
fragment, no traceback, nothing finished lost (the stored count equals the printed "kept N"
and the run's stored executions), and the run ending in time.
"""

from __future__ import annotations

import json
import random
import signal
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from support import cli_process as cli
from support.recorded_suite import make_case, write_suite

AGENTS = """\
import asyncio
import os
import signal
import socket
import sys
import time

OK = {"trace": [{"kind": "assistant", "content": "Booked at 10:00."}],
      "final_state": {"time": "10:00"}}


def raises(request):
    if request["n"] == 2:
        raise ConnectionError("calendar API unreachable")
    return OK


def sleeps(request):
    time.sleep(10)
    return OK


def blocks_on_socket(request):
    # a reply that never comes: the read blocks in C, beyond any Python-level timeout
    mine, theirs = socket.socketpair()
    mine.recv(1024)
    return OK


def exits_0(request):
    if request["n"] == 2:
        sys.exit(0)
    return OK


async def async_exits_3(request):
    if request["n"] == 1:
        sys.exit(3)
    return OK


def keyboard_interrupt(request):
    if request["n"] == 0:
        raise KeyboardInterrupt
    return OK


async def async_generator_exit(request):
    if request["n"] == 4:
        raise GeneratorExit
    return OK


async def async_system_exit(request):
    await asyncio.sleep(0.01)
    if request["n"] == 3:
        raise SystemExit("stop everything")
    return OK


class Abort(BaseException):  # a framework's own "stop everything", not an Exception
    pass


def raises_base_exception(request):
    if request["n"] == 0:
        raise Abort("tool budget exhausted")
    return OK


async def async_raises_base_exception(request):
    if request["n"] == 4:
        raise Abort("tool budget exhausted")
    return OK


def junk(request):
    return "Booked at 10:00" if request["n"] == 1 else OK


def huge(request):
    return {"trace": [{"kind": "assistant", "content": "x" * 2_000_000}],
            "final_state": {"time": "10:00"}}


def segfaults(request):
    if request["n"] == 3:
        os.kill(os.getpid(), signal.SIGSEGV)
    return OK


def deletes_the_database(request):
    # a clean-up job (or a careless agent) deletes the results file mid-run
    if request["n"] == 2:
        os.remove("runs.db")
    return OK


def os_exit_0(request):
    if request["n"] == 3:
        os._exit(0)
    return OK
"""

SUITE = """\
name: bookings-{name}
cases: cases.jsonl
target:
  agent: agents:{name}
  concurrency: {concurrency}
{timeout}checks:
  correct_time: {{type: equals, path: final_state.time, value: "10:00"}}
rubrics:
  completion:
    weights: {{correct_time: 1.0}}
"""


def _write(folder: Path, agent: str, *, timeout_s: float | None, concurrency: int) -> None:
    (folder / "agents.py").write_text(AGENTS)
    timeout = f"  timeout_s: {timeout_s:g}\n" if timeout_s else ""
    (folder / "suite.yaml").write_text(
        SUITE.format(name=agent, concurrency=concurrency, timeout=timeout)
    )
    (folder / "cases.jsonl").write_text(
        "".join(json.dumps({"id": f"book-{n}", "input": {"n": n}}) + "\n" for n in range(5))
    )


@dataclass(frozen=True)
class Fault:
    agent: str
    code: int
    message: str
    errored: int
    timeout_s: float | None = None
    concurrency: int = 1
    max_seconds: float = 15.0


FAULTS = [
    Fault("raises", 1, "agent raised ConnectionError: calendar API unreachable", 1),
    Fault("sleeps", 1, "agent timed out after 2s", 5, timeout_s=2, concurrency=5, max_seconds=7),
    Fault(
        "blocks_on_socket",
        1,
        "agent timed out after 2s",
        5,
        timeout_s=2,
        concurrency=5,
        max_seconds=7,
    ),
    Fault("exits_0", 1, "agent called sys.exit(0)", 1),
    Fault("os_exit_0", 1, "agent called os._exit(0)", 1),
    Fault("async_exits_3", 1, "agent called sys.exit(3)", 1, concurrency=3),
    Fault("keyboard_interrupt", 1, "agent raised KeyboardInterrupt", 1),
    Fault("async_generator_exit", 1, "agent raised GeneratorExit", 1),
    Fault("async_system_exit", 1, "agent called sys.exit('stop everything')", 1, concurrency=5),
    Fault("raises_base_exception", 1, "agent raised Abort: tool budget exhausted", 1),
    Fault(
        "async_raises_base_exception",
        1,
        "agent raised Abort: tool budget exhausted",
        1,
        concurrency=2,
    ),
    Fault("junk", 1, "agent returned str; expected AgentRun", 1),
    Fault("huge", 0, "5 execution(s) of 5 case(s); 0 errored", 0),
]


@pytest.mark.parametrize("fault", FAULTS, ids=[f.agent for f in FAULTS])
def test_an_agent_fault_is_an_errored_case_never_the_runs_end(tmp_path: Path, fault: Fault) -> None:
    _write(tmp_path, fault.agent, timeout_s=fault.timeout_s, concurrency=fault.concurrency)
    db = tmp_path / "runs.db"
    done = cli.run(["run", "suite.yaml", "--db", f"sqlite:///{db}", "-q"], tmp_path)
    assert done.code == fault.code, done.out + done.err
    assert fault.message in done.out
    assert "Traceback" not in done.out + done.err
    assert done.seconds < fault.max_seconds
    assert cli.stored(db) == 5
    assert cli.run_row(db) == ("complete", 5, False)
    assert f"{fault.errored} errored" in done.out


@pytest.mark.parametrize(
    ("agent", "died_with"),
    [("segfaults", -signal.SIGSEGV)],
)
def test_an_agent_that_ends_the_process_leaves_an_abandoned_run(
    tmp_path: Path, agent: str, died_with: int
) -> None:
    # the process is gone (a crash in native code): what finished before is
    # stored, and the next command finds the run abandoned instead of "running" forever
    _write(tmp_path, agent, timeout_s=None, concurrency=1)
    db = tmp_path / "runs.db"
    died = cli.run(["run", "suite.yaml", "--db", f"sqlite:///{db}", "-q"], tmp_path)
    assert died.code == died_with
    assert cli.run_row(db) == ("running", 0, False)
    assert cli.stored(db) == 3  # book-0..2, each written as it finished

    shown = cli.run(["show", "latest", "--db", f"sqlite:///{db}"], tmp_path)
    assert shown.code == 1, shown.out + shown.err  # an incomplete run never passes its gates
    assert "gates: not passed: run" in shown.err
    assert "was abandoned: its process died before finishing it" in shown.err
    assert "it keeps 3 stored execution(s)" in shown.err
    assert "3 execution(s) of 3 case(s)" in shown.out
    assert "[incomplete]" in shown.out
    assert "Traceback" not in shown.out + shown.err
    assert cli.run_row(db) == ("incomplete", 3, True)

    # compared with a later, whole run of the same cases, it is flagged as well
    _write(tmp_path, "raises", timeout_s=None, concurrency=1)
    assert cli.run(["run", "suite.yaml", "--db", f"sqlite:///{db}", "-q"], tmp_path).code == 1
    compared = cli.run(["compare", "previous", "latest", "--db", f"sqlite:///{db}"], tmp_path)
    assert compared.code in (0, 1), compared.out + compared.err
    assert "was abandoned: its process died before finishing it" in compared.err
    assert "Traceback" not in compared.out + compared.err


# interrupts -----------------------------------------------------------------------------

SLOW = """\
import time


def run(request):
    time.sleep(0.1)
    return {"trace": [{"kind": "assistant", "content": "Booked at 10:00."}],
            "final_state": {"time": "10:00"}}
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize(
    ("agent", "timeout_s", "after"),
    [
        ("slow", None, 3),  # mid-run, cases finishing all the time
        ("blocks_on_socket", None, 0),  # every worker stuck in C, no timeout to save it
        ("sleeps", 30, 0),  # stuck past any Python-level check, with a long timeout
    ],
)
def test_one_signal_stops_an_agent_run_promptly_and_keeps_what_finished(
    tmp_path: Path, sig: signal.Signals, agent: str, timeout_s: float | None, after: int
) -> None:
    if agent == "slow":
        _write(tmp_path, "raises", timeout_s=None, concurrency=2)
        (tmp_path / "slow.py").write_text(SLOW)
        suite = (tmp_path / "suite.yaml").read_text().replace("agents:raises", "slow:run")
        (tmp_path / "suite.yaml").write_text(suite)
        (tmp_path / "cases.jsonl").write_text(
            "".join(json.dumps({"id": f"book-{n}", "input": {"n": n}}) + "\n" for n in range(60))
        )
    else:
        _write(tmp_path, agent, timeout_s=timeout_s, concurrency=5)
    db = tmp_path / "runs.db"
    proc = cli.start(["run", "suite.yaml", "--db", f"sqlite:///{db}", "-q"], tmp_path)
    if after:
        cli.wait_for_stored(db, after, proc)
    else:
        _wait_for_run_row(db, proc)
        time.sleep(0.3)  # the agents are blocked by now
    began = time.monotonic()
    proc.send_signal(sig)
    done = cli.finish(proc, began)
    assert done.code == 130, done.out + done.err
    assert done.seconds < 3.0
    assert "interrupted: run" in done.err
    assert "Traceback" not in done.out + done.err
    kept = done.kept()
    assert kept is not None
    assert kept == cli.stored(db)
    assert cli.run_row(db) == ("incomplete", kept, False)
    assert "[incomplete]" in done.out
    if agent == "slow":
        assert 3 <= kept < 60


def _wait_for_run_row(db: Path, proc: object, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            cli.run_row(db)
            return
        except Exception:  # noqa: BLE001 - the file or its tables are not there yet
            time.sleep(0.05)
    raise AssertionError("the run never started")


HANGING_CHECK = """\
import time

from checkweigh import check


@check
def waits_forever(case):
    if case.id == "c00040":
        time.sleep(60)
    return True
"""


def test_a_second_signal_ends_the_process_at_once(tmp_path: Path) -> None:
    # a synchronous check that hangs: the first Ctrl-C waits for it to end, the second does not
    cases = [make_case(f"c{i:05d}", participants=["Alice", "Bob"], time="10:00") for i in range(80)]
    write_suite(tmp_path, cases)
    (tmp_path / "hang.py").write_text(HANGING_CHECK)
    suite = (tmp_path / "suite.yaml").read_text()
    suite = suite.replace(
        "  clear_explanation:\n",
        "  waits:\n    type: python\n    function: hang:waits_forever\n  clear_explanation:\n",
    ).replace("      clear_explanation: 0.2", "      clear_explanation: 0.2\n      waits: 0.1")
    (tmp_path / "suite.yaml").write_text(suite)
    db = tmp_path / "runs.db"
    proc = cli.start(["run", "suite.yaml", "--db", f"sqlite:///{db}", "-q"], tmp_path)
    _wait_for_run_row(db, proc)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.3)
    assert proc.poll() is None  # still inside the check
    began = time.monotonic()
    proc.send_signal(signal.SIGINT)
    done = cli.finish(proc, began)
    assert done.code == 130
    assert done.seconds < 2.0
    assert "Traceback" not in done.out + done.err


def _interrupt_at_random(folder: Path, db: Path, sig: signal.Signals, rng: random.Random) -> bool:
    """Interrupt a 20,000-case recorded run at a random moment; check the kept count against
    the store. False when the run had finished first (then it must be complete and whole)."""
    db.unlink(missing_ok=True)
    proc = cli.start(["run", "suite.yaml", "--db", f"sqlite:///{db}", "-q"], folder)
    cli.wait_for_stored(db, 500, proc)
    time.sleep(rng.uniform(0.0, 0.4))
    began = time.monotonic()
    proc.send_signal(sig)
    done = cli.finish(proc, began)
    assert "Traceback" not in done.out + done.err
    if done.code != 130:
        assert done.code == 0, done.err
        assert cli.run_row(db) == ("complete", 20_000, False)
        return False
    kept = done.kept()
    assert kept is not None
    assert kept >= 500
    assert kept == cli.stored(db)
    assert cli.run_row(db) == ("incomplete", kept, False)
    assert done.seconds < 3.0
    return True


def _large_recorded_suite(folder: Path) -> None:
    # 20,000 recorded cases written in batches of 500: a signal often lands inside a write
    cases = [
        make_case(f"c{i:05d}", participants=["Alice", "Bob"], time="10:00" if i % 7 else "11:00")
        for i in range(20_000)
    ]
    write_suite(folder, cases)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_at_a_random_moment_of_a_large_recorded_run_loses_nothing(
    tmp_path: Path, sig: signal.Signals
) -> None:
    _large_recorded_suite(tmp_path)
    rng = random.Random(sig.value)
    for _attempt in range(3):
        if _interrupt_at_random(tmp_path, tmp_path / "runs.db", sig, rng):
            return
    pytest.fail("the run always ended before the signal")


# check code that tries to end the run ------------------------------------------------------

CHECKS = """\
import sys

from checkweigh import check


@check
def exits_0(case):
    if case.id == "c00002":
        sys.exit(0)
    return True


@check
def exits_3(case):
    if case.id == "c00001":
        sys.exit(3)
    return True


@check
async def async_exits_0(case):
    if case.id == "c00003":
        sys.exit(0)
    return True


@check
async def async_keyboard_interrupt(case):
    if case.id == "c00000":
        raise KeyboardInterrupt
    return True


class Stops:
    def evaluate(self, case):
        if case.id == "c00004":
            raise GeneratorExit
        return True


class Abort(BaseException):
    pass


@check
def aborts(case):
    if case.id == "c00005":
        raise Abort("quota")
    return True


@check
def os_exits_0(case):
    if case.id == "c00002":
        import os

        os._exit(0)
    return True
"""


@pytest.mark.parametrize(
    ("function", "message"),
    [
        ("exits_0", "check called sys.exit(0)"),  # the recorded-trace fast path
        ("exits_3", "check called sys.exit(3)"),
        ("async_exits_0", "check called sys.exit(0)"),  # the async path
        ("async_keyboard_interrupt", "check raised KeyboardInterrupt"),
        ("Stops", "check raised GeneratorExit"),
        ("aborts", "check raised Abort: quota"),
        ("os_exits_0", "check called os._exit(0)"),
    ],
)
def test_a_check_that_exits_is_an_errored_verdict(
    tmp_path: Path, function: str, message: str
) -> None:
    cases = [make_case(f"c{i:05d}", participants=["Alice", "Bob"], time="10:00") for i in range(6)]
    write_suite(tmp_path, cases, thresholds=None)  # every execution must pass
    (tmp_path / "user_checks.py").write_text(CHECKS)
    suite = (tmp_path / "suite.yaml").read_text()
    suite = suite.replace(
        "  clear_explanation:\n",
        f"  mine:\n    type: python\n    function: user_checks:{function}\n  clear_explanation:\n",
    ).replace("      clear_explanation: 0.2", "      clear_explanation: 0.2\n      mine: 0.1")
    (tmp_path / "suite.yaml").write_text(suite)
    db = tmp_path / "runs.db"
    done = cli.run(["run", "suite.yaml", "--db", f"sqlite:///{db}", "-q"], tmp_path)
    assert done.code == 1, done.out + done.err  # one errored execution fails the cases gate
    assert message in done.out
    assert "1 errored" in done.out
    assert "Traceback" not in done.out + done.err
    assert cli.stored(db) == 6
    assert cli.run_row(db) == ("complete", 6, False)


# the process killed from outside ------------------------------------------------------------


def test_kill_9_mid_run_leaves_a_run_the_next_command_marks_abandoned(tmp_path: Path) -> None:
    _write(tmp_path, "raises", timeout_s=None, concurrency=2)
    (tmp_path / "slow.py").write_text(SLOW)
    suite = (tmp_path / "suite.yaml").read_text().replace("agents:raises", "slow:run")
    (tmp_path / "suite.yaml").write_text(suite)
    (tmp_path / "cases.jsonl").write_text(
        "".join(json.dumps({"id": f"book-{n}", "input": {"n": n}}) + "\n" for n in range(200))
    )
    db = tmp_path / "runs.db"
    proc = cli.start(["run", "suite.yaml", "--db", f"sqlite:///{db}", "-q"], tmp_path)
    cli.wait_for_stored(db, 4, proc)
    proc.kill()
    proc.communicate(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    stored = cli.stored(db)
    assert 4 <= stored < 200

    listed = cli.run(["runs", "--db", f"sqlite:///{db}"], tmp_path)
    assert listed.code == 0
    assert "incomplete (abandoned)" in listed.out
    assert "was abandoned" in listed.err
    shown = cli.run(["show", "latest", "--db", f"sqlite:///{db}"], tmp_path)
    assert shown.code == 1, shown.out + shown.err  # an incomplete run never passes its gates
    assert "gates: not passed: run" in shown.err
    assert f"it keeps {stored} stored execution(s)" in shown.err
    assert f"{stored} execution(s) of {stored} case(s); 0 errored" in shown.out
    assert "Traceback" not in listed.err + shown.out + shown.err
    assert cli.run_row(db) == ("incomplete", stored, True)


# the database at open and while writing ------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "message"),
    [
        # --db under a regular file
        (
            lambda d: f"sqlite:///{d / 'suite.yaml' / 'runs.db'}",
            "suite.yaml is a file, not a folder",
        ),
        (lambda d: f"sqlite:///{d / 'suite.yaml' / 'a' / 'runs.db'}", "is a file, not a folder"),
        # a folder where the file should be
        (lambda d: f"sqlite:///{d}", "is a folder, not a database file"),
        # a file that is not a database
        (lambda d: f"sqlite:///{d / 'cases.jsonl'}", "file is not a database"),
        # opened read-only (a read-only mount, a snapshot): the run cannot be recorded
        (
            lambda d: f"sqlite:///file:{d / 'ro.db'}?mode=ro&uri=true",
            "cannot record the run in",
        ),
        # read-only and missing
        (
            lambda d: f"sqlite:///file:{d / 'missing.db'}?mode=ro&uri=true",
            "unable to open database file",
        ),
    ],
    ids=[
        "under-a-file",
        "deep-under-a-file",
        "a-folder",
        "not-a-database",
        "read-only",
        "ro-missing",
    ],
)
def test_a_database_that_cannot_be_used_is_one_line_and_exit_2(
    tmp_path: Path, make: object, message: str
) -> None:
    write_suite(tmp_path, [make_case("c0", participants=["Alice", "Bob"], time="10:00")])
    setup = cli.run(["runs", "--db", f"sqlite:///{tmp_path / 'ro.db'}"], tmp_path)
    assert setup.code == 0
    assert callable(make)
    done = cli.run(["run", "suite.yaml", "--db", make(tmp_path), "-q"], tmp_path)
    assert done.code == 2, done.out + done.err
    assert message in done.err
    assert len(done.err.strip().splitlines()) == 1
    assert done.err.startswith("error:")
    assert "Traceback" not in done.out + done.err


def test_a_full_disk_mid_run_stops_with_one_line_and_keeps_what_was_written(
    tmp_path: Path,
) -> None:
    # SQLite's max_page_count makes the file "full" at 300 pages (1.2 MB) in a 20,000-case run
    cases = [
        make_case(f"c{i:05d}", participants=["Alice", "Bob"], time="10:00") for i in range(20_000)
    ]
    write_suite(tmp_path, cases)
    db = tmp_path / "runs.db"
    prelude = (
        "import checkweigh.store._store as s\n"
        "_pragmas = s._sqlite_pragmas\n"
        "def _full_at_300(conn, record):\n"
        "    _pragmas(conn, record)\n"
        "    conn.execute('PRAGMA max_page_count = 300')\n"
        "s._sqlite_pragmas = _full_at_300\n"
    )
    done = cli.run(
        ["run", "suite.yaml", "--db", f"sqlite:///{db}", "-q"], tmp_path, prelude=prelude
    )
    assert done.code == 2, done.out + done.err
    assert "error: cannot write results to" in done.err
    assert "database or disk is full" in done.err
    assert "Traceback" not in done.out + done.err
    kept = done.kept()
    assert kept is not None
    assert 0 < kept < 20_000
    assert kept == cli.stored(db)
    assert cli.run_row(db) == ("incomplete", kept, False)
    assert "[incomplete]" in done.out


def test_show_of_a_run_still_in_progress_is_one_line_and_exit_2(tmp_path: Path) -> None:
    _write(tmp_path, "sleeps", timeout_s=30, concurrency=5)
    db = tmp_path / "runs.db"
    proc = cli.start(["run", "suite.yaml", "--db", f"sqlite:///{db}", "-q"], tmp_path)
    try:
        _wait_for_run_row(db, proc)
        shown = cli.run(["show", "latest", "--db", f"sqlite:///{db}"], tmp_path)
        listed = cli.run(["runs", "--db", f"sqlite:///{db}"], tmp_path)
    finally:
        proc.send_signal(signal.SIGINT)
        stopped = cli.finish(proc, time.monotonic())
    assert shown.code == 2
    assert "is still running (its process is alive)" in shown.err
    assert len(shown.err.strip().splitlines()) == 1
    assert listed.code == 0
    assert " running " in listed.out  # alive: not taken for abandoned
    assert listed.err == ""
    assert stopped.code == 130


def test_a_database_file_deleted_mid_run_stops_the_run_instead_of_losing_results(
    tmp_path: Path,
) -> None:
    # SQLite would go on writing into the deleted file: every result would vanish with it
    _write(tmp_path, "deletes_the_database", timeout_s=None, concurrency=1)
    db = tmp_path / "runs.db"
    done = cli.run(["run", "suite.yaml", "--db", f"sqlite:///{db}", "-q"], tmp_path)
    assert done.code == 2, done.out + done.err
    assert "the database file was deleted or replaced while the run was writing to it" in done.err
    assert "kept 0 finished execution(s), marked incomplete" in done.err
    assert "Traceback" not in done.out + done.err
    assert not db.exists()


@pytest.mark.parametrize(
    ("module", "message"),
    [
        ("import sys\nsys.exit(0)\n", "importing module 'agents' called sys.exit(0)"),
        ("raise KeyboardInterrupt\n", "importing module 'agents' raised KeyboardInterrupt"),
    ],
    ids=["sys.exit(0)", "KeyboardInterrupt"],
)
def test_an_agent_module_that_exits_while_imported_is_one_line_and_exit_2(
    tmp_path: Path, module: str, message: str
) -> None:
    _write(tmp_path, "raises", timeout_s=None, concurrency=1)
    (tmp_path / "agents.py").write_text(module)
    done = cli.run(["run", "suite.yaml", "--db", f"sqlite:///{tmp_path / 'r.db'}", "-q"], tmp_path)
    assert done.code == 2, done.out + done.err
    assert message in done.err
    assert len(done.err.strip().splitlines()) == 1
    assert "Traceback" not in done.err
