"""Two runs with repeats compared task by task: the suite-level figures and tests of
:mod:`._repeats`, as a :class:`~._compare.Comparison`."""

from __future__ import annotations

import math
import random

from ._case_pass import CaseState
from ._compare import (
    CompareVerdict,
    Comparison,
    drop_delta,
    latency_delta,
    score_delta,
    verdict_of,
)
from ._paired import Decided
from ._reliability import reliability_changes
from ._repeats import (
    check_rate_deltas,
    mean_rate_change,
    stratified_permutation,
    task_changes,
    task_means,
    tasks_of,
)
from ._thresholds import CompareThresholds


def compare_tasks(
    base: list[Decided], candidate: list[Decided], t: CompareThresholds, strict: bool
) -> Comparison:
    """Two runs with repeats, task by task (see :mod:`._repeats`)."""
    rng = random.Random(t.seed)
    before, after = tasks_of(base), tasks_of(candidate)
    changes, counts = task_changes(before, after)
    n = len(counts)
    base_rate = math.fsum(c.base_rate for c in changes) / n * 100.0 if n else None
    cand_rate = math.fsum(c.candidate_rate for c in changes) / n * 100.0 if n else None
    change = mean_rate_change(counts) * 100.0 if n else None
    moving = sum(1 for nb, pb, nc, pc in counts if 0 < pb + pc < nb + nc)
    suite = [
        drop_delta(
            "mean task pass rate (%)",
            base_rate,
            cand_rate,
            change,
            allowed=t.max_pass_rate_drop,
            p_value=stratified_permutation(counts, rng, t.resamples) if n else None,
            test=f"permutation of each task's tries between the runs, over {n} tasks "
            f"({moving} with both passes and fails), {t.resamples} resamples",
        ),
        score_delta(
            "average task score",
            "tasks' mean scores",
            task_means(before, after, latency=False),
            rng,
            t,
        ),
        latency_delta("tasks' mean latencies", task_means(before, after, latency=True), rng, t),
    ]
    exceeded, significant, verdict = verdict_of(suite, t, strict)
    dropped = sorted((c for c in changes if c.change < 0), key=lambda c: (c.change, c.case_id))
    rose = sorted((c for c in changes if c.change > 0), key=lambda c: (-c.change, c.case_id))
    by_try = {(r.case_id, r.repeat): r for r in base}
    pairs = [(b, c) for c in candidate if (b := by_try.get((c.case_id, c.repeat))) is not None]
    return Comparison(
        paired=n,
        only_base=sum(1 for case_id in before if case_id not in after),
        only_candidate=sum(1 for case_id in after if case_id not in before),
        suite=suite,
        threshold_exceeded=exceeded,
        regression_detected=verdict is CompareVerdict.REGRESSION,
        significant=significant,
        verdict=verdict,
        alpha=t.alpha,
        strict=strict,
        unchanged=n - len(dropped) - len(rose),
        checks=check_rate_deltas(base, candidate, rng, t.resamples),
        reliability=reliability_changes(
            (c.case_id, b.state is CaseState.PASSED, c.state is CaseState.PASSED) for b, c in pairs
        ),
        per_task=True,
        tasks=[*dropped, *rose],
    )
