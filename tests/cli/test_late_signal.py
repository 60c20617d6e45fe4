"""A signal that arrives after the run was stored (while the report and files are written) does
not turn a finished run into an interrupted one: the first is noted and the report finished, a
second ends the process with 130 (tests/robustness/test_soak.py hits this window at random)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from checkweigh.cli._app import _LateSignal


def test_the_first_late_signal_is_noted_and_the_handlers_come_back() -> None:
    before = signal.getsignal(signal.SIGINT)
    late = _LateSignal()
    with late:
        os.kill(os.getpid(), signal.SIGTERM)
        assert late.received
    assert signal.getsignal(signal.SIGINT) is before


def test_a_second_late_signal_ends_the_process_with_130() -> None:
    code = (
        "import os, signal\n"
        "from checkweigh.cli._app import _LateSignal\n"
        "late = _LateSignal()\n"
        "with late:\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    print('noted', late.received, flush=True)\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    print('not reached', flush=True)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 130
    assert proc.stdout == "noted True\n"
    assert "Traceback" not in proc.stderr
