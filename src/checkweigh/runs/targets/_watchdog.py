"""Agent programs never outlive checkweigh, even when it is killed with ``kill -9``.

A command target ends each program's process group itself when the call ends; a killed
checkweigh cannot. So each checkweigh process that starts programs has one watchdog: a tiny
Python process of its own session (no terminal signal reaches it), which is nobody's child
(it forks away from the helper that starts it, so it never waits to be reaped) and reads the
groups to watch from a pipe only checkweigh holds. When checkweigh goes, however it goes, the
pipe ends; the watchdog then ends every group still listed (SIGTERM, SIGKILL half a second
later) and exits.

``PR_SET_PDEATHSIG`` is not used: it needs a ``preexec_fn`` (unsafe in a process with
threads), fires when the *thread* that started the program ends, and reaches only the program,
not what it started.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading

_SCRIPT = r"""
import os, signal, sys, time
if os.fork():
    os._exit(0)
signal.signal(signal.SIGINT, signal.SIG_IGN)
groups = set()

def send(sig):
    for group in list(groups):
        try:
            os.killpg(group, sig)
        except OSError:
            groups.discard(group)

def end(*_):
    send(signal.SIGTERM)
    if groups:
        time.sleep(0.5)
        send(signal.SIGKILL)
    os._exit(0)

signal.signal(signal.SIGTERM, end)
for line in sys.stdin.buffer:
    group = int(line[1:])
    if line[:1] == b"+":
        groups.add(group)
    else:
        groups.discard(group)
end()
"""


class Watchdog:
    """This process's watchdog, started on first use (again in a forked child, whose pipe the
    parent's watchdog does not read)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._owner: int | None = None
        self._pipe: int | None = None
        self._groups: set[int] = set()

    def ready(self) -> None:
        """Start the watchdog now if it is not running (so that a program is watched from the
        moment it starts).

        Raises:
            OSError: it cannot be started.
        """
        with self._lock:
            if self._pipe is None or self._owner != os.getpid():
                self._start()

    def watch(self, group: int) -> None:
        """End process group ``group`` if checkweigh dies before :meth:`forget` is called.

        Raises:
            OSError: the watchdog cannot be started.
        """
        with self._lock:
            self._groups.add(group)
            self._send(f"+{group}\n")

    def forget(self, group: int) -> None:
        """``group`` has been ended: nothing to do for it any more."""
        with self._lock:
            self._groups.discard(group)
            if self._pipe is not None and self._owner == os.getpid():
                self._send(f"-{group}\n")

    def _send(self, line: str) -> None:
        if self._pipe is None or self._owner != os.getpid():
            self._start()
        assert self._pipe is not None
        try:
            os.write(self._pipe, line.encode())
        except BrokenPipeError:  # the watchdog was killed: a new one takes over every group
            self._start()
            os.write(self._pipe, line.encode())

    def _start(self) -> None:
        if self._pipe is not None and self._owner == os.getpid():
            os.close(self._pipe)
        read, write = os.pipe()  # not inherited by the agents (close-on-exec)
        try:
            helper = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _SCRIPT],
                stdin=read,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except BaseException:
            os.close(write)
            raise
        finally:
            os.close(read)
        helper.wait()  # it forks the watchdog and exits at once
        self._owner, self._pipe = os.getpid(), write
        listed = "".join(f"+{g}\n" for g in self._groups)
        if listed:
            os.write(write, listed.encode())


WATCHDOG = Watchdog()
"""The one watchdog of this process."""
