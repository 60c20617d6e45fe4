"""A run whose process died is found on the next open: marked incomplete and abandoned, with
its summary (and gates) rebuilt from the results it had stored. On SQLite and PostgreSQL."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from datetime import UTC, datetime, timedelta

from sqlalchemy import update

from checkweigh.core import (
    CaseResult,
    Gate,
    GateMetric,
    Rubric,
    RubricItem,
    failed,
    passed,
    score_rubric,
)
from checkweigh.store import STALE_AFTER, ResultWriter, RunStatus, Store, gate_specs
from checkweigh.store._owner import Owner, is_dead, process_start
from checkweigh.store._tables import RunRow

RUBRIC = Rubric.build(
    "completion",
    [RubricItem("correct_time", 0.6), RubricItem("clear_explanation", 0.4)],
)
CONFIG = {
    "rubrics": [{"name": "completion", "weights": {"correct_time": 0.6, "clear_explanation": 0.4}}],
    "thresholds": {"pass_threshold": 75.0, "cases_pass_threshold": 50.0},
    "gate_specs": gate_specs([Gate(GateMetric.TCR, minimum=0.9, rubric="completion")]),
}


def _result(case_id: str, index: int, time_ok: bool) -> CaseResult:
    verdicts = {
        "correct_time": passed("10:00") if time_ok else failed("booked 11:00, expected 10:00"),
        "clear_explanation": passed("explained"),
    }
    scored = score_rubric(RUBRIC, verdicts, {"final_state": {"success": time_ok}})
    return CaseResult(case_id, 0, verdicts, {"completion": scored}, 12.5, None, index)


def _dead_pid() -> int:
    """The id of a process that has ended and been reaped."""
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(proc.stdout)


def _own(store: Store, run_id: str, **values: object) -> None:
    with store.engine.begin() as conn:
        conn.execute(update(RunRow).where(RunRow.id == run_id).values(**values))


def test_a_run_of_a_dead_process_is_reaped_on_the_next_open(store: Store) -> None:
    run_id = store.create_run("sched", "suite.yaml", CONFIG, 1)
    with ResultWriter(store, run_id) as writer:
        for i in range(4):
            writer.add(_result(f"c{i}", i, i != 2))
    _own(store, run_id, pid=_dead_pid())
    assert store.get_run(run_id).status is RunStatus.RUNNING  # found on open, not on read

    with Store(store.url) as again:
        info = again.get_run(run_id)
    assert info.status is RunStatus.INCOMPLETE
    assert info.abandoned
    assert info.executions == 4
    assert info.finished_at is not None
    assert info.summary is not None
    assert info.summary.executions == 4
    # 3 cases at 100, one at 40: TCR 0.85 < 0.9, the stored gate fails
    assert round(info.summary.rubrics[0].tcr or 0, 3) == 0.85
    assert [g.passed for g in info.summary.gates] == [False]  # of the finished part only
    assert info.gates_passed is None  # an incomplete run's gates are not decided
    assert info.summary.gates_passed is None
    assert info.summary.gates_not_decided == "the run is incomplete"
    assert info.summary.notes[0].startswith("abandoned: the process running this run died")


def test_a_live_run_is_left_alone(store: Store) -> None:
    mine = store.create_run("sched", "suite.yaml", CONFIG, 1)  # this very process
    parent = store.create_run("sched", "suite.yaml", CONFIG, 1)
    _own(store, parent, pid=os.getppid(), process_start=process_start(os.getppid()))
    legacy = store.create_run("sched", "suite.yaml", CONFIG, 1)
    _own(store, legacy, pid=None, host=None)  # recorded before owners were
    with Store(store.url) as again:
        assert again.reap_abandoned() == []
        assert {again.get_run(r).status for r in (mine, parent, legacy)} == {RunStatus.RUNNING}


def test_a_reused_pid_does_not_keep_a_dead_run_alive() -> None:
    # same pid, different start time: the run's process died and another one got its id
    me = Owner.current()
    assert me.start is not None  # Linux /proc
    assert is_dead(os.getppid(), me.host, "1", None)
    assert not is_dead(os.getppid(), me.host, process_start(os.getppid()), None)
    assert not is_dead(me.pid, me.host, "1", None)  # this process is alive whatever it says


def test_another_hosts_run_is_dead_only_after_its_heartbeat_goes_stale() -> None:
    now = datetime.now(UTC)
    other = "build-agent-7" if socket.gethostname() != "build-agent-7" else "build-agent-8"
    assert not is_dead(1234, other, "99", now - timedelta(minutes=5), now=now)
    assert is_dead(1234, other, "99", now - STALE_AFTER - timedelta(seconds=1), now=now)
    assert not is_dead(1234, other, "99", None, now=now)
    assert not is_dead(None, None, None, None, now=now)
