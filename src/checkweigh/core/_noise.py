"""The judge-noise model behind gate stability: how often a judge check's verdict flips on a
rerun, given a per-answer noise rate ``p`` and the ``k`` samples a verdict is the majority of.

``p`` is given by the user or measured from the samples stored with the verdicts; the stored
minority share reads below ``p`` (when most answers differ, the minority is the usual answer),
so it is inverted back to ``p``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel

from ._result import CaseResult

NoiseSource = Literal["measured", "given", "unmeasured"]


class CheckNoise(BaseModel):
    """How noisy one check's verdict is on a rerun."""

    check: str
    """The check."""
    source: NoiseSource
    """``measured`` from stored samples, ``given`` by the user, or ``unmeasured`` (taken as 0)."""
    answer_noise: float
    """p: the chance one judge answer differs from the judge's usual answer."""
    samples: int = 1
    """k: the answers a verdict is the majority of."""
    answers: int = 0
    """Measured: the valid answers pooled."""
    minority_share: float | None = None
    """Measured: sum of minority answers / sum of valid answers, before the correction."""
    flip: float = 0.0
    """The chance the verdict flips on a rerun: P(Binomial(k, p) > k/2)."""
    tie: float = 0.0
    """The chance an even split makes it errored on a rerun: P(Binomial(k, p) = k/2)."""


def _binomial(k: int, p: float) -> list[float]:
    return [math.comb(k, x) * p**x * (1.0 - p) ** (k - x) for x in range(k + 1)]


def majority_flip(rate: float, samples: int) -> tuple[float, float]:
    """(flip, tie): the chances that the majority of ``samples`` answers, each differing from
    the usual answer with probability ``rate``, is the other answer, or an even split."""
    pmf = _binomial(samples, rate)
    return math.fsum(pmf[samples // 2 + 1 :]), pmf[samples // 2] if samples % 2 == 0 else 0.0


def expected_minority_share(rate: float, samples: int) -> float:
    """E[min(X, k - X)] / k for X ~ Binomial(k, rate): what the stored minority share measures.

    It is below ``rate``: when most answers differ, the minority is the usual answer."""
    pmf = _binomial(samples, rate)
    return math.fsum(q * min(x, samples - x) for x, q in enumerate(pmf)) / max(samples, 1)


def answer_noise_from_share(share: float, samples: int) -> float:
    """The per-answer rate p whose expected minority share is ``share`` (by bisection)."""
    if samples < 2 or share <= 0.0:
        return 0.0
    low, high = 0.0, 0.5
    if share >= expected_minority_share(high, samples):
        return high
    for _ in range(60):
        mid = (low + high) / 2
        if expected_minority_share(mid, samples) < share:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def noise_model(
    results: Sequence[CaseResult],
    judge_samples: Mapping[str, int],
    *,
    default: float | None = None,
    per_check: Mapping[str, float] | None = None,
) -> list[CheckNoise]:
    """The noise of each judge check (``name -> samples: k``) and of each check in
    ``per_check``: a given rate (``per_check``, else ``default``), else the rate measured from
    the samples stored with the verdicts, else unmeasured (0)."""
    per_check = per_check or {}
    pooled: dict[str, list[int]] = {name: [0, 0] for name in judge_samples}
    for result in results:
        for name, acc in pooled.items():
            v = result.verdicts.get(name)
            m = v.measures if v is not None else {}
            if "yes" in m and "no" in m:
                acc[0] += int(min(m["yes"], m["no"]))
                acc[1] += int(m["yes"] + m["no"])
    out: list[CheckNoise] = []
    for name in [*judge_samples, *(n for n in per_check if n not in judge_samples)]:
        k = judge_samples.get(name, 1)
        minority, valid = pooled.get(name, [0, 0])
        given = per_check.get(name, default)
        if given is not None:
            noise = CheckNoise(check=name, source="given", answer_noise=given, samples=k)
        elif valid and k > 1:
            share = minority / valid
            noise = CheckNoise(
                check=name,
                source="measured",
                answer_noise=answer_noise_from_share(share, k),
                samples=k,
                answers=valid,
                minority_share=share,
            )
        else:
            noise = CheckNoise(check=name, source="unmeasured", answer_noise=0.0, samples=k)
        flip, tie = majority_flip(noise.answer_noise, k)
        out.append(noise.model_copy(update={"flip": flip, "tie": tie}))
    return out
