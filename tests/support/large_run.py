"""A stored run of thousands of recorded scheduling cases, for tests of long work (a
stability simulation of it takes seconds of CPU at the most reruns allowed)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from typer.testing import CliRunner

from checkweigh.cli import app as cli
from checkweigh.store import Store
from support.recorded_suite import make_case, write_suite

NOISE = ("correct_participants=0.1", "correct_time=0.2", "clear_explanation=0.05")
"""Three of the suite's checks taken as noisy (it has no judge checks)."""


def store_large_run(folder: Path, db: str, n: int = 2000) -> str:
    """Run ``n`` cases (some booking the wrong time or leaving someone out) through the real
    CLI into ``db``; the run's id."""
    cases = [
        make_case(
            f"case-{i:05d}",
            participants=["Alice", "Bob"] if i % 7 else ["Alice"],
            time="11:00" if i % 5 == 0 else "10:00",
        )
        for i in range(n)
    ]
    suite = write_suite(folder, cases, thresholds={"cases_pass_threshold": 0.0})
    result = CliRunner().invoke(cli, ["run", str(suite), "--db", db, "-q"])
    assert result.exit_code in (0, 1), result.output
    with Store(db) as store:
        return store.get_run("latest").id


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` (all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_over(pid: int, seconds: float) -> float:
    """The CPU time process ``pid`` takes over the next ``seconds``: about ``seconds`` while
    one of its threads computes, next to nothing while it waits."""
    before = cpu_seconds(pid)
    time.sleep(seconds)
    return cpu_seconds(pid) - before


def wait_for_cpu(pid: int, seconds: float, timeout: float = 60) -> None:
    """Wait until process ``pid`` has used ``seconds`` more CPU time (however busy the
    machine, which stretches the wall clock it takes)."""
    until = cpu_seconds(pid) + seconds
    deadline = time.monotonic() + timeout
    while cpu_seconds(pid) < until:
        assert time.monotonic() < deadline, f"process {pid} did not compute for {seconds}s"
        time.sleep(0.05)
