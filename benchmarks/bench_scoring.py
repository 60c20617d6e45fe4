"""Scoring throughput, throughput with persistence, and peak memory on 100,000 recorded cases.

Usage: python benchmarks/bench_scoring.py [--cases N] [--suite PATH] [--rubric NAME]

1. Records the suite's agent on each of the suite's cases and writes N recorded cases to a
   JSONL file (the templates cycled, each with its own id and a varied latency).
2. Each measurement runs in a fresh child process so its peak RSS is its own, ``--runs``
   times (default 3); the median is reported, with the lowest and highest run, because
   shared virtual machines vary by tens of percent from one run to the next:
   - parse: stream and validate the JSONL (no scoring);
   - score: stream, validate and score with the rubric; the scoring time (checks, score,
     outcome, aggregation) is timed separately from parsing, on one core;
   - persist: the whole run in the session (stream, score, aggregate, write every result to
     a fresh SQLite database, finish the run), as ``checkweigh.run`` runs it;
   - cli: the ``checkweigh run`` command itself on a suite of the recorded cases (the
     rubric's checks, no target), timed from the outside: start-up, reading the cases once to
     check and count them, the run, the report.
Prints one line per figure and a JSON summary.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _phase import in_child, peak_rss_mb, phase_cli  # the benchmarks' own helper module

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SUITE = ROOT / "examples" / "scheduling" / "suite.yaml"


def record_cases(suite_path: Path, out: Path, n: int) -> None:
    """Write ``n`` recorded cases made by running the suite's agent on its cases."""
    from checkweigh.runs import AgentTarget
    from checkweigh.suites import iter_cases, load_suite

    suite = load_suite(suite_path)
    templates = list(iter_cases(suite.cases_path))
    if suite.target is not None:
        target = AgentTarget.load(suite.target.agent, suite.base_dir)

        async def record_all() -> list[dict[str, object]]:
            rows = []
            for case in templates:
                ran, _ = await target.run_case(case)
                rows.append(ran.model_dump(mode="json", exclude_defaults=True))
            return rows

        rows = asyncio.run(record_all())
    else:
        rows = [c.model_dump(mode="json", exclude_defaults=True) for c in templates]
    with out.open("w", encoding="utf-8") as fh:
        for i in range(n):
            row = dict(rows[i % len(rows)])
            row["id"] = f"{row['id']}-{i:06d}"
            row["latency_ms"] = 200.0 + (i * 7919) % 1800
            fh.write(json.dumps(row, separators=(",", ":")) + "\n")


def phase_parse(cases: Path) -> dict[str, float]:
    from checkweigh.suites import iter_cases

    start = time.perf_counter()
    n = sum(1 for _ in iter_cases(cases))
    elapsed = time.perf_counter() - start
    return {
        "cases": n,
        "seconds": elapsed,
        "cases_per_s": n / elapsed,
        "peak_rss_mb": peak_rss_mb(),
    }


def phase_score(suite_path: Path, rubric: str, cases: Path) -> dict[str, float]:
    from checkweigh.core import RunAggregator
    from checkweigh.runs import Evaluator
    from checkweigh.suites import iter_cases, load_suite

    suite = load_suite(suite_path)
    chosen = [r for r in suite.rubrics if r.name == rubric]
    evaluator = Evaluator.for_rubrics(suite.checks, chosen)
    aggregator = RunAggregator(chosen)
    clock = time.perf_counter
    scoring = 0.0
    n = 0
    start = clock()
    for index, case in enumerate(iter_cases(cases)):
        t0 = clock()
        aggregator.add(evaluator.evaluate(case, index=index))
        scoring += clock() - t0
        n += 1
    total = clock() - start
    summary = aggregator.summary().rubric(rubric)
    return {
        "cases": n,
        "checks": len(evaluator.checks),
        "scoring_seconds": scoring,
        "scoring_cases_per_s": n / scoring,
        "parse_and_score_cases_per_s": n / total,
        "tcr": summary.tcr or 0.0,
        "peak_rss_mb": peak_rss_mb(),
    }


def phase_persist(suite_path: Path, rubric: str, cases: Path, db: Path) -> dict[str, float]:
    import dataclasses

    from checkweigh.runs import run
    from checkweigh.store import Store
    from checkweigh.suites import CasesSource, load_suite

    suite = load_suite(suite_path)
    suite = dataclasses.replace(
        suite,
        rubrics=tuple(r for r in suite.rubrics if r.name == rubric),
        gates=(),
        cases=CasesSource(cases),
        spec=suite.spec.model_copy(update={"target": None}),
    )
    store = Store(f"sqlite:///{db}")
    start = time.perf_counter()
    outcome = run(suite, store=store, keep_results=False)
    elapsed = time.perf_counter() - start
    stored = sum(1 for _ in store.iter_results(outcome.run_id))
    return {
        "cases": outcome.summary.executions,
        "stored": stored,
        "seconds": elapsed,
        "cases_per_s": outcome.summary.executions / elapsed,
        "db_mb": db.stat().st_size / 1e6,
        "peak_rss_mb": peak_rss_mb(),
    }


