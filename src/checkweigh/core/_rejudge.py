"""A change between two runs judged differently, split into the judge's part and the agent's.

The base run's outputs judged again with the candidate's judge (the *rejudged* base) sit
between the two runs: the same outputs as the base, the same judge as the candidate. So

- total = candidate - base,
- judge part = rejudged - base (same outputs: only the judge moved),
- agent part = candidate - rejudged (same judge: only the outputs moved),

and the two parts add up to the total. Each is estimated with a 95% interval: a paired
bootstrap over the executions (case id and repeat) both sides decided, when they decided the
same ones; otherwise the two sides' means with a normal (Welch) interval.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Sequence

from pydantic import BaseModel, Field

from ._case_pass import CaseState
from ._paired import Decided
from ._stats import paired_bootstrap
from ._verdict import VerdictState

_Z975 = 1.959963984540054
_Key = tuple[str, int]
_Value = Callable[[Decided], float | None]


class SplitPart(BaseModel):
    """One part of a change (total, judge or agent): its estimate and 95% interval, in points."""

    change: float | None
    """The change (None: one side decided no execution)."""
    low: float | None
    """Lower end of the 95% interval."""
    high: float | None
    """Upper end of the 95% interval."""
    paired: bool
    """Paired by case id and repeat (else the two sides' means, unpaired)."""
    n: int
    """Pairs (paired) or executions on the two sides together (unpaired)."""


class SplitFigure(BaseModel):
    """A figure in the base, rejudged-base and candidate runs, and its change split."""

    metric: str
    """``case pass rate (%)``, ``average case score`` or ``check NAME pass rate (%)``."""
    base: float | None
    rejudged: float | None
    """The base run's outputs under the candidate's judge."""
    candidate: float | None
    total: SplitPart
    """candidate - base."""
    judge: SplitPart
    """rejudged - base: what the judge change alone moved."""
    agent: SplitPart
    """candidate - rejudged: what the agent change alone moved."""


class JudgeSplit(BaseModel):
    """What ``compare --rejudge`` adds to a comparison of runs judged differently."""

    base_run: str
    """The base run whose outputs were judged again."""
    rejudged_run: str
    """The stored run holding the base run's outputs judged again."""
    judge: str
    """``provider:model`` of the judge that rejudged them (the candidate's, or ``--judge``)."""
    differences: list[str] = Field(default_factory=list)
    """How the base and candidate runs were judged differently."""
    kept: int = 0
    """Base executions the agent failed: no output to judge, so they stay as they were."""
    figures: list[SplitFigure] = Field(default_factory=list)


def passed_value(d: Decided) -> float:
    """100 for a passed execution, else 0 (an errored one is not passed)."""
    return 100.0 if d.state is CaseState.PASSED else 0.0


def score_value(d: Decided) -> float | None:
    """The execution's score, when it produced a verdict (as ``compare`` counts it)."""
    return None if d.score is None or d.state is CaseState.ERRORED else d.score


def check_value(check: str) -> _Value:
    """100 when ``check`` passed, 0 when it failed, None otherwise (not applicable, errored,
    not in the run)."""

    def value(d: Decided) -> float | None:
        try:
            state = d.verdicts[d.checks.index(check)]
        except ValueError:
            return None
        if state is VerdictState.PASSED:
            return 100.0
        return 0.0 if state is VerdictState.FAILED else None

    return value


def split_change(
    base: Iterable[Decided],
    rejudged: Iterable[Decided],
    candidate: Iterable[Decided],
    checks: Sequence[str],
    *,
    seed: int = 0,
    resamples: int = 4000,
) -> list[SplitFigure]:
    """The case pass rate, the average case score and each of ``checks``' pass rates in the
    three runs, each change split into its judge and agent parts (see the module).

    A base execution missing from ``rejudged`` (the agent failed it: there was no output to
    judge) counts there as it was in the base.
    """
    b = {(d.case_id, d.repeat): d for d in base}
    r = {(d.case_id, d.repeat): d for d in rejudged}
    c = {(d.case_id, d.repeat): d for d in candidate}
    for key, row in b.items():
        r.setdefault(key, row)
    rng = random.Random(seed)
    values: list[tuple[str, _Value]] = [
        ("case pass rate (%)", passed_value),
        ("average case score", score_value),
        *((f"check {name} pass rate (%)", check_value(name)) for name in checks),
    ]
    figures = []
    for metric, value in values:
        vb, vr, vc = (_values(side, value) for side in (b, r, c))
        figures.append(
            SplitFigure(
                metric=metric,
                base=_mean(vb.values()),
                rejudged=_mean(vr.values()),
                candidate=_mean(vc.values()),
                total=_part(vb, vc, rng, resamples),
                judge=_part(vb, vr, rng, resamples),
                agent=_part(vr, vc, rng, resamples),
            )
        )
    return figures


def _values(side: dict[_Key, Decided], value: _Value) -> dict[_Key, float]:
    return {k: v for k, d in side.items() if (v := value(d)) is not None}


def _mean(values: Iterable[float]) -> float | None:
    kept = list(values)
    return math.fsum(kept) / len(kept) if kept else None


def _part(
    before: dict[_Key, float], after: dict[_Key, float], rng: random.Random, resamples: int
) -> SplitPart:
    """after - before, paired when both decided the same executions."""
    if not before or not after:
        return SplitPart(change=None, low=None, high=None, paired=False, n=0)
    if before.keys() == after.keys():
        # in key order: the seeded bootstrap then draws the same, whatever order runs finished in
        deltas = [after[k] - before[k] for k in sorted(before)]
        boot = paired_bootstrap(deltas, rng, resamples)
        return SplitPart(change=boot.mean, low=boot.low, high=boot.high, paired=True, n=len(before))
    # different executions on the two sides: Welch's normal interval of the difference
    mb, ma = _mean(before.values()) or 0.0, _mean(after.values()) or 0.0
    se = math.sqrt(_variance(before.values(), mb) + _variance(after.values(), ma))
    change = ma - mb
    return SplitPart(
        change=change,
        low=change - _Z975 * se,
        high=change + _Z975 * se,
        paired=False,
        n=len(before) + len(after),
    )


def _variance(values: Iterable[float], mean: float) -> float:
    """The variance of the mean of ``values`` (sample variance over n)."""
    kept = list(values)
    if len(kept) < 2:
        return 0.0
    return math.fsum((v - mean) ** 2 for v in kept) / (len(kept) - 1) / len(kept)
