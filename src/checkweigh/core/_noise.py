"""The judge-noise model behind gate stability: how often a judge check's verdict flips on a
rerun, given a per-answer noise rate ``p`` and the ``k`` samples a verdict is the majority of.

``p`` is given by the user or measured from the samples stored with the verdicts; the stored
minority share reads below ``p`` (when most answers differ, the minority is the usual answer),
so it is inverted back to ``p``.

A check with ``samples: auto`` asks a number of answers that depends on the answers: its ``p``
is measured by maximum likelihood over the stored splits (the stopping rule drops out of the
likelihood, while it biases the minority share) and a rerun follows the same rule
(:func:`~checkweigh.core.adaptive_rerun`), not a fixed ``k``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel

from ._adaptive import AutoSamples, adaptive_rerun, answer_noise_mle
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
    """k: the answers a verdict is the majority of (adaptive: the most it asks)."""
    adaptive: bool = False
    """The check asks ``samples: auto``: a rerun stops as its rule does."""
    mean_samples: float | None = None
    """Adaptive: the answers a rerun asks on average at this noise."""
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
    judge_samples: Mapping[str, int | AutoSamples],
    *,
    default: float | None = None,
    per_check: Mapping[str, float] | None = None,
) -> list[CheckNoise]:
    """The noise of each judge check (``name -> samples``: k, or the adaptive rule) and of
    each check in ``per_check``: a given rate (``per_check``, else ``default``), else the rate
    measured from the samples stored with the verdicts, else unmeasured (0)."""
    per_check = per_check or {}
    splits: dict[str, list[tuple[int, int]]] = {name: [] for name in judge_samples}
    for result in results:
        for name, acc in splits.items():
            v = result.verdicts.get(name)
            m = v.measures if v is not None else {}
            if "yes" in m and "no" in m:
                acc.append((int(m["yes"]), int(m["no"])))
    out: list[CheckNoise] = []
    for name in [*judge_samples, *(n for n in per_check if n not in judge_samples)]:
        spec = judge_samples.get(name, 1)
        rule = spec if isinstance(spec, AutoSamples) else None
        k = spec.max if isinstance(spec, AutoSamples) else spec
        got = splits.get(name, [])
        minority = sum(min(y, n) for y, n in got)
        valid = sum(y + n for y, n in got)
        given = per_check.get(name, default)
        base = CheckNoise(
            check=name, source="unmeasured", answer_noise=0.0, samples=k, adaptive=rule is not None
        )
        if given is not None:
            noise = base.model_copy(update={"source": "given", "answer_noise": given})
        elif valid and k > 1 and (rule is None or any(y + n > 1 for y, n in got)):
            share = minority / valid
            rate = answer_noise_mle(got) if rule is not None else answer_noise_from_share(share, k)
            noise = base.model_copy(
                update={
                    "source": "measured",
                    "answer_noise": rate,
                    "answers": valid,
                    "minority_share": share,
                }
            )
        else:
            noise = base
        if rule is not None:
            flip, tie, mean = adaptive_rerun(noise.answer_noise, rule)
            out.append(noise.model_copy(update={"flip": flip, "tie": tie, "mean_samples": mean}))
        else:
            flip, tie = majority_flip(noise.answer_noise, k)
            out.append(noise.model_copy(update={"flip": flip, "tie": tie}))
    return out
