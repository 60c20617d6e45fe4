"""``--workers N``: recorded cases per second with 1 worker (in the driver) and with N worker
processes, end to end with SQLite, on the scoring benchmark's 1.7 KB cases.

Usage: python benchmarks/bench_workers.py [--cases N] [--workers 2] [--runs 3] [--api]

Each measurement is ``checkweigh run SUITE --workers N`` in a fresh process, timed from the
outside: the whole command (start-up, reading, scoring, storing every result, the report).
With ``--api`` also :func:`checkweigh.runs.run` alone in a fresh process (worker start-up,
parsing, scoring, storing, finishing the run). Prints cases/s for one worker and for N, their
ratio, and whether the runs stored identical results.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _phase import in_child, phase_cli  # the benchmarks' own helper module
from bench_scoring import DEFAULT_SUITE, record_cases


def recorded_suite(cases: Path, rubric: str) -> Path:
    """The scheduling suite without its target, reading ``cases`` and scoring one rubric,
    written beside the original (its python checks are imported relative to that folder)."""
    spec = yaml.safe_load(DEFAULT_SUITE.read_text())
    spec.pop("target", None)
    spec.pop("gates", None)
    spec["cases"] = str(cases)
    spec["rubrics"] = {rubric: spec["rubrics"][rubric]}
    path = DEFAULT_SUITE.parent / f".bench-workers-{cases.parent.name}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def pad_traces(cases: Path, steps: int) -> None:
    """Give every case ``steps`` more trace steps before its last (tool calls with their
    results, as a real agent's log has): with 20, a case weighs ~12 KB."""
    lines = cases.read_text().splitlines()
    with cases.open("w", encoding="utf-8") as fh:
        for i, line in enumerate(lines):
            row = json.loads(line)
            extra = []
            for k in range(steps):
                args = {"calendar": f"team-{k}", "day": "2025-03-04", "case": i}
                slots = [f"{h:02d}:{m:02d}" for h in range(9, 17) for m in (0, 30)]
                extra.append(
                    {
                        "kind": "tool_call",
                        "name": f"lookup_{k % 4}",
                        "arguments": args,
                        "result": {"free": slots, "busy": slots[::3]},
                        "latency_ms": 35.0 + k,
                    }
                )
            row["trace"] = row["trace"][:-1] + extra + row["trace"][-1:]
            fh.write(json.dumps(row, separators=(",", ":")) + "\n")


def _cpu_s() -> float:
    """CPU seconds of this process and of its ended children, and of the workers' server
    (``forkserver``), whose children the workers are."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime + _server_cpu_s()


def _server_cpu_s() -> float:
    """CPU seconds of the forkserver process and of the workers it forked and reaped (Linux's
    /proc; 0 elsewhere, or without a server)."""
    from multiprocessing import forkserver

    pid = getattr(forkserver._forkserver, "_forkserver_pid", None)
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    # utime, stime, cutime, cstime: fields 14-17 of proc(5), counted after the name
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def phase_run(suite_path: Path, db: Path, workers: int) -> dict[str, object]:
    from checkweigh.runs import RunOptions, run
    from checkweigh.store import Store
    from checkweigh.suites import load_suite

    suite = load_suite(suite_path)
    store = Store(f"sqlite:///{db}")
    options = RunOptions(workers=workers)  # more than one: the processes executor
    before = _cpu_s()
    driver_before = time.process_time()
    start = time.perf_counter()
    outcome = run(suite, options, store=store, keep_results=False)
    elapsed = time.perf_counter() - start
    cpu = _cpu_s() - before
    driver = time.process_time() - driver_before
    rows = [r.to_record() for r in store.iter_results(outcome.run_id)]
    return {
        "cases": outcome.summary.executions,
        "seconds": elapsed,
        "cases_per_s": outcome.summary.executions / elapsed,
        "cpu_us_per_case": cpu / outcome.summary.executions * 1e6,
        "driver_cpu_us_per_case": driver / outcome.summary.executions * 1e6,
        "digest": hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest(),
    }


def digest(db: Path) -> str:
    """The stored results of the one run in ``db``, as a hash."""
    from checkweigh.store import Store

    store = Store(f"sqlite:///{db}")
    (run,) = store.list_runs()
    rows = [r.to_record() for r in store.iter_results(run.id)]
    store.close()
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=100_000)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--rubric", default="completion")
    p.add_argument("--pad-steps", type=int, default=0, help="more trace steps per case")
    p.add_argument("--runs", type=int, default=3, help="runs per figure (median reported)")
    p.add_argument("--api", action="store_true", help="also time checkweigh.run() alone")
    p.add_argument("--phase", choices=["run"])
    p.add_argument("--suite", type=Path)
    p.add_argument("--db", type=Path)
    p.add_argument("--n", type=int, default=1)
    a = p.parse_args()
    if a.phase == "run":
        print(json.dumps(phase_run(a.suite, a.db, a.n)))
        return

    with tempfile.TemporaryDirectory(prefix="checkweigh-bench-") as tmp:
        cases = Path(tmp) / "recorded.jsonl"
        record_cases(DEFAULT_SUITE, cases, a.cases)
        if a.pad_steps:
            pad_traces(cases, a.pad_steps)
        size = cases.stat().st_size / a.cases
        print(f"input: {a.cases:,} recorded cases of {size / 1000:.1f} KB (JSONL)")
        suite = recorded_suite(cases, a.rubric)
        counts = (1, a.workers)
        cli: dict[int, list[dict[str, float]]] = {n: [] for n in counts}
        api: dict[int, list[dict[str, float]]] = {n: [] for n in counts}
        digests = set()
        try:
            for i in range(a.runs):  # interleaved, so a busy moment hits both alike
                for n in counts:
                    db = Path(tmp) / f"cli-w{n}-{i}.db"
                    cli[n].append(phase_cli(suite, db, a.cases, ("--workers", str(n))))
                    if i == 0:
                        digests.add(digest(db))
                    for stale in Path(tmp).glob(f"cli-w{n}-{i}.db*"):
                        stale.unlink()
                    if a.api:
                        db = Path(tmp) / f"api-w{n}-{i}.db"
                        args = ["--phase", "run", "--suite", str(suite), "--db", str(db)]
                        api[n].append(in_child(__file__, [*args, "--n", str(n)]))
                        digests.add(str(api[n][-1]["digest"]))
                        for stale in Path(tmp).glob(f"api-w{n}-{i}.db*"):
                            stale.unlink()
        finally:
            suite.unlink()
    print(f"median of {a.runs} run(s), each in its own process, end to end with SQLite")
    print("checkweigh run SUITE --workers N (the whole command: start-up, reading, scoring,")
    print("storing every result, the report), a new database each time:")
    one = statistics.median(r["cases_per_s"] for r in cli[1])
    many = statistics.median(r["cases_per_s"] for r in cli[a.workers])
    secs = {n: statistics.median(r["seconds"] for r in cli[n]) for n in counts}
    peak = {n: max(r["peak_rss_mb"] for r in cli[n]) for n in counts}
    print(
        f"  {'--workers 1 (in-process):':<26}{one:>10,.0f} cases/s  {secs[1]:6.2f} s"
        f"  driver peak {peak[1]:.0f} MB"
    )
    label = f"--workers {a.workers}:"
    print(
        f"  {label:<26}{many:>10,.0f} cases/s  {secs[a.workers]:6.2f} s"
        f"  driver peak {peak[a.workers]:.0f} MB"
    )
    print(f"  {'ratio:':<26}{many / one:>10.2f}x  (bar >= 1.8 on 2 cores)")
    if a.api:
        one_api = statistics.median(r["cases_per_s"] for r in api[1])
        many_api = statistics.median(r["cases_per_s"] for r in api[a.workers])
        cpu_one = statistics.median(r["cpu_us_per_case"] for r in api[1])
        cpu_many = statistics.median(r["cpu_us_per_case"] for r in api[a.workers])
        driver = statistics.median(r["driver_cpu_us_per_case"] for r in api[a.workers])
        print("checkweigh.run() alone (suite loaded and store open before the clock starts):")
        print(
            f"  {'1 worker (in-process):':<26}{one_api:>10,.0f} cases/s  {cpu_one:5.1f} us CPU/case"
        )
        print(f"  {label:<26}{many_api:>10,.0f} cases/s  {cpu_many:5.1f} us CPU/case (all)")
        print(f"  {'  of which the driver:':<26}{'':>18}{driver:5.1f} us CPU/case")
        print(f"  {'ratio:':<26}{many_api / one_api:>10.2f}x")
    print(f"{'identical stored results:':<28}{'yes' if len(digests) == 1 else 'NO':>8}")
    print(json.dumps({"workers": a.workers, "cli": cli, "api": api}))


if __name__ == "__main__":
    main()
