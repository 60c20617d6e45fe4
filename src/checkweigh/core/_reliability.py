"""Reliability over repeated tries of each task: pass@k (at least one of k tries passes) and
pass^k (all k tries pass), by the unbiased estimators over n tries with c passes.

For a task tried n times with c passes, drawing k of the n tries without replacement:
``pass@k = 1 - C(n-c, k) / C(n, k)`` (Chen et al., 2021) and ``pass^k = C(c, k) / C(n, k)``
(Yao et al., tau-bench, 2024). A run's figure is the mean over its tasks tried at least k times.
An errored try counts as not passed.

A flaky task's flips are split by what changed: the agent's behaviour (its trace or final state
differs between tries) or the verdicts alone (the same trace judged differently: judge checks,
sampled or not, or a check that is not deterministic). Recorded cases have one trace for every
try, so all their flips are judge variation.
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
    agent_varied: bool = False
    """Its tries differ in trace or final state, and so in outcome."""
    judge_varied: bool = False
    """Two tries with the same trace and final state got different outcomes."""


class TaskReliability(BaseModel):
    """One task's tries and passes, with its pass@k and pass^k for every k up to its tries."""

    case_id: str
    tries: int
    passes: int
    pass_at_k: dict[int, float]
    """k to the chance that at least one of k tries passes."""
    pass_hat_k: dict[int, float]
    """k to the chance that all k tries pass."""


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
    agent_variation: int = 0
    """Flaky tasks whose tries differ in the agent's trace or final state, with outcomes that
    differ between the different behaviours."""
    judge_variation: int = 0
    """Flaky tasks where the same trace and final state got different outcomes."""
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


class _Task:
    """One task's tries: counts, and per behaviour (trace and final state) seen, its counts."""

    __slots__ = ("behaviours", "n", "passes")

    def __init__(self) -> None:
        self.n = 0
        self.passes = 0
        self.behaviours: dict[object, list[int]] = {}

    def add(self, passed: bool, behaviour: object) -> None:
        self.n += 1
        self.passes += passed
        counts = self.behaviours.get(behaviour)
        if counts is None:
            self.behaviours[behaviour] = [1, int(passed)]
        else:
            counts[0] += 1
            counts[1] += passed

    @property
    def judge_varied(self) -> bool:
        return any(0 < c < n for n, c in self.behaviours.values())

    @property
    def agent_varied(self) -> bool:
        rates = {c / n for n, c in self.behaviours.values()}
        return len(rates) > 1


class RepeatTally:
    """Tries and passes per task, counted as executions stream in."""

    __slots__ = ("_tasks",)

    def __init__(self) -> None:
        self._tasks: dict[str, _Task] = {}

    def add(self, case_id: str, passed: bool, behaviour: object = None) -> None:
        """Count one try of ``case_id``; ``behaviour`` is what the agent did on it, as anything
        hashable that is equal for equal traces and final states (None: a recorded case, the
        same on every try)."""
        task = self._tasks.get(case_id)
        if task is None:
            task = self._tasks[case_id] = _Task()
        task.add(passed, behaviour)

    def tasks(self) -> list[TaskReliability]:
        """Every task's figures, in the order first tried."""
        return [
            TaskReliability(
                case_id=case_id,
                tries=t.n,
                passes=t.passes,
                pass_at_k={k: pass_at_k(t.n, t.passes, k) for k in range(1, t.n + 1)},
                pass_hat_k={k: pass_hat_k(t.n, t.passes, k) for k in range(1, t.n + 1)},
            )
            for case_id, t in self._tasks.items()
        ]

    def summary(self) -> Reliability | None:
        """The run's reliability; None when no task was tried twice."""
        if not self._tasks:
            return None
        counts = {case_id: (t.n, t.passes) for case_id, t in self._tasks.items()}
        max_tries = max(n for n, _ in counts.values())
        if max_tries < 2:
            return None
        repeated = [(n, c) for n, c in counts.values() if n > 1]
        flaky_ids = [case_id for case_id, (n, c) in counts.items() if 0 < c < n]
        split = sorted((abs(counts[i][1] / counts[i][0] - 0.5), i) for i in flaky_ids)[:FLAKIEST]
        by_k = []
        for k in range(1, max_tries + 1):
            tried = [(n, c) for n, c in counts.values() if n >= k]
            by_k.append(
                ReliabilityAtK(
                    k=k,
                    pass_at_k=sum(pass_at_k(n, c, k) for n, c in tried) / len(tried),
                    pass_hat_k=sum(pass_hat_k(n, c, k) for n, c in tried) / len(tried),
                    tasks=len(tried),
                )
            )
        flaky = [self._tasks[i] for i in flaky_ids]
        return Reliability(
            tasks=len(counts),
            max_tries=max_tries,
            flaky_tasks=len(flaky_ids),
            flaky_rate=len(flaky_ids) / len(repeated),
            agent_variation=sum(1 for t in flaky if t.agent_varied),
            judge_variation=sum(1 for t in flaky if t.judge_varied),
            by_k=by_k,
            flakiest=[self._flaky(i) for _, i in split],
        )

    def _flaky(self, case_id: str) -> FlakyTask:
        t = self._tasks[case_id]
        return FlakyTask(
            case_id=case_id,
            tries=t.n,
            passes=t.passes,
            agent_varied=t.agent_varied,
            judge_varied=t.judge_varied,
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
    tries = list(pairs)
    if len({case_id for case_id, _, _ in tries}) == len(tries):
        return []  # no task tried twice (the common run): nothing to tally
    base, candidate = RepeatTally(), RepeatTally()
    for case_id, base_passed, candidate_passed in tries:
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
