"""CPU per judge call through the engine, from a run of 2,000 judge calls (issue 13: <= 1 ms).

Usage: python benchmarks/bench_judge_cpu.py [--cases 1000] [--rounds 3] [--profile OUT]

1,000 recorded RAG answers scored for faithfulness (2 judge calls each) by ``checkweigh.run``
into a SQLite file, with the judge stack a CLI run builds (the answer cache in a fresh folder,
so every call is a miss that is written, and the metered concurrency gate) in front of a model
that answers at once without a network: what is measured is checkweigh's own work per call
(formatting the case, building the request, the cache key and write, validating the answer,
scoring and writing the result), not the SDK's HTTP. The figure is the process CPU time of the
run divided by the calls, with the CPU of the same run without a judge subtracted (loading the
suite and cases, the run's bookkeeping): the median of ``--rounds`` rounds.

A second figure runs the real ``openai`` SDK against checkweigh.testing's scripted server in its
own process (its CPU not counted): the whole client CPU per call, the SDK's included.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_faithfulness import STATEMENTS_ANSWER, VERDICTS_ANSWER, ScriptedJudge, write_suite

from checkweigh import run
from checkweigh.judges import (
    CachedJudge,
    JudgeCache,
    JudgeReply,
    JudgeRequest,
    Message,
    MeteredJudge,
    OpenAIJudge,
    RetryPolicy,
)
from checkweigh.store import Store
from checkweigh.suites import load_suite


class InstantJudge:
    """Answers each faithfulness step at once, as the scripted server would."""

    name = "bench:instant"

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        text = STATEMENTS_ANSWER if request.schema_name == "statements" else VERDICTS_ANSWER
        return JudgeReply(text=text, model="instant", input_tokens=600, output_tokens=60)


def cpu_of_run(suite: Path, judge: object | None, db: Path) -> tuple[float, int]:
    """Process CPU seconds of one run, and the judge calls it made."""
    loaded = load_suite(suite)
    store = Store(f"sqlite:///{db}")
    start = time.process_time()
    report = run(loaded, judge=judge, store=store)  # type: ignore[arg-type]
    cpu = time.process_time() - start
    store.close()
    stats = report.summary.judge
    return cpu, stats.calls if stats is not None else 0


def engine_cpu_per_call(suite: Path, scratch: Path, round_no: int) -> tuple[float, float, int]:
    """Milliseconds of CPU per call: the judge's share, and the whole run's divided by the calls."""
    cache = JudgeCache(scratch / f"cache-{round_no}")
    judge = CachedJudge(MeteredJudge(InstantJudge(), concurrency=32), cache)  # type: ignore[arg-type]
    with_judge, calls = cpu_of_run(suite, judge, scratch / f"judged-{round_no}.db")
    without, _ = cpu_of_run(suite, None, scratch / f"plain-{round_no}.db")
    return (with_judge - without) / calls * 1000.0, with_judge / calls * 1000.0, calls


def sdk_cpu_per_call(calls: int = 2000) -> float:
    """Client CPU per call of the real SDK path against the scripted server (other process)."""
    server = ScriptedJudge()
    base_url = server.base_url
    try:
        client = OpenAIJudge("bench", base_url=base_url, api_key="bench", retry=RetryPolicy(1))
        metered = MeteredJudge(client, concurrency=32)
        request = JudgeRequest(
            messages=(Message(role="user", content="Split the answer into statements."),),
            schema_name="statements",
        )

        async def all_calls() -> None:
            await asyncio.gather(*(metered.complete(request) for _ in range(calls)))
            await metered.aclose()

        start = time.process_time()
        asyncio.run(all_calls())
        return (time.process_time() - start) / calls * 1000.0
    finally:
        server.stats()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--cases", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--profile", type=Path, help="write a cProfile of one judged run here")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        suite = write_suite(scratch, a.cases)
        if a.profile is not None:
            import cProfile

            judge = CachedJudge(
                MeteredJudge(InstantJudge(), concurrency=32),  # type: ignore[arg-type]
                JudgeCache(scratch / "cache-profile"),
            )
            cProfile.runctx(
                "cpu_of_run(suite, judge, scratch / 'profile.db')",
                globals(),
                {"suite": suite, "judge": judge, "scratch": scratch},
                str(a.profile),
            )
        figures = [engine_cpu_per_call(suite, scratch, i) for i in range(a.rounds)]
    per_call = statistics.median(f[0] for f in figures)
    whole = statistics.median(f[1] for f in figures)
    calls = figures[0][2]
    print(
        f"judge CPU through the engine: {per_call:.3f} ms per call (bar <= 1 ms), "
        f"{calls} calls per run, median of {a.rounds} "
        f"(rounds: {', '.join(f'{f[0]:.3f}' for f in figures)} ms); the whole run's CPU "
        f"(suite, cases, scoring and storing included) {whole:.3f} ms per call"
    )
    print(f"with the openai SDK's HTTP client: {sdk_cpu_per_call():.3f} ms client CPU per call")


if __name__ == "__main__":
    main()
