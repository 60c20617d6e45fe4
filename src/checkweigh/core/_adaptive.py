"""Adaptive judge samples (``samples: auto``): ask again only while the majority could still
change (:class:`AutoSamples` states the rule), what that rule means for a rerun, and how the
judge's noise is measured from the splits it leaves.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

MAX_SAMPLES = 25
"""The most answers a judge check may ask for one verdict (fixed or adaptive)."""
_KEYS = ("auto", "max", "error", "noise")
_SHAPE = "a whole number from 1 to 25, 'auto', or {auto: true, max, error, noise}"


class AutoSamples(BaseModel):
    """``samples: auto``: ask one answer at a time until the majority is settled.

    After each answer, with ``a`` valid answers for the leading verdict, ``b`` for the other,
    ``r = max - asked`` answers left in the budget and the assumed per-answer noise ``p``
    (``noise``), the leader is the judge's usual answer with posterior probability
    ``w = (1-p)^(a-b) / ((1-p)^(a-b) + p^(a-b))`` (even prior odds), and the chance that
    asking the rest of the budget would leave it without a strict majority is::

        P(flip) = w * P(Bin(r, 1-p) <= m) + (1 - w) * P(Bin(r, p) <= m),  m = floor((b + r - a) / 2)

    Ask again while the answers are tied or ``P(flip) >= error``; stop when it falls below,
    or once ``max`` answers were asked. Errored answers do not vote but use up the budget; the
    verdict is the majority of the valid answers (none, or a tie at ``max``: errored).

    With the defaults (``max: 9``, ``error: 0.05``, ``noise: 0.1``) a lead of two answers
    gives P(flip) of about 0.012 and a lead of one about 0.1, so the rule is "ask until one
    verdict leads by two, at most 9": two agreeing answers settle it. The rule reads only the
    answers, in order: the same answers give the same verdict.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, json_schema_extra={"required": ["auto"]})

    auto: Literal[True] = True
    """Marks the adaptive form (``samples: {auto: true, ...}``)."""
    max: int = Field(default=9, ge=3, le=MAX_SAMPLES)
    """The most answers asked for one verdict (odd, so a full budget of valid answers cannot
    tie)."""
    error: float = Field(default=0.05, gt=0.0, lt=0.5)
    """Stop once the chance that the rest of the budget would overturn the leader is below
    this."""
    noise: float = Field(default=0.1, gt=0.0, lt=0.5)
    """The per-answer noise the rule assumes (``checkweigh stability`` measures it)."""

    @model_validator(mode="after")
    def _odd(self) -> AutoSamples:
        if self.max % 2 == 0:
            raise ValueError(f"max must be odd (a full budget cannot tie), got {self.max}")
        return self

    def flip_chance(self, yes: int, no: int, asked: int) -> float:
        """The chance that the rest of the budget would leave the current leader without a
        strict majority (1.0 while the answers are tied)."""
        return _flip_chance(max(yes, no), min(yes, no), self.max - asked, self.noise)

    def settled(self, yes: int, no: int, asked: int) -> bool:
        """Whether to stop after ``asked`` answers of which ``yes`` and ``no`` were valid."""
        return asked >= self.max or (yes != no and self.flip_chance(yes, no, asked) < self.error)


def parse_samples(value: Any) -> int | AutoSamples:
    """A suite's ``samples:`` value: a whole number of answers, ``auto``, or the adaptive
    mapping.

    Raises:
        ValueError: anything else, in one line that names the key at fault.
    """
    if isinstance(value, AutoSamples):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        if 1 <= value <= MAX_SAMPLES:
            return value
        raise ValueError(f"expected {_SHAPE}, got {value!r}")
    if value == "auto":
        return AutoSamples()
    if not isinstance(value, dict):
        raise ValueError(f"expected {_SHAPE}, got {value!r}")
    unknown = [k for k in value if k not in _KEYS]
    if unknown:
        raise ValueError(f"unknown key {unknown[0]!r}; the adaptive form takes {', '.join(_KEYS)}")
    if "auto" not in value:
        raise ValueError("auto: required in the adaptive form {auto: true, max, error, noise}")
    if value["auto"] is not True:
        raise ValueError(f"auto: expected true (samples: N asks a fixed N), got {value['auto']!r}")
    out: dict[str, Any] = {"auto": True}
    for key, low, high, kind in (
        ("max", 3, MAX_SAMPLES, "an odd whole number"),
        ("error", 0.0, 0.5, "a number between"),
        ("noise", 0.0, 0.5, "a number between"),
    ):
        if key not in value:
            continue
        got = value[key]
        if key == "max":
            ok = isinstance(got, int) and not isinstance(got, bool) and low <= got <= high
            ok = ok and got % 2 == 1
            expected = f"{kind} from {low} to {high}"
        else:
            ok = isinstance(got, int | float) and not isinstance(got, bool) and low < got < high
            ok = ok and math.isfinite(got)
            expected = f"{kind} {low:g} and {high:g} (exclusive)"
        if not ok:
            raise ValueError(f"{key}: expected {expected}, got {got!r}")
        out[key] = got
    return AutoSamples.model_validate(out)


