"""Which process runs a run, and whether that process is still alive.

A run is written by one process. If that process dies without finishing it (kill -9, a crash
in an agent's native code), the run would stay ``running`` forever. The store records the
process's id, host and start time, and a heartbeat; the next open compares them with the
living processes and marks a dead run abandoned.
"""

from __future__ import annotations

import contextlib
import os
import socket
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

STALE_AFTER = timedelta(hours=1)
"""A run of another host is taken for dead when its heartbeat is older than this (its process
cannot be looked at from here; the writer beats at every batch it writes)."""


def process_start(pid: int) -> str | None:
    """When process ``pid`` started, in clock ticks since boot (Linux ``/proc``), to tell it
    from a later process that got the same id; None where that cannot be read."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) is in parentheses and may hold spaces: split after it
    fields = stat[stat.rfind(")") + 2 :].split()
    if fields and fields[0] == "Z":  # a zombie has died; only its exit status is left
        return "zombie"
    return fields[19] if len(fields) > 19 else None


@dataclass(frozen=True)
class Owner:
    """A process that runs a run."""

    pid: int
    host: str
    start: str | None

    @classmethod
    def current(cls) -> Owner:
        """This process."""
        pid = os.getpid()
        return cls(pid, socket.gethostname(), process_start(pid))


def is_dead(
    pid: int | None,
    host: str | None,
    start: str | None,
    heartbeat: datetime | None,
    *,
    now: datetime | None = None,
) -> bool:
    """Whether the process that recorded these is gone. Runs recorded before owners were
    (no pid) are never taken for dead."""
    if pid is None or host is None:
        return False
    if host != socket.gethostname():
        if heartbeat is None:
            return False
        if heartbeat.tzinfo is None:
            heartbeat = heartbeat.replace(tzinfo=UTC)
        return (now or datetime.now(UTC)) - heartbeat > STALE_AFTER
    if pid == os.getpid():
        return False
    try:
        with contextlib.suppress(PermissionError):  # alive, owned by another user
            os.kill(pid, 0)
    except ProcessLookupError:
        return True
    current = process_start(pid)
    if current == "zombie":
        return True
    return start is not None and current is not None and current != start
