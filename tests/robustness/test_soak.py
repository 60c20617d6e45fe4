"""Soak: interrupt a 20,000-case recorded run at random moments, 20 times (SIGINT and SIGTERM in
turn), and after each compare the results the database holds with what the report said it kept.

Every interrupted run must exit 130, say "kept N", hold exactly N results and be marked
incomplete; a run that finished before the signal must exit 0 or 1, complete, with all 20,000.
CHECKWEIGH_SOAK_RUNS and CHECKWEIGH_SOAK_SEED change the number of runs and the moments.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from sqlalchemy import create_engine, text

from support.recorded_suite import make_case, write_suite

CASES = 20_000
RUNS = int(os.environ.get("CHECKWEIGH_SOAK_RUNS", "20"))
SEED = int(os.environ.get("CHECKWEIGH_SOAK_SEED", "20261123"))
# the console script, which catches signals before its imports (as users and CI run it)
COMMAND = [sys.executable, "-c", "import _checkweigh_cli; _checkweigh_cli.main()"]
KEPT = re.compile(r"kept (\d+) finished execution")


def _cases() -> list[dict[str, object]]:
    times = ("10:00", "10:00", "11:00", "10:00")
    return [
        make_case(f"case-{i:05d}", participants=["Alice", "Bob"][: 1 + i % 2], time=times[i % 4])
        for i in range(CASES)
    ]


def _stored(db: Path) -> dict[str, tuple[str, int, int]]:
    """Per run: its status, its stored executions count and the rows it really holds."""
    engine = create_engine(f"sqlite:///{db}")
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                text(
                    "select r.id, r.status, r.executions, "
                    "(select count(*) from case_results c where c.run_id = r.id) from runs r"
                )
            ).all()
    finally:
        engine.dispose()
    return {run_id: (status, executions, held) for run_id, status, executions, held in rows}


def test_random_interrupts_never_lose_or_overcount_results(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", _cases())
    db = tmp_path / "soak.db"
    rng = random.Random(SEED)
    env = {**os.environ, "COLUMNS": "200"}
    # one run to the end first: its length spreads the signals over the whole run
    start = time.monotonic()
    done = subprocess.run(
        [*COMMAND, "run", str(suite), "--db", f"sqlite:///{db}", "-q"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    length = time.monotonic() - start
    assert done.returncode == 0, done.stderr  # the lenient thresholds pass these cases
    seen = set(_stored(db))
    assert [v for v in _stored(db).values()] == [("complete", CASES, CASES)]
    interrupted = 0
    for n in range(RUNS):
        sig = signal.SIGINT if n % 2 == 0 else signal.SIGTERM
        proc = subprocess.Popen(
            [*COMMAND, "run", str(suite), "--db", f"sqlite:///{db}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        moment = rng.uniform(0.3, 0.95) * length
        time.sleep(moment)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
        where = f"run {n} ({sig.name} at {moment:.2f} s, seed {SEED}): exit {proc.returncode}"
        assert "Traceback" not in err, f"{where}\n{err}"
        runs = _stored(db) if db.exists() else {}
        new = set(runs) - seen
        seen |= new
        if proc.returncode == 130:
            match = KEPT.search(err)
            if not new:  # stopped before the run was created: nothing stored, nothing claimed
                assert match is None, f"{where}\n{err}"
                continue
            interrupted += 1
            assert match is not None, f"{where}\n{err}"
            (run_id,) = new
            status, executions, held = runs[run_id]
            kept = int(match.group(1))
            assert (status, executions, held) == ("incomplete", kept, kept), f"{where}\n{err}"
            assert f"{kept} execution(s)" in out, where
        else:
            assert proc.returncode in (0, 1), f"{where}\n{out}\n{err}"
            (run_id,) = new
            assert runs[run_id] == ("complete", CASES, CASES), where
    # the moments spread over a run's length: most signals land inside the run
    assert interrupted >= RUNS // 2, f"only {interrupted} of {RUNS} runs were interrupted"
    summary = {"runs": RUNS, "interrupted": interrupted, "seed": SEED, "run_s": round(length, 2)}
    print(json.dumps(summary))
