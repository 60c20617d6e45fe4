"""Comparing runs that repeat their cases (``--repeat K``): task by task, not try by try.

Try 3 of a task in one run has nothing to do with try 3 in the other: pairing tries by their
number and testing the flips (McNemar) counts a flaky task's ordinary ups and downs as
regressions. With repeats a task's figure is its pass rate over its tries (passes / tries; an
errored try is not passed), and the suite's figure the mean of those over the tasks both runs
tried.

The test is a **stratified permutation test over tasks**. Under "no change", the tries of one
task are exchangeable between the two runs, whatever the task's own pass rate; so each task's
tries are shuffled between the runs (its base and candidate try counts kept), the mean change in
pass rate is recomputed, and the p-value is the share of shuffles at least as far from 0 as the
observed change (two-sided, +1 corrected, seeded). Why this test: it is exact for the binary
tries of each task (no normal approximation, which a handful of tries per task cannot carry),
takes tasks with unequal tries, ties and tasks that always (or never) pass as they are (those
cannot move and add nothing), and its statistic is the figure reported. A signed-rank test on the
per-task differences would drop the many zero differences and needs a tie correction on rates
that take only a few values.

Each task's shuffle draws how many of its passes land in the candidate's tries, which is
hypergeometric: a run of 1,000 tasks is 1,000 weighted draws per resample, in C.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from itertools import accumulate
from operator import add

from pydantic import BaseModel

from ._case_pass import CaseState
from ._paired import CheckDelta, Decided, check_delta
from ._reliability import pass_hat_k
from ._verdict import VerdictState


class TaskChange(BaseModel):
    """One task tried in both runs: its tries, passes and pass rate in each."""

    case_id: str
    """The task (case)."""
    base_tries: int
    """Tries in the base run."""
    base_passes: int
    """Of them passed (an errored try is not passed)."""
    candidate_tries: int
    """Tries in the candidate run."""
    candidate_passes: int
    """Of them passed."""
    base_rate: float
    """base_passes / base_tries (0-1)."""
    candidate_rate: float
    """candidate_passes / candidate_tries (0-1)."""
    change: float
    """candidate_rate - base_rate (0-1): below 0 the task's pass rate dropped."""
    k: int
    """Tries per draw of pass^k: the fewer of the two runs' tries of this task."""
    base_pass_hat_k: float
    """The chance that all k tries pass, in the base run."""
    candidate_pass_hat_k: float
    """The same in the candidate run."""


class _Task:
    __slots__ = ("latencies", "passes", "scores", "tries")

    def __init__(self) -> None:
        self.tries = 0
        self.passes = 0
        self.scores: list[float] = []
        self.latencies: list[float] = []


def has_repeats(rows: Iterable[Decided]) -> bool:
    """Whether some case was tried more than once."""
    seen: set[str] = set()
    for r in rows:
        if r.case_id in seen:
            return True
        seen.add(r.case_id)
    return False


def tasks_of(rows: Iterable[Decided]) -> dict[str, _Task]:
    """Each task's tries, passes, scores (of tries that were not errored) and latencies."""
    out: dict[str, _Task] = {}
    for r in rows:
        task = out.get(r.case_id)
        if task is None:
            task = out[r.case_id] = _Task()
        task.tries += 1
        task.passes += r.state is CaseState.PASSED
        if r.score is not None and r.state is not CaseState.ERRORED:
            task.scores.append(r.score)
        if r.latency_ms is not None:
            task.latencies.append(r.latency_ms)
    return out


Counts = tuple[int, int, int, int]
"""One task's (base tries, base passes, candidate tries, candidate passes)."""


def mean_rate_change(tasks: Sequence[Counts]) -> float:
    """The mean over tasks of candidate pass rate - base pass rate (0-1)."""
    return math.fsum(pc / nc - pb / nb for nb, pb, nc, pc in tasks) / len(tasks)


