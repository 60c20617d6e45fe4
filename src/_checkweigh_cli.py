"""The ``checkweigh`` console script's entry point.

A top-level module, so that it can catch Ctrl-C, SIGTERM and SIGHUP before anything is imported:
importing the CLI takes a moment, and a signal then must end the process with 130 (and no
traceback) like a signal at any later point, not kill it or print a ``KeyboardInterrupt``.
"""

from __future__ import annotations

import os
import signal
from types import FrameType

_INTERRUPTED = 130


def _exit_now(_signum: int, _frame: FrameType | None) -> None:
    os._exit(_INTERRUPTED)


def main() -> None:
    """Install the early signal handlers, then run the CLI (which installs its own)."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _exit_now)
    from checkweigh.cli import main as cli_main

    cli_main()
