"""Reliability over repeated tries of each task: pass@k (at least one of k tries passes) and
pass^k (all k tries pass), by the unbiased estimators over n tries with c passes.

For a task tried n times with c passes, drawing k of the n tries without replacement:
``pass@k = 1 - C(n-c, k) / C(n, k)`` (Chen et al., 2021) and ``pass^k = C(c, k) / C(n, k)``
(Yao et al., tau-bench, 2024). A run's figure is the mean over its tasks tried at least k times.
An errored try counts as not passed.
"""

from __future__ import annotations

from collections.abc import Iterable
from math import comb

from pydantic import BaseModel, Field


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of ``k`` tries drawn from ``n`` (``c`` passed) passes."""
    if not 0 < k <= n or not 0 <= c <= n:
        raise ValueError(f"need 0 < k <= n and 0 <= c <= n, got n={n}, c={c}, k={k}")
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """The chance that all ``k`` tries drawn from ``n`` (``c`` passed) pass."""
    if not 0 < k <= n or not 0 <= c <= n:
        raise ValueError(f"need 0 < k <= n and 0 <= c <= n, got n={n}, c={c}, k={k}")
    return comb(c, k) / comb(n, k)


class ReliabilityAtK(BaseModel):
    """The run's pass@k and pass^k for one k."""

    k: int
    """Tries drawn per task."""
    pass_at_k: float
    """Mean over tasks of the chance that at least one of k tries passes."""
    pass_hat_k: float
    """Mean over tasks of the chance that all k tries pass."""
    tasks: int
    """Tasks tried at least k times (the others cannot be estimated at this k)."""


class FlakyTask(BaseModel):
    """A task that passed on some tries and not on others."""

    case_id: str
    """The case."""
    tries: int
    """Times it was tried."""
    passes: int
    """Tries that passed."""


FLAKIEST = 20
"""Flaky tasks listed in a summary: the closest to passing half their tries first."""


class Reliability(BaseModel):
    """How reliably the agent passes each task across its repeats (``--repeat K``)."""

    tasks: int
    """Distinct tasks (cases) tried."""
    max_tries: int
    """The most tries any task had."""
    flaky_tasks: int
    """Tasks that passed on some tries and failed (or errored) on others."""
    flaky_rate: float
    """``flaky_tasks`` over the tasks tried more than once."""
    by_k: list[ReliabilityAtK] = Field(default_factory=list)
    """pass@k and pass^k for every k from 1 to ``max_tries``."""
    flakiest: list[FlakyTask] = Field(default_factory=list)
    """Up to :data:`FLAKIEST` flaky tasks, the closest to an even split first (a task's
    pass@k and pass^k follow from its tries and passes)."""

    def at(self, k: int) -> ReliabilityAtK | None:
        """The figures at ``k``; None when no task was tried ``k`` times."""
        for row in self.by_k:
            if row.k == k:
                return row
        return None


class RepeatTally:
    """Tries and passes per task, counted as executions stream in."""

    __slots__ = ("_counts",)

    def __init__(self) -> None:
        self._counts: dict[str, list[int]] = {}

    def add(self, case_id: str, passed: bool) -> None:
        """Count one try of ``case_id``."""
        counts = self._counts.get(case_id)
        if counts is None:
            self._counts[case_id] = [1, int(passed)]
        else:
            counts[0] += 1
            counts[1] += passed

    def summary(self) -> Reliability | None:
        """The run's reliability; None when no task was tried twice."""
        if not self._counts:
            return None
        max_tries = max(n for n, _ in self._counts.values())
        if max_tries < 2:
            return None
        repeated = [(n, c) for n, c in self._counts.values() if n > 1]
        flaky = sum(1 for n, c in repeated if 0 < c < n)
        split = sorted(
            (abs(c / n - 0.5), case_id, n, c)
            for case_id, (n, c) in self._counts.items()
            if 0 < c < n
        )[:FLAKIEST]
        by_k = []
        for k in range(1, max_tries + 1):
            tried = [(n, c) for n, c in self._counts.values() if n >= k]
            by_k.append(
                ReliabilityAtK(
                    k=k,
                    pass_at_k=sum(pass_at_k(n, c, k) for n, c in tried) / len(tried),
                    pass_hat_k=sum(pass_hat_k(n, c, k) for n, c in tried) / len(tried),
                    tasks=len(tried),
                )
            )
        return Reliability(
            tasks=len(self._counts),
            max_tries=max_tries,
            flaky_tasks=flaky,
            flaky_rate=flaky / len(repeated),
            by_k=by_k,
            flakiest=[FlakyTask(case_id=i, tries=n, passes=c) for _, i, n, c in split],
        )


class ReliabilityChange(BaseModel):
    """pass@k and pass^k of two runs at one k, over the tries both made of the same tasks."""

    k: int
    """Tries drawn per task."""
    base_pass_at_k: float
    candidate_pass_at_k: float
    base_pass_hat_k: float
    candidate_pass_hat_k: float
    tasks: int
    """Tasks both runs tried at least k times."""


def reliability_changes(pairs: Iterable[tuple[str, bool, bool]]) -> list[ReliabilityChange]:
    """For each k, both runs' pass@k and pass^k over the paired tries ``(case_id, base passed,
    candidate passed)``; empty unless some task was tried twice in both."""
    base, candidate = RepeatTally(), RepeatTally()
    for case_id, base_passed, candidate_passed in pairs:
        base.add(case_id, base_passed)
        candidate.add(case_id, candidate_passed)
    b, c = base.summary(), candidate.summary()
    if b is None or c is None:
        return []
    out = []
    for before, after in zip(b.by_k, c.by_k, strict=True):  # same tasks, same tries: same ks
        out.append(
            ReliabilityChange(
                k=before.k,
                base_pass_at_k=before.pass_at_k,
                candidate_pass_at_k=after.pass_at_k,
                base_pass_hat_k=before.pass_hat_k,
                candidate_pass_hat_k=after.pass_hat_k,
                tasks=before.tasks,
            )
        )
    return out