def stratified_permutation(tasks: Sequence[Counts], rng: random.Random, resamples: int) -> float:
    """Two-sided p-value of "no change" for :func:`mean_rate_change` (see the module
    docstring); 1.0 when no task has both passed and failed tries."""
    if not tasks:
        return 1.0
    observed = abs(mean_rate_change(tasks)) - 1e-12
    total = [0.0] * resamples
    moving = 0
    for nb, pb, nc, pc in tasks:
        n, passes = nb + nc, pb + pc
        if passes in (0, n):
            continue  # every shuffle gives the same rates: a difference of 0
        moving += 1
        # x of the task's passes fall on the candidate's nc tries: hypergeometric
        low, high = max(0, nc - (n - passes)), min(nc, passes)
        xs = range(low, high + 1)
        weights = [math.comb(passes, x) * math.comb(n - passes, nc - x) for x in xs]
        values = [x / nc - (passes - x) / nb for x in xs]
        draws = rng.choices(values, cum_weights=list(accumulate(weights)), k=resamples)
        total = list(map(add, total, draws))
    if not moving:
        return 1.0
    count = len(tasks)
    beyond = sum(1 for t in total if abs(t / count) >= observed)
    return (beyond + 1) / (resamples + 1)


def task_changes(
    base: dict[str, _Task], candidate: dict[str, _Task]
) -> tuple[list[TaskChange], list[Counts]]:
    """Every task both runs tried, in the candidate's order, and its counts for the test."""
    changes: list[TaskChange] = []
    counts: list[Counts] = []
    for case_id, c in candidate.items():
        b = base.get(case_id)
        if b is None:
            continue
        k = min(b.tries, c.tries)
        counts.append((b.tries, b.passes, c.tries, c.passes))
        changes.append(
            TaskChange(
                case_id=case_id,
                base_tries=b.tries,
                base_passes=b.passes,
                candidate_tries=c.tries,
                candidate_passes=c.passes,
                base_rate=b.passes / b.tries,
                candidate_rate=c.passes / c.tries,
                change=c.passes / c.tries - b.passes / b.tries,
                k=k,
                base_pass_hat_k=pass_hat_k(b.tries, b.passes, k),
                candidate_pass_hat_k=pass_hat_k(c.tries, c.passes, k),
            )
        )
    return changes, counts


def task_means(
    base: dict[str, _Task], candidate: dict[str, _Task], latency: bool
) -> list[tuple[float, float]]:
    """Per task both runs measured: the mean score (or latency) of its tries in each run."""
    out = []
    for case_id, c in candidate.items():
        b = base.get(case_id)
        if b is None:
            continue
        before, after = (b.latencies, c.latencies) if latency else (b.scores, c.scores)
        if before and after:
            out.append((math.fsum(before) / len(before), math.fsum(after) / len(after)))
    return out


def check_rate_deltas(
    base: Iterable[Decided],
    candidate: Iterable[Decided],
    rng: random.Random,
    resamples: int,
) -> list[CheckDelta]:
    """Each check's pass rate over all tries where it decided, in both runs, tested task by
    task like the case pass rate; ``worse`` / ``better`` count the tasks where the check's pass
    rate dropped / rose."""
    # check -> task -> [base decided, base passed, candidate decided, candidate passed]
    counts: dict[str, dict[str, list[int]]] = {}
    for side, rows in ((0, base), (2, candidate)):
        for r in rows:
            for name, state in zip(r.checks, r.verdicts, strict=True):
                if state is VerdictState.PASSED or state is VerdictState.FAILED:
                    slot = counts.setdefault(name, {}).setdefault(r.case_id, [0, 0, 0, 0])
                    slot[side] += 1
                    slot[side + 1] += state is VerdictState.PASSED
    out = []
    for name, by_task in counts.items():
        both = [(nb, pb, nc, pc) for nb, pb, nc, pc in by_task.values() if nb and nc]
        out.append(
            check_delta(
                name,
                sum(t[1] for t in both),
                sum(t[0] for t in both),
                sum(t[3] for t in both),
                sum(t[2] for t in both),
                worse=sum(1 for nb, pb, nc, pc in both if pc / nc < pb / nb),
                better=sum(1 for nb, pb, nc, pc in both if pc / nc > pb / nb),
                p_value=stratified_permutation(both, rng, resamples),
            )
        )
    out.sort(key=lambda d: (d.change if d.change is not None else 0.0, d.check))
    return out