def write_cli_suite(suite_path: Path, rubric: str, cases: Path, folder: Path) -> Path:
    """The suite for ``checkweigh run``: the suite's checks and ``rubric`` over the recorded
    ``cases``, without its target and gates, beside links to the suite folder's files (its
    python checks' modules)."""
    import yaml

    spec = yaml.safe_load(suite_path.read_text(encoding="utf-8"))
    spec.pop("target", None)
    spec.pop("gates", None)
    spec["rubrics"] = {rubric: spec["rubrics"][rubric]}
    spec["cases"] = str(cases.resolve())
    folder.mkdir()
    for entry in suite_path.parent.resolve().iterdir():
        if entry.name != suite_path.name:
            (folder / entry.name).symlink_to(entry)
    out = folder / "recorded-suite.yaml"
    out.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=100_000)
    p.add_argument("--suite", type=Path, default=DEFAULT_SUITE)
    p.add_argument("--rubric", default="completion")
    p.add_argument("--phase", choices=["parse", "score", "persist", "cli"])
    p.add_argument("--file", type=Path)
    p.add_argument("--db", type=Path)
    p.add_argument("--runs", type=int, default=3, help="runs per phase (median reported)")
    a = p.parse_args()
    if a.phase == "parse":
        print(json.dumps(phase_parse(a.file)))
        return
    if a.phase == "score":
        print(json.dumps(phase_score(a.suite, a.rubric, a.file)))
        return
    if a.phase == "persist":
        print(json.dumps(phase_persist(a.suite, a.rubric, a.file, a.db)))
        return
    if a.phase == "cli":
        print(json.dumps(phase_cli(a.suite, a.db, a.cases)))
        return

    with tempfile.TemporaryDirectory(prefix="checkweigh-bench-") as tmp:
        cases = Path(tmp) / "recorded.jsonl"
        t0 = time.perf_counter()
        record_cases(a.suite, cases, a.cases)
        size_mb = cases.stat().st_size / 1e6
        print(
            f"input: {a.cases:,} recorded cases, {size_mb:.1f} MB JSONL "
            f"(written in {time.perf_counter() - t0:.1f}s)"
        )
        common = ["--suite", str(a.suite), "--rubric", a.rubric, "--file", str(cases)]
        parse = [in_child(__file__, ["--phase", "parse", *common]) for _ in range(a.runs)]
        score = [in_child(__file__, ["--phase", "score", *common]) for _ in range(a.runs)]
        persist = [
            in_child(
                __file__, ["--phase", "persist", *common, "--db", str(Path(tmp) / f"bench{i}.db")]
            )
            for i in range(a.runs)
        ]
        cli_suite = write_cli_suite(a.suite, a.rubric, cases, Path(tmp) / "cli")
        cli_args = ["--phase", "cli", "--suite", str(cli_suite), "--cases", str(a.cases)]
        cli = [
            in_child(__file__, [*cli_args, "--db", str(Path(tmp) / f"cli{i}.db")])
            for i in range(a.runs)
        ]

    def line(label: str, runs: list[dict[str, float]], key: str, note: str = "") -> None:
        values = sorted(r[key] for r in runs)
        spread = f"(runs {values[0]:,.0f} .. {values[-1]:,.0f})" if len(values) > 1 else ""
        print(f"{label:<24}{statistics.median(values):>10,.0f} cases/s  {spread}  {note}")

    print(f"median of {a.runs} run(s) per figure, each in its own process")
    line("parse only:", parse, "cases_per_s", "bar >= 100,000")
    line(
        "scoring (one core):",
        score,
        "scoring_cases_per_s",
        f"{score[0]['checks']:.0f} checks/case; bar >= 50,000",
    )
    line("parse + score:", score, "parse_and_score_cases_per_s")
    line(
        "end to end + SQLite:",
        persist,
        "cases_per_s",
        f"{persist[0]['stored']:,.0f} results stored; bar >= 25,000",
    )
    line("checkweigh run (CLI):", cli, "cases_per_s", "wall from the outside, start-up included")
    peak = max(r["peak_rss_mb"] for r in parse + score + persist + cli)
    print(
        f"{'peak RSS:':<24}{peak:>10,.0f} MB        (parse "
        f"{max(r['peak_rss_mb'] for r in parse):.0f}, score "
        f"{max(r['peak_rss_mb'] for r in score):.0f}, persist "
        f"{max(r['peak_rss_mb'] for r in persist):.0f}, CLI "
        f"{max(r['peak_rss_mb'] for r in cli):.0f}; bar < 300)"
    )
    print(json.dumps({"parse": parse, "score": score, "persist": persist, "cli": cli}))


if __name__ == "__main__":
    main()
