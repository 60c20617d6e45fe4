"""Running one phase of a benchmark in its own process, so its time and peak RSS are its own."""

from __future__ import annotations

import json
import subprocess
import sys
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
