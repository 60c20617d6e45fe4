"""The real `checkweigh` command in a subprocess, for tests of signals, crashes and exit codes,
and a look into the SQLite file it writes that does not go through the store."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ENTRY = "from checkweigh.cli import main; main()"


def start(args: list[str], cwd: Path, *, prelude: str = "") -> subprocess.Popen[str]:
    """``checkweigh ARGS`` started in ``cwd`` (``prelude``: Python run before the CLI)."""
    return subprocess.Popen(
        [sys.executable, "-c", prelude + ENTRY, *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )


@dataclass(frozen=True)
class Finished:
    """How a command ended."""

    code: int
    out: str
    err: str
    seconds: float

    def kept(self) -> int | None:
        """N in the "kept N finished execution(s)" line, if printed."""
        found = re.search(r"kept (\d+) finished execution", self.err)
        return int(found.group(1)) if found else None


def run(args: list[str], cwd: Path, *, timeout: float = 60, prelude: str = "") -> Finished:
    """``checkweigh ARGS`` to its end."""
    began = time.monotonic()
    proc = start(args, cwd, prelude=prelude)
    return finish(proc, began, timeout)


def finish(proc: subprocess.Popen[str], began: float, timeout: float = 30) -> Finished:
    """Wait for a started command; one that outlives ``timeout`` is killed, never left running."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    return Finished(proc.returncode, out, err, time.monotonic() - began)


def stored(db: Path) -> int:
    """Results stored in ``db`` (0 while it or its tables do not exist yet)."""
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=5) as conn:
            return int(conn.execute("select count(*) from case_results").fetchone()[0])
    except sqlite3.OperationalError:  # the tables are not made yet
        return 0


def run_row(db: Path) -> tuple[str, int, bool]:
    """(status, executions, abandoned) of the newest run in ``db``, read directly."""
    with sqlite3.connect(db, timeout=5) as conn:
        row = conn.execute(
            "select status, executions, abandoned from runs order by created_at desc limit 1"
        ).fetchone()
    return str(row[0]), int(row[1]), bool(row[2])


def wait_for_stored(db: Path, n: int, proc: subprocess.Popen[str], timeout: float = 30) -> None:
    """Wait until ``db`` holds at least ``n`` results (the process must still be running)."""
    deadline = time.monotonic() + timeout
    while stored(db) < n:
        if proc.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"{n} results never stored; exit {proc.returncode}")
        time.sleep(0.05)


def run_cli(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``checkweigh ARGS`` run to its end in ``cwd``, wide output, a minimal environment."""
    return subprocess.run(
        [sys.executable, "-c", ENTRY, *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="backslashreplace",
        cwd=cwd,
        timeout=timeout,
        env={"COLUMNS": "1000", "PATH": "/usr/bin:/bin"},
    )
