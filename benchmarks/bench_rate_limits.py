"""Judge calls with the defaults against a provider's rate limits (issue 25, item 1).

Usage: python benchmarks/bench_rate_limits.py [--calls 2000] [--latency 0.2] [--only NAME ...]

``--calls`` yes/no judge checks (one call each, every case a different prompt) go through the
judge a ``checkweigh run`` builds when no concurrency is given (``make_cached_judge``, the
answer cache bypassed: adaptive concurrency) and the real ``openai`` SDK, to checkweigh.testing's
fake provider in its own process, answering after ``--latency`` s:

- ``600rpm-400ktpm``: limits of 600 requests and 400,000 tokens a minute (a call counts about
  560 tokens, its prompt at 4 characters a token plus ``max_tokens``, so the requests bind);
- ``3000rpm``: 3,000 requests a minute;
- ``3000rpm-200ktpm``: 3,000 requests and 200,000 tokens a minute (the tokens bind, at about
  357 calls a minute);
- ``unlimited``: no limit, against today's fixed concurrency of 32 (``fixed-32``).

Printed per scenario: the wall from the first call to the last answer, the throughput in calls
(and tokens) a minute as a fraction of the limit that binds, the share of calls the server
answered 429, and what the judge learned. Targets: >= 0.9 of the limit, <= 2% answered 429,
and ``unlimited`` no slower than ``fixed-32``. The full 600 RPM run takes about 3.5 minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from typing import Any

from checkweigh.core import Case, Verdict, VerdictState
from checkweigh.judges import JudgeCheck, JudgeOptions, close_judge
from checkweigh.runs import make_cached_judge

SCENARIOS: dict[str, tuple[int | None, int | None, int | None]] = {
    # name: (rpm, tpm, --judge-concurrency)
    "600rpm-400ktpm": (600, 400_000, None),
    "3000rpm": (3000, None, None),
    "3000rpm-200ktpm": (3000, 200_000, None),
    "unlimited": (None, None, None),
    "fixed-32": (None, None, 32),
}
VERDICT = '{"verdict": "yes", "reason": "the booking matches the request"}'


def case(i: int) -> Case:
    """A booking conversation; each one's text differs, so no two prompts are the same."""
    return Case(
        id=f"booking-{i:05d}",
        input={"message": f"Book Alice and Bob for the review of project {i} on Tuesday"},
        trace=[
            {"kind": "user", "content": f"Book Alice and Bob for the review of project {i}"},
            {
                "kind": "tool_call",
                "name": "check_availability",
                "arguments": {"day": "Tue"},
                "result": "10:00 free",
            },
            {"kind": "tool_call", "name": "book_meeting", "arguments": {"time": "10:00"}},
            {
                "kind": "assistant",
                "content": f"Booked Alice and Bob on Tuesday at 10:00 for project {i}.",
            },
        ],
    )


def serve(latency: float, rpm: int | None, tpm: int | None) -> tuple[subprocess.Popen[str], str]:
    """The fake provider in its own process (its CPU not the client's); its base URL."""
    args = [sys.executable, "-m", "checkweigh.testing", "--keep-alive", "--stats"]
    args += ["--latency", str(latency), "--answer", VERDICT]
    args += ["--rpm", str(rpm)] if rpm else []
    args += ["--tpm", str(tpm)] if tpm else []
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def scenario(name: str, calls: int, latency: float) -> dict[str, Any]:
    """One scenario against a fresh fake provider."""
    rpm, tpm, concurrency = SCENARIOS[name]
    proc, base_url = serve(latency, rpm, tpm)
    os.environ["OPENAI_BASE_URL"] = base_url
    os.environ["OPENAI_API_KEY"] = "sk-bench-not-a-real-key"
    judge = make_cached_judge(
        "openai:gpt-bench",
        no_cache=True,
        replay=False,
        options=JudgeOptions(concurrency=concurrency),
    )
    assert judge is not None
    check = JudgeCheck(question="Did the agent book the meeting that was asked for?")

    async def every() -> list[Verdict]:
        try:
            return list(
                await asyncio.gather(*(check.evaluate(case(i), judge) for i in range(calls)))
            )
        finally:
            await close_judge(judge)

    start = time.perf_counter()
    verdicts = asyncio.run(every())
    wall = time.perf_counter() - start
    out, _ = proc.communicate(timeout=30)
    seen = json.loads(out.strip().splitlines()[-1])
    stats = judge.judge.stats()
    return {
        "name": name,
        "wall": wall,
        "decided": sum(v.state is VerdictState.PASSED for v in verdicts),
        "seen": seen,
        "stats": stats,
        "rpm": rpm,
        "tpm": tpm,
    }


def show(r: dict[str, Any], calls: int) -> str:
    seen, stats = r["seen"], r["stats"]
    per_min = calls / r["wall"] * 60.0
    tokens_per_min = seen["limited_tokens"] / r["wall"] * 60.0
    fractions = []
    if r["rpm"]:
        fractions.append(per_min / r["rpm"])
    if r["tpm"]:
        fractions.append(tokens_per_min / r["tpm"])
    of_limit = f"{max(fractions):.3f} of the limit, " if fractions else ""
    sent = seen["requests"] + seen["rate_limited"]
    refused = 100.0 * seen["rate_limited"] / sent if sent else 0.0
    learned = (
        f"learned {stats.learned_rpm} rpm / {stats.learned_tpm} tpm, " if stats.adaptive else ""
    )
    tokens = f" ({tokens_per_min:,.0f} tokens/min)" if r["tpm"] else ""
    return (
        f"{r['name']:>15}: {calls} calls in {r['wall']:.1f} s, {per_min:,.0f} calls/min{tokens}, "
        f"{of_limit}{refused:.2f}% answered 429 ({seen['rate_limited']}), {learned}"
        f"peak {stats.peak_in_flight} in flight, {r['decided']} verdicts decided"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--latency", type=float, default=0.2)
    p.add_argument("--only", nargs="*", choices=list(SCENARIOS), default=list(SCENARIOS))
    a = p.parse_args()
    print(
        f"rate limits: {a.calls} judge calls, {a.latency * 1000:.0f} ms latency, "
        f"python {sys.version.split()[0]}, {os.cpu_count()} cpu(s)"
    )
    for name in a.only:
        print(show(scenario(name, a.calls, a.latency), a.calls), flush=True)


if __name__ == "__main__":
    main()
