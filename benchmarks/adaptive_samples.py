"""``samples: auto`` against a fixed ``samples: 5``: verdict flip rate and judge calls per
verdict, for a judge with a known per-answer noise.

Each simulated verdict is a real ``JudgeCheck.evaluate`` against a tiny judge model that
answers a case's true verdict, or the other one with probability ``p``, from a seeded
generator: the same requests, parsing and majority vote as a run. The flip rate is how often
the verdict differs from the true answer; its Monte Carlo standard error is printed with it.

The first rows give every case the same noise. A real judge is sure of most cases and unsure
of a few, so the mix rows draw each case's noise from a mix (``--mix 0.8:0.02,0.2:0.3``: 80% of
cases at p = 0.02, 20% at 0.3), fixed across that case's answers; their exact flip rate is
the per-band exact values weighted by the mix.

    python benchmarks/adaptive_samples.py [--verdicts 30000] [--seed 1] [--mix W:P,W:P ...]
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
MIXES = ("0.8:0.02,0.2:0.3", "0.7:0.01,0.2:0.1,0.1:0.35")
"""Mostly clear cases and a few borderline ones (chosen before measuring, not tuned)."""
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


Mix = list[tuple[float, float]]
"""(share of cases, per-answer noise) bands; the shares sum to 1."""


def parse_mix(text: str) -> Mix:
    """``0.8:0.02,0.2:0.3`` -> [(0.8, 0.02), (0.2, 0.3)].

    Raises:
        argparse.ArgumentTypeError: a band that is not ``share:noise``, a share outside (0, 1],
            a noise outside (0, 0.5), or shares that do not sum to 1.
    """
    mix: Mix = []
    for band in text.split(","):
        share, _, noise = band.partition(":")
        try:
            w, p = float(share), float(noise)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected share:noise, got {band!r}") from None
        if not (0 < w <= 1 and 0 < p < 0.5):
            raise argparse.ArgumentTypeError(
                f"expected a share in (0, 1] and a noise in (0, 0.5), got {band!r}"
            )
        mix.append((w, p))
    if not math.isclose(sum(w for w, _ in mix), 1.0, abs_tol=1e-9):
        raise argparse.ArgumentTypeError(f"the shares must sum to 1, got {text!r}")
    return mix


async def measure(check: JudgeCheck, mix: Mix, verdicts: int, seed: int) -> tuple[int, int, int]:
    """(wrong verdicts, errored verdicts, judge calls) over ``verdicts`` cases, 70% true yes,
    each case's noise drawn from ``mix`` (the same cases, in order, for every mode)."""
    judge = NoisyJudge(mix[0][1], seed)
    cases = random.Random(seed + 1)
    shares = [w for w, _ in mix]
    noises = [p for _, p in mix]
    wrong = bad = 0
    for _ in range(verdicts):
        truth = "yes" if cases.random() < 0.7 else "no"
        judge.p = cases.choices(noises, shares)[0]
        verdict = await check.evaluate(CASES[truth], judge)
        if verdict.state is VerdictState.ERRORED:
            bad += 1
        wrong += (verdict.state is VerdictState.PASSED) != (truth == "yes")
    return wrong, bad, judge.calls


def exact(samples: int | AutoSamples, mix: Mix) -> float:
    """The flip rate the noise model predicts (what ``checkweigh stability`` uses), weighted
    over the mix's bands."""
    if isinstance(samples, AutoSamples):
        return math.fsum(w * adaptive_rerun(p, samples)[0] for w, p in mix)
    return math.fsum(w * majority_flip(p, samples)[0] for w, p in mix)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verdicts", type=int, default=30_000, help="verdicts per setting")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--mix",
        type=parse_mix,
        action="append",
        metavar="W:P,W:P",
        help=f"per-case noise mix, repeatable (default: {' and '.join(MIXES)})",
    )
    args = parser.parse_args()
    n = args.verdicts
    settings = [(f"{p:.2f}", [(1.0, p)]) for p in NOISES]
    mixes = args.mix or [parse_mix(text) for text in MIXES]
    settings += [(",".join(f"{w:g}:{p:g}" for w, p in mix), mix) for mix in mixes]
    wide = max(len(name) for name, _ in settings)
    started = time.perf_counter()
    print(f"{n:,} verdicts per row; flip = verdict differs from the true answer (± 1 MC s.e.)")
    print("noise: the same p for every case, or share:p bands drawn per case")
    head = f"{'noise':>{wide}}  {'mode':<20} {'flip rate':>17} {'exact':>6} {'vs fixed 5 (z)':>18}"
    print(f"{head} {'calls':>6} {'saved':>6}")
    for index, (name, mix) in enumerate(settings):
        base: tuple[float, float] | None = None
        for label, samples in MODES.items():
            check = JudgeCheck(question="Is the booking right?", samples=samples)
            # the same seed for every mode: the same cases, and the judge's answers start
            # from the same stream
            seed = args.seed + 1000 * index
            wrong, bad, calls = asyncio.run(measure(check, mix, n, seed))
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
                f"{name:>{wide}}  {label:<20} {100 * rate:>7.2f}% ± {100 * se:.2f}"
                f" {100 * exact(check.samples, mix):>5.2f}% {versus:>18} {per:>6.2f} {saved:>6}"
                f"{errored}"
            )
    print(f"took {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
