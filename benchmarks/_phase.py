"""Running one phase of a benchmark in its own process, so its time and peak RSS are its own."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path


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


def phase_cli(suite: Path, db: Path, cases: int) -> dict[str, float]:
    """``checkweigh run SUITE`` in a process of its own, timed from the outside."""
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "checkweigh", "run", str(suite), "--db", f"sqlite:///{db}", "-q"],
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
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0,
    }
