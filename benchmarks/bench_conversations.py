"""Scoring realistic conversations with argument-matching and whole-conversation checks.

Usage: python benchmarks/bench_conversations.py [--cases N] [--runs R] [--workers W]

Writes N airline customer-service cases (``benchmarks/_airline.py``: ~20 steps, ~15 KB of
JSON each) and a suite of ten built-in checks over them: two ``trajectory_match`` checks with
arguments (writes compared exactly against each case's expected calls, successful calls
only), step checks selecting by name pattern, arguments from the case and outcome, and three
checks over every assistant reply (required facts in any reply, no card number leaked, a
confirmation asked). Then, each run in its own process, times the whole ``checkweigh run``
path on one core: stream and validate the JSONL, score, aggregate, write every result to a
fresh SQLite database; and the ``checkweigh run`` command on the same suite, timed from the
outside (start-up, reading the cases once to check and count them, the run, the report);
with ``--workers W``, that command with ``--workers W`` too, and its ratio to one process.
Prints the median with the lowest and highest run, and peak RSS.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _airline import SUITE, conversation  # the benchmarks' own helper modules
from _phase import in_child, peak_rss_mb, phase_cli


def write_inputs(folder: Path, n: int) -> Path:
    cases = folder / "conversations.jsonl"
    with cases.open("w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps(conversation(i), separators=(",", ":")) + "\n")
    suite = folder / "suite.yaml"
    suite.write_text(SUITE.format(cases=cases.name), encoding="utf-8")
    return suite


def phase_run(suite_path: Path, db: Path) -> dict[str, float]:
    from checkweigh.runs import run
    from checkweigh.store import Store
    from checkweigh.suites import load_suite

    suite = load_suite(suite_path)
    store = Store(f"sqlite:///{db}")
    start = time.perf_counter()
    outcome = run(suite, store=store, keep_results=False).outcome
    elapsed = time.perf_counter() - start
    rubric = outcome.summary.rubric("task")
    return {
        "cases": outcome.summary.executions,
        "stored": sum(1 for _ in store.iter_results(outcome.run_id)),
        "seconds": elapsed,
        "cases_per_s": outcome.summary.executions / elapsed,
        "tcr": rubric.tcr or 0.0,
        "errored": outcome.summary.errored_executions,
        "peak_rss_mb": peak_rss_mb(),
    }


def _remove(db: Path) -> None:
    """A SQLite database with its log and index files."""
    for path in db.parent.glob(f"{db.name}*"):
        path.unlink()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=10_000)
    p.add_argument("--runs", type=int, default=3, help="runs (median reported)")
    p.add_argument("--phase", choices=["run", "cli"])
    p.add_argument("--suite", type=Path)
    p.add_argument("--db", type=Path)
    p.add_argument("--workers", type=int, default=1, help="also time the command with --workers N")
    a = p.parse_args()
    if a.phase == "run":
        print(json.dumps(phase_run(a.suite, a.db)))
        return
    if a.phase == "cli":
        flags = ("--workers", str(a.workers)) if a.workers > 1 else ()
        print(json.dumps(phase_cli(a.suite, a.db, a.cases, flags)))
        return
    with tempfile.TemporaryDirectory(prefix="checkweigh-bench-") as tmp:
        suite = write_inputs(Path(tmp), a.cases)
        size = (Path(tmp) / "conversations.jsonl").stat().st_size
        print(
            f"input: {a.cases:,} cases, {size / 1e6:.1f} MB JSONL "
            f"({size / a.cases / 1e3:.1f} KB a case)"
        )
        runs = []
        # each run's database goes once it is measured: gigabytes of written pages left
        # behind would be flushed to disk during the next runs, and slow them
        db = Path(tmp) / "run.db"
        for _ in range(a.runs):
            runs.append(
                in_child(__file__, ["--phase", "run", "--suite", str(suite), "--db", str(db)])
            )
            _remove(db)
        cli_args = ["--phase", "cli", "--suite", str(suite), "--cases", str(a.cases)]
        cli, workers = [], []
        for _ in range(a.runs):  # interleaved, so a busy moment hits both alike
            cli.append(in_child(__file__, [*cli_args, "--db", str(db)]))
            _remove(db)
            if a.workers > 1:
                args = [*cli_args, "--db", str(db), "--workers", str(a.workers)]
                workers.append(in_child(__file__, args))
                _remove(db)
    rates = sorted(r["cases_per_s"] for r in runs)
    first = runs[0]
    print(f"median of {a.runs} run(s), each in its own process; 10 checks per case")
    print(
        f"end to end + SQLite:   {statistics.median(rates):>8,.0f} cases/s  "
        f"(runs {rates[0]:,.0f} .. {rates[-1]:,.0f}); bar >= 5,000"
    )
    cli_rates = sorted(r["cases_per_s"] for r in cli)
    print(
        f"checkweigh run (CLI):  {statistics.median(cli_rates):>8,.0f} cases/s  "
        f"(runs {cli_rates[0]:,.0f} .. {cli_rates[-1]:,.0f}); wall from the outside, "
        "start-up included"
    )
    if workers:
        rates = sorted(r["cases_per_s"] for r in workers)
        ratio = statistics.median(rates) / statistics.median(cli_rates)
        print(
            f"the command, --workers {a.workers}: {statistics.median(rates):>6,.0f} cases/s  "
            f"(runs {rates[0]:,.0f} .. {rates[-1]:,.0f}); {ratio:.2f}x the command alone"
        )
    print(
        f"stored {first['stored']:,.0f} results, TCR {first['tcr']:.1f}, "
        f"{first['errored']:.0f} errored; peak RSS "
        f"{max(r['peak_rss_mb'] for r in runs):.0f} MB (CLI "
        f"{max(r['peak_rss_mb'] for r in cli):.0f} MB)"
    )
    print(json.dumps({"runs": runs, "cli": cli, "workers": workers}))


if __name__ == "__main__":
    main()