@lru_cache(maxsize=4096)
def _flip_chance(lead: int, trail: int, remaining: int, noise: float) -> float:
    if lead == trail:
        return 1.0
    d = lead - trail
    w = 1.0 / (1.0 + (noise / (1.0 - noise)) ** d)  # posterior: the leader is the usual answer
    cut = (trail + remaining - lead) // 2  # the leader keeps no strict majority at X <= cut
    if cut < 0:
        return 0.0
    return w * _cdf(remaining, 1.0 - noise, cut) + (1.0 - w) * _cdf(remaining, noise, cut)


def _cdf(n: int, q: float, x: int) -> float:
    return math.fsum(math.comb(n, i) * q**i * (1.0 - q) ** (n - i) for i in range(min(x, n) + 1))


def adaptive_rerun(rate: float, rule: AutoSamples) -> tuple[float, float, float]:
    """(flip, tie, mean answers): the chances that a rerun of ``rule``, each answer differing
    from the usual one with probability ``rate`` (none errored), ends on the other verdict or
    on a tie, and the answers it asks on average. Exact, over every path of the rule."""
    flip = tie = calls = 0.0
    states = {(0, 0): 1.0}  # (usual answers, other answers) -> probability, not yet stopped
    for asked in range(rule.max + 1):
        following: dict[tuple[int, int], float] = {}
        for (u, o), prob in states.items():
            if rule.settled(u, o, asked):
                calls += prob * asked
                flip += prob if o > u else 0.0
                tie += prob if o == u else 0.0
                continue
            for step, chance in (((u + 1, o), 1.0 - rate), ((u, o + 1), rate)):
                following[step] = following.get(step, 0.0) + prob * chance
        states = following
    return flip, tie, calls


def answer_noise_mle(splits: Iterable[tuple[int, int]]) -> float:
    """The per-answer noise p that best explains verdicts' ``(yes, no)`` splits, by maximum
    likelihood (EM) with each verdict's usual answer unknown (a share pi of them yes).

    The likelihood of a verdict's answers is pi (1-p)^yes p^no + (1-pi) p^yes (1-p)^no
    whatever rule decided when to stop asking: the rule reads only the answers already given,
    so its choices add a factor free of p (the likelihood principle). That keeps the estimate
    right for adaptive splits, where the naive minority share reads low: stopping as soon as
    two answers agree hides the disagreements a fixed count would have seen.
    """
    counts: dict[tuple[int, int], int] = {}
    for yes, no in splits:
        if yes + no:
            counts[(yes, no)] = counts.get((yes, no), 0) + 1
    answers = sum((y + n) * c for (y, n), c in counts.items())
    if not answers or all(y + n < 2 for y, n in counts):
        return 0.0
    p, pi = 0.25, 0.5
    for _ in range(500):
        wrong = share_yes = 0.0
        for (y, n), c in counts.items():
            right_yes = pi * (1.0 - p) ** y * p**n
            right_no = (1.0 - pi) * p**y * (1.0 - p) ** n
            w = right_yes / (right_yes + right_no)  # P(the usual answer is yes | this split)
            wrong += c * (w * n + (1.0 - w) * y)
            share_yes += c * w
        new_p = min(wrong / answers, 0.5)
        pi = share_yes / sum(counts.values())
        if abs(new_p - p) < 1e-10:
            return new_p
        p = max(new_p, 1e-12)
    return p
