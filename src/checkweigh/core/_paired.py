"""A paired execution as a comparison reads it, and the per-check pass-rate changes over the
pairs: the part of a comparison that runs once per verdict of every pair."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import NamedTuple

from pydantic import BaseModel

from ._case_pass import CaseState, PassPolicy
from ._result import CaseResult
from ._stats import mcnemar_exact
from ._verdict import VerdictState


class CheckDelta(BaseModel):
    """A check's pass rate in both runs, over the paired executions where it decided (in an
    unpaired comparison, over each run's executions where it decided)."""

    check: str
    base_rate: float | None
    candidate_rate: float | None
    change: float | None
    worse: int
    """Executions where it went passed -> failed (0 in an unpaired comparison: no pairs)."""
    better: int
    """Executions where it went failed -> passed (0 in an unpaired comparison)."""
    p_value: float
    """Exact McNemar on those flips; in an unpaired comparison, Fisher's exact test of the two
    pass rates."""


class Decided(NamedTuple):
    """One execution as a comparison reads it: its case state and score as its run's pass
    policy decides them, its latency and each check's state (no reasons: those of the changed
    executions are asked for when the comparison needs them)."""

    case_id: str
    repeat: int
    position: int
    """The case's position in its cases file (to find its stored result)."""
    state: CaseState
    score: float | None
    latency_ms: float | None
    checks: tuple[str, ...]
    """The checks ``verdicts`` lists (one tuple shared by a run's executions, when it can)."""
    verdicts: tuple[VerdictState | None, ...]
    """Each check's state, in the order of ``checks`` (None: no verdict)."""


def decided(result: CaseResult, policy: PassPolicy) -> Decided:
    """``result`` as a comparison reads it under ``policy``."""
    state, score = policy.state(result)
    return Decided(
        result.case_id,
        result.repeat,
        result.position,
        state,
        score,
        result.latency_ms,
        tuple(result.verdicts),
        tuple(v.state for v in result.verdicts.values()),
    )


_V_PASSED = VerdictState.PASSED
_V_FAILED = VerdictState.FAILED


def check_deltas(pairs: list[tuple[Decided, Decided]]) -> list[CheckDelta]:
    # per check: base passed, base decided, cand passed, cand decided, worse, better
    counts: dict[str, list[int]] = {}
    # a run's executions share a few patterns of check states (17 in 10,000 airline cases):
    # each distinct (base, candidate) pattern is counted at C speed, then walked once
    patterns = Counter((b.checks, c.checks, b.verdicts, c.verdicts) for b, c in pairs)
    for (b_checks, c_checks, b_states, c_states), k in patterns.items():
        if b_checks is c_checks or b_checks == c_checks:
            states: Iterable[tuple[str, VerdictState | None, VerdictState | None]] = zip(
                b_checks, b_states, c_states, strict=True
            )
        else:
            cand = dict(zip(c_checks, c_states, strict=True))
            states = ((n, bv, cand.get(n)) for n, bv in zip(b_checks, b_states, strict=True))
        for name, bs, cs in states:
            if bs is None or cs is None:
                continue
            slot = counts.get(name)
            if slot is None:
                slot = counts[name] = [0, 0, 0, 0, 0, 0]
            if bs is _V_PASSED:
                slot[0] += k
                slot[1] += k
                if cs is _V_FAILED:
                    slot[4] += k
            elif bs is _V_FAILED:
                slot[1] += k
                if cs is _V_PASSED:
                    slot[5] += k
            if cs is _V_PASSED:
                slot[2] += k
                slot[3] += k
            elif cs is _V_FAILED:
                slot[3] += k
    out = [
        check_delta(
            name, bp, bn, cp, cn, worse=worse, better=better, p_value=mcnemar_exact(worse, better)
        )
        for name, (bp, bn, cp, cn, worse, better) in counts.items()
    ]
    out.sort(key=lambda d: (d.change if d.change is not None else 0.0, d.check))
    return out


def check_delta(
    check: str,
    base_passed: int,
    base_decided: int,
    candidate_passed: int,
    candidate_decided: int,
    worse: int,
    better: int,
    p_value: float,
) -> CheckDelta:
    """A check's pass rate in both runs, from how often it passed of how often it decided."""
    base = base_passed / base_decided if base_decided else None
    cand = candidate_passed / candidate_decided if candidate_decided else None
    return CheckDelta(
        check=check,
        base_rate=base,
        candidate_rate=cand,
        change=cand - base if base is not None and cand is not None else None,
        worse=worse,
        better=better,
        p_value=p_value,
    )
