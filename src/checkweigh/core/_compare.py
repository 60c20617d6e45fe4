"""Run-to-run comparison: suite-level regression thresholds, case-level flips and score changes,
per-check pass-rate changes, and paired significance tests so that judge noise on a small
suite reads as "not significant" rather than as a regression.

Executions are paired by (case id, repeat); each run's own snapshotted :class:`PassPolicy`
decides its cases. Cases in only one run are counted, not compared. When either run tried a case
more than once, the runs are compared task by task instead (see :mod:`._repeats`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Iterator
from enum import StrEnum

from pydantic import BaseModel, Field

from ._case_pass import CaseState, CaseVerdict, PassPolicy
from ._judge_calibration import CalibratedChange
from ._paired import CheckDelta, Decided, check_deltas, decided
from ._rejudge import JudgeSplit
from ._reliability import ReliabilityChange, reliability_changes
from ._repeats import TaskChange, has_repeats
from ._result import CaseResult
from ._stats import mcnemar_exact, paired_bootstrap
from ._thresholds import CompareThresholds


class CaseChangeKind(StrEnum):
    """How one paired execution changed."""

    REGRESSION = "regression"
    IMPROVEMENT = "improvement"
    UNCHANGED = "unchanged"


class CaseChange(BaseModel):
    """One paired execution in both runs."""

    case_id: str
    repeat: int
    kind: CaseChangeKind
    base_state: str
    candidate_state: str
    base_score: float | None
    candidate_score: float | None
    flipped: bool
    """Pass/fail changed (errored counts as not passed)."""
    reason: str
    """The candidate's verdict reason (for regressions: what now fails)."""


class SuiteDelta(BaseModel):
    """One suite-level figure in both runs."""

    metric: str
    base: float | None
    candidate: float | None
    change: float | None
    """candidate - base (percent change for latency)."""
    allowed: float
    """The threshold on the drop (or increase, for latency)."""
    exceeded: bool
    """The change went past the threshold (see :attr:`Comparison.threshold_exceeded`)."""
    p_value: float | None
    """The paired test's p-value (None: no test applies)."""
    test: str
    """Which test: exact McNemar, paired bootstrap, stratified permutation (with repeats)."""


class CompareVerdict(StrEnum):
    """The comparison's conclusion."""

    REGRESSION = "regression"
    """A threshold was exceeded and the change is significant (or --strict)."""
    NOT_SIGNIFICANT = "not_significant"
    """A threshold was exceeded, but the paired test cannot tell it from noise."""
    NO_REGRESSION = "no_regression"


class Comparison(BaseModel):
    """Everything ``checkweigh compare`` reports."""

    paired: int
    """Executions in both runs (case id and repeat); with repeats, tasks in both runs."""
    only_base: int
    """Executions (with repeats: tasks) only in the base run."""
    only_candidate: int
    """Executions (with repeats: tasks) only in the candidate run."""
    suite: list[SuiteDelta]
    threshold_exceeded: bool
    """Some suite-level threshold was exceeded, significant or not (the seed's flag)."""
    regression_detected: bool
    """The verdict is a regression: a threshold exceeded and its test significant (or
    ``--strict``). Never true beside a not-significant verdict."""
    significant: bool
    """Some exceeded threshold is backed by a paired test with p < alpha."""
    verdict: CompareVerdict
    alpha: float
    strict: bool
    regressions: list[CaseChange] = Field(default_factory=list)
    improvements: list[CaseChange] = Field(default_factory=list)
    unchanged: int = 0
    checks: list[CheckDelta] = Field(default_factory=list)
    reliability: list[ReliabilityChange] = Field(default_factory=list)
    """With repeats: both runs' pass@k and pass^k for every k, over the paired tries."""
    per_task: bool = False
    """Either run tried a case more than once: the runs were compared task by task (pass rate
    over each task's tries), ``regressions`` and ``improvements`` stay empty, and ``tasks``
    lists the tasks whose pass rate changed."""
    tasks: list[TaskChange] = Field(default_factory=list)
    """With repeats: every task whose pass rate dropped (by any amount: fewer passes per try
    in the candidate), the largest drop first, then those whose pass rate rose. Each is
    descriptive; the verdict is the suite-level test's."""
    judged_differently: list[str] = Field(default_factory=list)
    """How the two runs' verdicts were decided differently (another judge, judge mode or check
    version): a change may then be the judge's, not the agent's. Empty when alike."""
    calibrated: list[CalibratedChange] = Field(default_factory=list)
    """The judge checks with people's labels in either run: raw and calibrated pass rates on
    both sides (a judge that drifted shows as a raw change the calibrated rates do not
    share)."""
    gates_not_decided: list[str] = Field(default_factory=list)
    """Each of the two runs whose own gates are not decided (it did not finish every case),
    with why: the comparison covers its finished executions only. Empty when both finished."""
    rejudge: JudgeSplit | None = None
    """For runs judged differently: the base run's outputs judged again with the candidate's
    judge, and each change split into the judge's part and the agent's. From ``compare
    --rejudge`` the rest of the comparison is then the candidate against that rejudged run;
    the server shows the split of a stored rejudge beside the comparison of the two runs."""
    unpaired: bool = False
    """The runs share no case and are both monitor windows (different traces): every test is
    unpaired (Fisher's exact, Welch's t), ``paired`` is 0, ``only_base`` and
    ``only_candidate`` are the windows' sizes, there are no per-case regressions or
    improvements, and the per-check deltas have no flips (see :mod:`._compare_unpaired`)."""


