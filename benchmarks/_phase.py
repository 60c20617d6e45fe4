"""Running one phase of a benchmark in its own process, so its time and peak RSS are its own."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path


def peak_rss_mb() -> float:
    """This process's own peak resident memory, in MB: the kernel's ``VmHWM``.

    Not ``getrusage``'s ``ru_maxrss``: Linux carries it across ``exec`` from the process that
    started this one, so a phase started by a benchmark holding the cases it wrote would report
    the parent's memory as its own. Elsewhere ``ru_maxrss`` is all there is.
    """
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


_PEAK_MARK = "checkweigh-bench-peak-rss-mb="

# ``checkweigh`` that prints its own peak memory last on stderr as it exits (the CLI leaves
# with os._exit once everything is stored, so no atexit handler would run)
_CLI_WITH_PEAK = f"""\
import sys
sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})
from _phase import peak_rss_mb
from checkweigh.cli import _app
leave = _app.real_exit
def report_then_leave(code):
    sys.stderr.write("\\n{_PEAK_MARK}%f\\n" % peak_rss_mb())
    sys.stderr.flush()
    leave(code)
_app.real_exit = report_then_leave
sys.argv[0] = "checkweigh"
_app.main()
"""


def in_child(script: str | Path, args: list[str]) -> dict[str, float]:
    """Run ``script`` with ``args`` in a fresh interpreter; its last stdout line is the JSON
    figures it measured."""
    proc = subprocess.run(
        [sys.executable, str(script), *args], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise SystemExit(f"benchmark phase {args[:2]} failed:\n{proc.stderr}")
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def phase_cli(suite: Path, db: Path, cases: int, flags: tuple[str, ...] = ()) -> dict[str, float]:
    """``checkweigh run SUITE [flags]`` in a process of its own, timed from the outside."""
    start = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            _CLI_WITH_PEAK,
            "run",
            str(suite),
            "--db",
            f"sqlite:///{db}",
            "-q",
            *flags,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):  # 1: a gate failed, which is the agent's doing
        raise SystemExit(f"checkweigh run failed ({proc.returncode}):\n{proc.stderr}")
    return {
        "cases": cases,
        "seconds": elapsed,
        "cases_per_s": cases / elapsed,
        "peak_rss_mb": _reported_peak(proc.stderr),
    }


def _reported_peak(stderr: str) -> float:
    for line in reversed(stderr.splitlines()):
        if line.startswith(_PEAK_MARK):
            return float(line.removeprefix(_PEAK_MARK))
    raise SystemExit(f"checkweigh run did not report its peak memory:\n{stderr}")
