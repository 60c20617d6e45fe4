"""Judge-call throughput and calls per case, against a local server with 200 ms latency.

Usage: python benchmarks/bench_judges.py [--latency 0.2] [--seconds 10] [--repeats 3]

The real ``openai`` SDK talks to checkweigh.testing's scripted server on 127.0.0.1 (no
network). Figures:
- sustained throughput at concurrency 16 and 64, as a fraction of the limit (concurrency /
  latency): the median of ``--repeats`` runs of ``--seconds`` worth of calls each, timed
  from the first call to the last reply (opening the connections included);
- framework overhead per call: one call at a time with no server latency (client side: the
  server runs in its own process for both of these);
- LLM calls per case for faithfulness, and for a 5-criterion rubric in batch mode;
- calls made by a cached re-run of a judge suite.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from checkweigh.core import Case
from checkweigh.judges import (
    BinaryAnswer,
    CachedJudge,
    FaithfulnessCheck,
    JudgeCache,
    JudgeCheck,
    JudgeRequest,
    Message,
    MeteredJudge,
    OpenAIJudge,
    Question,
    QuestionBatch,
    RetryPolicy,
)
from checkweigh.testing import Reply, fake_llm_server

YES = Reply(json.dumps({"verdict": "yes", "reason": "supported by the trace"}))
REQUEST = JudgeRequest(
    messages=(Message(role="user", content="Is the reply grounded?"),),
    json_schema=BinaryAnswer.model_json_schema(),
)


def judge(base_url: str, concurrency: int) -> MeteredJudge:
    client = OpenAIJudge("bench", base_url=base_url, api_key="bench", retry=RetryPolicy(1))
    return MeteredJudge(client, concurrency=concurrency)


@contextmanager
def server_process(latency: float) -> Iterator[str]:
    """The scripted server in its own process, so it does not share this one's GIL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "checkweigh.testing", "--keep-alive", "--latency", str(latency)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdin is not None
    try:
        yield proc.stdout.readline().strip()
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)


def throughput(concurrency: int, latency: float, seconds: float = 10.0) -> dict[str, float]:
    """Sustained calls per second: ``seconds`` worth of calls at the limit, timed from the
    first call to the last reply, connection set-up included."""
    calls = int(concurrency / latency * seconds)
    with server_process(latency) as base_url:
        metered = judge(base_url, concurrency)

        async def all_calls() -> None:
            await asyncio.gather(*(metered.complete(REQUEST) for _ in range(calls)))
            await metered.aclose()

        start = time.perf_counter()
        asyncio.run(all_calls())
        elapsed = time.perf_counter() - start
    limit = concurrency / latency
    return {
        "calls": calls,
        "calls_per_s": calls / elapsed,
        "fraction_of_limit": calls / elapsed / limit,
    }


def overhead(calls: int = 200) -> float:
    with server_process(0.0) as base_url:
        metered = judge(base_url, 1)

        async def one_by_one() -> None:
            for _ in range(calls):
                await metered.complete(REQUEST)
            await metered.aclose()

        start = time.perf_counter()
        asyncio.run(one_by_one())
        return (time.perf_counter() - start) / calls * 1000.0


def case(i: int) -> Case:
    return Case(
        id=f"c{i}",
        input={"question": "When was the report published?"},
        trace=[
            {"kind": "tool_call", "name": "fetch_report", "result": "Published October 14."},
            {"kind": "assistant", "content": "The report was published on October 14."},
        ],
    )


def faithfulness_calls(cases: int = 20) -> float:
    statements = json.dumps(
        {"statements": [{"text": "The report was published on October 14.", "load_bearing": True}]}
    )
    verdicts = json.dumps({"answers": [{"index": 1, "verdict": "yes", "reason": "in the trace"}]})
    script = [Reply(statements), Reply(verdicts)] * cases
    with fake_llm_server(script) as server:
        check = FaithfulnessCheck()
        asked = judge(server.base_url, 1)

        async def run_all() -> None:
            for i in range(cases):  # one case at a time, so the script stays in order
                await check.evaluate(case(i), asked)
            await asked.aclose()

        asyncio.run(run_all())
        return len(server.requests) / cases


def batch_calls(cases: int = 20, criteria: int = 5) -> float:
    answers = [{"index": i, "verdict": "yes", "reason": "fine"} for i in range(1, criteria + 1)]
    with fake_llm_server([], default=Reply(json.dumps({"answers": answers}))) as server:
        metered = judge(server.base_url, 16)
        questions = QuestionBatch(
            tuple(
                Question(f"c{i}", JudgeCheck(question=f"Criterion {i}?")) for i in range(criteria)
            )
        )

        async def run_all() -> None:
            for i in range(cases):
                await questions.evaluate(case(i), metered)
            await metered.aclose()

        asyncio.run(run_all())
        return len(server.requests) / cases


def cached_rerun_calls(cases: int = 50) -> tuple[int, int]:
    with tempfile.TemporaryDirectory() as tmp, fake_llm_server([], default=YES) as server:
        made = []
        for _ in range(2):
            cached = CachedJudge(judge(server.base_url, 16), JudgeCache(Path(tmp)))
            check = JudgeCheck(question="Is the answer grounded?")

            async def run_all(check: JudgeCheck = check, cached: CachedJudge = cached) -> None:
                await asyncio.gather(*(check.evaluate(case(i), cached) for i in range(cases)))
                await cached.aclose()

            before = len(server.requests)
            asyncio.run(run_all())
            made.append(len(server.requests) - before)
        return made[0], made[1]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--latency", type=float, default=0.2, help="server latency in seconds")
    p.add_argument("--seconds", type=float, default=10.0, help="length of each throughput run")
    p.add_argument("--repeats", type=int, default=3, help="throughput runs per concurrency")
    a = p.parse_args()
    for concurrency in (16, 64):
        fractions = sorted(
            throughput(concurrency, a.latency, a.seconds)["fraction_of_limit"]
            for _ in range(a.repeats)
        )
        limit = concurrency / a.latency
        median = fractions[len(fractions) // 2]
        print(
            f"concurrency {concurrency:>3}: {median * limit:7.1f} calls/s = {median:.2f} of the "
            f"limit {limit:.0f}/s (median of {a.repeats}, runs {fractions[0]:.2f} .. "
            f"{fractions[-1]:.2f}; {limit * a.seconds:.0f} calls each; bar >= 0.9)"
        )
    print(f"overhead per call (no latency, one at a time): {overhead():.2f} ms")
    print(f"faithfulness: {faithfulness_calls():.1f} LLM calls per case (bar <= 2)")
    print(f"5-criterion rubric, batch mode: {batch_calls():.1f} LLM calls per case (bar 1)")
    first, second = cached_rerun_calls()
    print(f"cached re-run: {first} calls on the first run, {second} on the re-run (bar 0)")


if __name__ == "__main__":
    main()