def mean_of(values: list[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def _kind(
    b: tuple[CaseState, float | None], c: tuple[CaseState, float | None], t: CompareThresholds
) -> CaseChangeKind:
    """How a pair changed, from each side's state and score (as :meth:`PassPolicy.state`
    gives them)."""
    base_passed, cand_passed = b[0] is CaseState.PASSED, c[0] is CaseState.PASSED
    if base_passed != cand_passed:
        return CaseChangeKind.REGRESSION if base_passed else CaseChangeKind.IMPROVEMENT
    if b[1] is not None and c[1] is not None:
        delta = c[1] - b[1]
        if abs(delta) > t.case_score_delta:
            return CaseChangeKind.IMPROVEMENT if delta > 0 else CaseChangeKind.REGRESSION
    return CaseChangeKind.UNCHANGED


def _change(
    kind: CaseChangeKind, b: tuple[CaseState, float | None], c: Decided, cv: CaseVerdict
) -> CaseChange:
    return CaseChange(
        case_id=c.case_id,
        repeat=c.repeat,
        kind=kind,
        base_state=b[0].value,
        candidate_state=cv.state.value,
        base_score=b[1],
        candidate_score=cv.score_pct,
        flipped=(b[0] is CaseState.PASSED) != (cv.state is CaseState.PASSED),
        reason=cv.reason,
    )


Verdicts = Callable[[list[Decided]], list[CaseVerdict]]
"""The candidate's case verdicts (with their reasons) of the given executions, in order."""


def compare_runs(
    base: Iterable[CaseResult],
    candidate: Iterable[CaseResult],
    *,
    base_policy: PassPolicy,
    candidate_policy: PassPolicy,
    thresholds: CompareThresholds | None = None,
    strict: bool = False,
) -> Comparison:
    """Compare two runs' results (see the module docstring)."""
    kept: dict[tuple[str, int], CaseResult] = {}

    def candidates() -> Iterator[Decided]:
        for r in candidate:
            kept[r.case_id, r.repeat] = r
            yield decided(r, candidate_policy)

    def verdicts(rows: list[Decided]) -> list[CaseVerdict]:
        # decide() agrees with state(): it adds the reason
        return [candidate_policy.decide(kept[d.case_id, d.repeat]) for d in rows]

    return compare_decided(
        (decided(r, base_policy) for r in base),
        candidates(),
        verdicts,
        thresholds=thresholds,
        strict=strict,
    )


def compare_decided(
    base: Iterable[Decided],
    candidate: Iterable[Decided],
    verdicts: Verdicts,
    *,
    thresholds: CompareThresholds | None = None,
    strict: bool = False,
) -> Comparison:
    """Compare two runs' executions as their policies decided them; ``verdicts`` gives the
    candidate's reasons for the executions that changed (the only ones reported by name)."""
    t = thresholds or CompareThresholds()
    base_rows, candidate_rows = list(base), list(candidate)
    if has_repeats(base_rows) or has_repeats(candidate_rows):
        from ._compare_tasks import compare_tasks  # it builds this module's models

        return compare_tasks(base_rows, candidate_rows, t, strict)
    base_by_key = {(r.case_id, r.repeat): r for r in base_rows}
    pairs: list[tuple[Decided, Decided]] = []
    only_candidate = 0
    for r in candidate_rows:
        b = base_by_key.pop((r.case_id, r.repeat), None)
        if b is None:
            only_candidate += 1
        else:
            pairs.append((b, r))
    only_base = len(base_by_key)

    # the changed pairs only: most pairs of a large run keep their state and score, and need
    # neither a model nor a reason
    changed: list[tuple[CaseChangeKind, Decided, Decided]] = []
    base_pass = cand_pass = worse = better = 0
    score_pairs: list[tuple[float, float]] = []
    latency_pairs: list[tuple[float, float]] = []
    for b, c in pairs:
        bs, cs = (b.state, b.score), (c.state, c.score)
        kind = _kind(bs, cs, t)
        if kind is not CaseChangeKind.UNCHANGED:
            changed.append((kind, b, c))
        base_passed, cand_passed = b.state is CaseState.PASSED, c.state is CaseState.PASSED
        base_pass += base_passed
        cand_pass += cand_passed
        if base_passed and not cand_passed:
            worse += 1
        elif cand_passed and not base_passed:
            better += 1
        # "cases that produced a verdict": errored executions have no score to compare
        if (
            b.score is not None
            and c.score is not None
            and b.state is not CaseState.ERRORED
            and c.state is not CaseState.ERRORED
        ):
            score_pairs.append((b.score, c.score))
        if b.latency_ms is not None and c.latency_ms is not None:
            latency_pairs.append((b.latency_ms, c.latency_ms))
    reasons = verdicts([c for _, _, c in changed])
    changes = [
        _change(kind, (b.state, b.score), c, cv)
        for (kind, b, c), cv in zip(changed, reasons, strict=True)
    ]

    rng = random.Random(t.seed)
    n = len(pairs)
    base_rate = base_pass / n * 100.0 if n else None
    cand_rate = cand_pass / n * 100.0 if n else None
    suite = [
        drop_delta(
            "case pass rate (%)",
            base_rate,
            cand_rate,
            cand_rate - base_rate if base_rate is not None and cand_rate is not None else None,
            allowed=t.max_pass_rate_drop,
            p_value=mcnemar_exact(worse, better) if n else None,
            test=f"exact McNemar on {worse} pass->fail, {better} fail->pass",
        ),
        score_delta("average case score", "cases", score_pairs, rng, t),
        latency_delta("executions", latency_pairs, rng, t),
    ]
    exceeded, significant, verdict = verdict_of(suite, t, strict)
    regressions = [c for c in changes if c.kind is CaseChangeKind.REGRESSION]
    improvements = [c for c in changes if c.kind is CaseChangeKind.IMPROVEMENT]
    regressions.sort(key=lambda c: (not c.flipped, c.case_id, c.repeat))
    improvements.sort(key=lambda c: (not c.flipped, c.case_id, c.repeat))
    return Comparison(
        paired=n,
        only_base=only_base,
        only_candidate=only_candidate,
        suite=suite,
        threshold_exceeded=exceeded,
        regression_detected=verdict is CompareVerdict.REGRESSION,
        significant=significant,
        verdict=verdict,
        alpha=t.alpha,
        strict=strict,
        regressions=regressions,
        improvements=improvements,
        unchanged=n - len(regressions) - len(improvements),
        checks=check_deltas(pairs),
        reliability=reliability_changes(
            (c.case_id, b.state is CaseState.PASSED, c.state is CaseState.PASSED) for b, c in pairs
        ),
    )


def drop_delta(
    metric: str,
    base: float | None,
    candidate: float | None,
    change: float | None,
    *,
    allowed: float,
    p_value: float | None,
    test: str,
) -> SuiteDelta:
    """A figure whose drop (``-change``) past ``allowed`` exceeds its threshold."""
    return SuiteDelta(
        metric=metric,
        base=base,
        candidate=candidate,
        change=change,
        allowed=allowed,
        exceeded=change is not None and -change > allowed + 1e-9,
        p_value=p_value,
        test=test,
    )


def score_delta(
    metric: str,
    over: str,
    pairs: list[tuple[float, float]],
    rng: random.Random,
    t: CompareThresholds,
) -> SuiteDelta:
    """The mean score of ``pairs`` (base, candidate) in both runs, with a paired bootstrap of
    the change; ``over`` names what the pairs are ("cases", "tasks' mean scores"). It draws
    from the comparison's shared ``rng``: callers keep the order of the deltas fixed."""
    base_avg = mean_of([b for b, _ in pairs])
    cand_avg = mean_of([c for _, c in pairs])
    boot = paired_bootstrap([c - b for b, c in pairs], rng, t.resamples)
    return drop_delta(
        metric,
        base_avg,
        cand_avg,
        cand_avg - base_avg if base_avg is not None and cand_avg is not None else None,
        allowed=t.max_avg_score_drop,
        p_value=boot.p_value if pairs else None,
        test=f"paired bootstrap over {len(pairs)} {over}, 95% CI of the change "
        f"[{boot.low:+.1f}, {boot.high:+.1f}]",
    )


def latency_delta(
    over: str, pairs: list[tuple[float, float]], rng: random.Random, t: CompareThresholds
) -> SuiteDelta:
    """The mean latency of ``pairs`` (base, candidate) in both runs; its change is in percent
    of the base, and an increase under ``t.min_latency_increase_ms`` never exceeds. Like
    :func:`score_delta`, it draws from the shared ``rng``."""
    lat = paired_bootstrap([c - b for b, c in pairs], rng, t.resamples)
    return latency_change(
        mean_of([b for b, _ in pairs]),
        mean_of([c for _, c in pairs]),
        t,
        p_value=lat.p_value if pairs else None,
        test=f"paired bootstrap over {len(pairs)} {over}",
    )


def latency_change(
    base_ms: float | None,
    cand_ms: float | None,
    t: CompareThresholds,
    *,
    p_value: float | None,
    test: str,
) -> SuiteDelta:
    """The mean latency in both runs, its change in percent of the base; exceeded past
    ``t.max_latency_increase_pct`` unless the increase is under ``t.min_latency_increase_ms``
    (``test`` names the test behind ``p_value``)."""
    pct: float | None = None
    if base_ms is not None and cand_ms is not None and base_ms > 0:
        pct = (cand_ms - base_ms) / base_ms * 100.0
    return SuiteDelta(
        metric="mean latency (ms)",
        base=base_ms,
        candidate=cand_ms,
        change=pct,
        allowed=t.max_latency_increase_pct,
        exceeded=pct is not None
        and pct > t.max_latency_increase_pct + 1e-9
        and cand_ms is not None
        and base_ms is not None
        and cand_ms - base_ms >= t.min_latency_increase_ms,
        p_value=p_value,
        test=f"{test}; increases under {t.min_latency_increase_ms:g} ms are not counted",
    )


def verdict_of(
    suite: list[SuiteDelta], t: CompareThresholds, strict: bool
) -> tuple[bool, bool, CompareVerdict]:
    """(some threshold exceeded, an exceeded one significant, the verdict)."""
    exceeded = [d for d in suite if d.exceeded]
    significant = any(d.p_value is not None and d.p_value < t.alpha for d in exceeded)
    if not exceeded:
        return False, False, CompareVerdict.NO_REGRESSION
    if significant or strict:
        return True, significant, CompareVerdict.REGRESSION
    return True, False, CompareVerdict.NOT_SIGNIFICANT
