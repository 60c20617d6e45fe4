"""Start-up: the wall time of commands that do little work, so what they import is the cost.

Usage: python benchmarks/bench_startup.py [--runs R]

Each figure is the median of R runs of a fresh process, as a user types it:

- ``checkweigh --help`` and ``checkweigh run --help``;
- ``python -c "import checkweigh"`` (and the interpreter alone, for reference);
- ``checkweigh run`` of a 2-case recorded suite (no target, no judge, two deterministic checks)
  with the default SQLite store: on a fresh database file each time (the schema is created:
  Alembic runs) and on one database that already exists (its revision is read, no migration).

Every command runs once first, unmeasured, so that Python has written the bytecode of the
modules it imports (``PYTHONDONTWRITEBYTECODE`` is dropped from the children's environment): an
installed package has its bytecode already. Which modules each command imports (and which it
must not) is guarded by ``tests/cli/test_startup.py``; ``python -X importtime`` shows the cost.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

SUITE = """\
name: startup
cases: cases.jsonl
checks:
  correct_time:
    type: equals
    path: final_state.booking.time
    expected_path: ground_truth.time
  clear_reply:
    type: word_count
    path: output
    min: 3
rubrics:
  completion:
    weights: {correct_time: 0.7, clear_reply: 0.3}
gates:
  - {rubric: completion, metric: tcr, min: 0.5}
"""


def _case(case_id: str, time_: str) -> dict[str, object]:
    return {
        "id": case_id,
        "input": {"message": "Book Alice and Bob at 10"},
        "trace": [
            {"kind": "user", "content": "Book Alice and Bob at 10"},
            {"kind": "tool_call", "name": "book_meeting", "arguments": {"time": time_}},
            {"kind": "assistant", "content": f"Booked Alice and Bob at {time_}."},
        ],
        "final_state": {"booking": {"participants": ["Alice", "Bob"], "time": time_}},
        "ground_truth": {"time": "10:00"},
    }


def _checkweigh() -> str:
    script = Path(sys.executable).with_name("checkweigh")
    if not script.exists():
        raise SystemExit(f"no {script}: install the package first (make bench does)")
    return str(script)


def _timed(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stderr.decode()}")
    return elapsed


def _median(runs: int, once: Callable[[int], float]) -> float:
    once(-1)  # unmeasured: writes the bytecode, warms the file cache
    return statistics.median(once(i) for i in range(runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per figure (default 5)")
    runs = parser.parse_args().runs
    cli = _checkweigh()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.pop("CHECKWEIGH_DB", None)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "suite.yaml").write_text(SUITE)
        cases = [_case("morning", "10:00"), _case("again", "10:00")]
        (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))

        def run_fresh(i: int) -> float:
            db = f"sqlite:///{folder / f'fresh-{i + 1}.db'}"
            return _timed([cli, "run", "suite.yaml", "--db", db, "-q"], folder, env)

        existing = f"sqlite:///{folder / 'existing.db'}"
        figures = {
            "python -c pass (the interpreter alone)": _median(
                runs, lambda _: _timed([sys.executable, "-c", "pass"], folder, env)
            ),
            "python -c 'import checkweigh'": _median(
                runs, lambda _: _timed([sys.executable, "-c", "import checkweigh"], folder, env)
            ),
            "checkweigh --help": _median(runs, lambda _: _timed([cli, "--help"], folder, env)),
            "checkweigh run --help": _median(
                runs, lambda _: _timed([cli, "run", "--help"], folder, env)
            ),
            "checkweigh run, 2 cases, fresh database": _median(runs, run_fresh),
            "checkweigh run, 2 cases, existing database": _median(
                runs,
                lambda _: _timed([cli, "run", "suite.yaml", "--db", existing, "-q"], folder, env),
            ),
        }
    print(f"start-up: median wall time of {runs} runs (a fresh process each)")
    for name, seconds in figures.items():
        print(f"  {name:<46} {seconds:6.3f} s")


if __name__ == "__main__":
    main()
