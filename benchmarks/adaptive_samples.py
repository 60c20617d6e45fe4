"""``samples: auto`` against a fixed ``samples: 5``: verdict flip rate and judge calls per
verdict, for a judge with a known per-answer noise.

Each simulated verdict is a real ``JudgeCheck.evaluate`` against a tiny judge model that
answers a case's true verdict, or the other one with probability ``p``, from a seeded
generator: the same requests, parsing and majority vote as a run. The flip rate is how often
the verdict differs from the true answer; its Monte Carlo standard error is printed with it.

    python benchmarks/adaptive_samples.py [--verdicts 30000] [--seed 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import time
from typing import Any

from checkweigh.core import AutoSamples, Case, VerdictState, adaptive_rerun, majority_flip
from checkweigh.judges import JudgeCheck, JudgeReply, JudgeRequest

NOISES = (0.05, 0.1, 0.2)
CASES = {
    truth: Case(id=truth, trace=[{"kind": "assistant", "content": f"Booked it. [truth:{truth}]"}])
    for truth in ("yes", "no")
}
MODES: dict[str, Any] = {
    "samples: 5": 5,
    "samples: auto": "auto",
    "auto, error: 0.005": {"auto": True, "error": 0.005},
}


class NoisyJudge:
    """Answers the case's true verdict, the other one with probability ``p``; counts calls."""

    name = "noisy:bench"

    def __init__(self, p: float, seed: int) -> None:
        self.p = p
        self.rng = random.Random(seed)
        self.calls = 0

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        self.calls += 1
        yes = "[truth:yes]" in request.messages[-1].content
        if self.rng.random() < self.p:
            yes = not yes
        answer = {"verdict": "yes" if yes else "no", "reason": "bench"}
        return JudgeReply(text=json.dumps(answer), model="bench")


async def measure(check: JudgeCheck, p: float, verdicts: int, seed: int) -> tuple[int, int, int]:
    """(wrong verdicts, errored verdicts, judge calls) over ``verdicts`` cases, 70% true yes."""
    judge = NoisyJudge(p, seed)
    truths = random.Random(seed + 1)
    wrong = bad = 0
    for _ in range(verdicts):
        truth = "yes" if truths.random() < 0.7 else "no"
        verdict = await check.evaluate(CASES[truth], judge)
        if verdict.state is VerdictState.ERRORED:
            bad += 1
        wrong += (verdict.state is VerdictState.PASSED) != (truth == "yes")
    return wrong, bad, judge.calls


def exact(samples: int | AutoSamples, p: float) -> float:
    """The flip rate the noise model predicts (what ``checkweigh stability`` uses)."""
    if isinstance(samples, AutoSamples):
        return adaptive_rerun(p, samples)[0]
    return majority_flip(p, samples)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verdicts", type=int, default=30_000, help="verdicts per setting")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    n = args.verdicts
    started = time.perf_counter()
    print(f"{n:,} verdicts per row; flip = verdict differs from the true answer (± 1 MC s.e.)")
    head = f"{'noise':>5}  {'mode':<20} {'flip rate':>17} {'exact':>6} {'vs fixed 5 (z)':>18}"
    print(f"{head} {'calls':>6} {'saved':>6}")
    for p in NOISES:
        base: tuple[float, float] | None = None
        for label, samples in MODES.items():
            check = JudgeCheck(question="Is the booking right?", samples=samples)
            # the same seed for every mode: the judge's answers are the same stream
            wrong, bad, calls = asyncio.run(measure(check, p, n, args.seed + int(p * 1000)))
            rate, per = wrong / n, calls / n
            se = math.sqrt(rate * (1 - rate) / n)
            if base is None:
                base, versus, saved = (rate, per), "", ""
            else:
                diff = rate - base[0]
                z = diff / math.sqrt(se**2 + base[0] * (1 - base[0]) / n)
                versus = f"{100 * diff:+.2f} pt ({z:+.1f})"
                saved = f"{100 * (1 - per / base[1]):.0f}%"
            errored = f" ({bad} errored)" if bad else ""
            print(
                f"{p:>5.2f}  {label:<20} {100 * rate:>7.2f}% ± {100 * se:.2f}"
                f" {100 * exact(check.samples, p):>5.2f}% {versus:>18} {per:>6.2f} {saved:>6}"
                f"{errored}"
            )
    print(f"took {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
