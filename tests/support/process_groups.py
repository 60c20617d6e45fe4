"""What is still running in a process group, read from /proc (Linux), for tests that check a
killed agent left nothing behind."""

from __future__ import annotations

import os
import time
from pathlib import Path

HAS_PROC = Path("/proc/self/stat").exists()


def _processes() -> list[tuple[int, str, int, int]]:
    """(pid, state, parent, group) of every process."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:  # ended while we looked
            continue
        fields = stat.rsplit(")", 1)[1].split()  # after "pid (comm)": state, ppid, pgrp, ...
        found.append((int(entry), fields[0], int(fields[1]), int(fields[2])))
    return found


def living(group: int) -> list[int]:
    """The processes of ``group`` that are not zombies (a zombie has ended; whether its new
    parent reaps it is not the group's doing)."""
    return [pid for pid, state, _, pgrp in _processes() if pgrp == group and state not in "ZX"]


def children(parent: int) -> list[int]:
    """The processes ``parent`` started that are still there, zombies included (a child
    nobody reaped is a leak too)."""
    return [pid for pid, _, ppid, _ in _processes() if ppid == parent]


def wait_gone(group: int, within_s: float = 2.0) -> list[int]:
    """``living(group)`` once it is empty or ``within_s`` has passed (a SIGKILLed process
    needs a moment to exit)."""
    deadline = time.monotonic() + within_s
    while (left := living(group)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return left
