"""Gate stability: how often a rerun would flip each case's pass/fail and the run's gates.

The noise modelled is the judge's: each judge-check verdict of a stored run is flipped
(passed <-> failed) with its per-rerun flip probability, every rubric is rescored with the real
scoring code (:func:`score_rubric`), each case is decided by :meth:`PassPolicy.decide` and the
run by :class:`CaseTally`, many times over. Not-applicable and errored verdicts stay as they
are, as do rubrics that did not apply to a case; deterministic checks give the same verdict on
every rerun.

The noise of a check is a per-answer rate ``p``: the chance that one judge answer differs from
the judge's usual answer, assumed to be the observed verdict. It is given by the user, or
measured from the repeated samples (``samples: k``) stored with each verdict. A verdict that is
the majority of ``k`` answers flips on a rerun when more than ``k/2`` answers differ,
P(Binomial(k, p) > k/2); with an even ``k`` an exact tie makes the verdict errored, as the real
majority vote does (never "no"), with probability P(Binomial(k, p) = k/2).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..errors import CheckweighError
from ._case_pass import CaseVerdict, PassMode, PassPolicy
from ._case_tally import CaseTally
from ._noise import CheckNoise
from ._result import CaseResult
from ._rubric import NotApplicablePolicy, Rubric, RubricItem
from ._scoring import ScoreStatus, score_rubric
from ._stability_defaults import DEFAULT_SIMULATIONS
from ._verdict import Verdict, VerdictState, errored, failed, passed

_PASSED, _FAILED = VerdictState.PASSED, VerdictState.FAILED
_FLIPPED = {
    _PASSED: failed("simulated rerun: the judge answered the other way"),
    _FAILED: passed("simulated rerun: the judge answered the other way"),
}
_TIE = errored("simulated rerun: the judge's samples split evenly", reason="no majority")
_CUTOFF_ADVICE = "pick the cutoff and the number of checks together"

GateName = Literal["metrics", "cases", "overall"]


class FlipChance(BaseModel):
    """A simulated probability with its Monte Carlo standard error."""

    p: float
    """The share of simulated reruns where it happened."""
    se: float
    """sqrt(p (1 - p) / reruns)."""


class CaseStability(BaseModel):
    """How steady one execution's pass/fail is."""

    case_id: str
    """The case."""
    repeat: int
    """Which repeat."""
    observed: str
    """Its stored state: passed, failed or errored."""
    score_pct: float | None
    """Its stored score (0-100)."""
    flip: FlipChance
    """The chance a rerun passes it when it failed, or fails it when it passed."""
    pass_chance: float
    """The share of reruns where it passed."""
    score_low: float | None
    """The 2.5th percentile of its simulated score."""
    score_high: float | None
    """The 97.5th percentile of its simulated score."""
    noisy_checks: list[str]
    """Its judge checks whose verdicts can flip."""


class GateStability(BaseModel):
    """How steady one of the run's pass decisions is."""

    gate: GateName
    """metrics (mean case score), cases (pass rate) or overall (both)."""
    observed_passed: bool
    """What the stored run decided."""
    flip: FlipChance
    """The chance a rerun decides the other way."""


class RerunSpread(BaseModel):
    """The distribution of one simulated run metric around its pass mark."""

    metric: str
    """``weighted_metrics_score_pct`` or ``cases_pass_rate_pct``."""
    observed: float | None
    """The stored run's value."""
    threshold: float
    """Its pass mark."""
    mean: float | None
    """The mean over the simulated reruns (None when no rerun produced one)."""
    low: float | None
    """The 2.5th percentile."""
    high: float | None
    """The 97.5th percentile."""
    values: list[float] = Field(default_factory=list, exclude=True)
    """Every simulated value (for plots; not exported)."""

    @property
    def threshold_inside(self) -> bool:
        """The pass mark sits inside the 95% spread: reruns land on both sides of it."""
        return (
            self.low is not None
            and self.high is not None
            and self.low < self.threshold <= (self.high)
        )


class StabilityReport(BaseModel):
    """What :func:`simulate_reruns` found."""

    simulations: int
    """Simulated reruns."""
    seed: int
    """The seed of the random generator."""
    noise: list[CheckNoise]
    """The noise model, per check."""
    gates: list[GateStability]
    """metrics, cases and overall."""
    metrics: RerunSpread
    """The mean case score across reruns."""
    cases_rate: RerunSpread
    """The cases pass rate across reruns."""
    cases: list[CaseStability]
    """Every execution, flakiest first."""
    warnings: list[str] = Field(default_factory=list)
    """Thresholds that sit inside the noise."""
    notes: list[str] = Field(default_factory=list)
    """What the simulation leaves out."""


def rubrics_from_snapshot(config: Mapping[str, Any]) -> dict[str, Rubric]:
    """The run's rubrics rebuilt from its snapshot, for rescoring.

    They carry no ``when`` guard (a rubric that did not apply to a case is kept as stored) and
    no outcome rules: outcome classes are not simulated, and pass/fail never reads them.
    """
    rubrics: dict[str, Rubric] = {}
    for r in config.get("rubrics", []):
        required = set(r.get("required", ()))
        na = r.get("not_applicable", {})
        items = [
            RubricItem(
                check,
                float(weight),
                check in required,
                NotApplicablePolicy(na.get(check, NotApplicablePolicy.EXCLUDE.value)),
            )
            for check, weight in r["weights"].items()
        ]
        rubrics[r["name"]] = Rubric.build(r["name"], items, outcome_rules=())
    return rubrics


@dataclass(frozen=True, slots=True)
class _Execution:
    result: CaseResult
    observed: CaseVerdict
    noisy: tuple[tuple[str, float, float], ...]
    """(check, flip, flip + tie) for the verdicts that can change."""


class SimulationStopped(CheckweighError):
    """The caller asked the simulation to stop (its ``stop`` answered True) before it ended."""


def _kind(ex: _Execution) -> tuple[Any, ...]:
    """What rescoring ``ex`` under a key reads: executions alike in it rerun alike."""
    r = ex.result
    return (
        tuple(name for name, _, _ in ex.noisy),
        tuple((name, v.state) for name, v in r.verdicts.items()),
        tuple(
            (name, e.status, e.score, tuple(e.details), e.excluded, e.required_failed, e.errored)
            for name, e in r.results.items()
        ),
    )


def _rescore(ex: _Execution, key: int, rubrics: Mapping[str, Rubric]) -> CaseResult:
    verdicts: dict[str, Verdict] = dict(ex.result.verdicts)
    for name, _, _ in reversed(ex.noisy):  # the key holds one base-3 digit per noisy check
        key, move = divmod(key, 3)
        if move == 2:
            verdicts[name] = _FLIPPED[verdicts[name].state]
        elif move == 1:
            verdicts[name] = _TIE
    scores = dict(ex.result.results)
    for name, stored in ex.result.results.items():
        rubric = rubrics.get(name)
        if (
            rubric is not None
            and stored.status is not ScoreStatus.NOT_APPLICABLE
            and all(c in verdicts for c in rubric.check_names)
        ):
            scores[name] = score_rubric(rubric, verdicts, None)
    return ex.result._replace(verdicts=verdicts, results=scores)


def simulate_reruns(
    results: Sequence[CaseResult],
    rubrics: Mapping[str, Rubric],
    policy: PassPolicy,
    noise: Sequence[CheckNoise],
    *,
    simulations: int = DEFAULT_SIMULATIONS,
    seed: int = 0,
    stop: Callable[[], bool] | None = None,
) -> StabilityReport:
    """Rerun the stored ``results`` ``simulations`` times under ``noise`` and measure how
    often each execution's pass/fail and the run's gates differ from the stored ones.

    The draws are those of ``random.Random(seed)``, one per noisy verdict in execution order:
    the same inputs give the same report. The reruns are simulated in batches (numpy);
    ``stop`` is asked between batches.

    Raises:
        SimulationStopped: ``stop`` answered True.
        ValueError: ``simulations`` < 1, or a case with too many noisy checks to simulate.
    """
    from ._rerun_batches import Reruns, generator  # numpy: loaded when a simulation runs

    if simulations < 1:
        raise ValueError(f"simulations must be >= 1, got {simulations}")
    noise_of = {n.check: (n.flip, n.flip + n.tie) for n in noise if n.flip + n.tie > 0.0}
    executions: list[_Execution] = []
    observed = CaseTally(policy)
    kinds: dict[tuple[Any, ...], int] = {}
    kind_of: list[int] = []
    for r in results:
        noisy = tuple(
            (name, *noise_of[name])
            for name, v in r.verdicts.items()
            if name in noise_of and v.state in (_PASSED, _FAILED)
        )
        ex = _Execution(r, observed.add(r), noisy if r.agent_error is None else ())
        executions.append(ex)
        kind_of.append(kinds.setdefault(_kind(ex), len(kinds)) if ex.noisy else -1)
    seen = observed.gates()

    def outcome(i: int, key: int) -> CaseVerdict:
        return policy.decide(_rescore(executions[i], key, rubrics))

    reruns = Reruns(
        [ex.observed for ex in executions],
        [[(flip, cut) for _, flip, cut in ex.noisy] for ex in executions],
        kind_of,
        outcome,
    )
    draws = generator(seed)
    left = simulations
    while left:
        if stop is not None and stop():
            raise SimulationStopped(f"stopped with {left} of {simulations} reruns left")
        batch = min(left, reruns.batch_size())
        reruns.run(draws, batch)
        left -= batch
    totals = reruns.finish()
    flips = Counter[GateName]()
    metrics: list[float] = []
    for value, rate in zip(totals.metrics, totals.rates, strict=True):
        metrics_passed = value is not None and value >= policy.metrics_pass_threshold
        cases_passed = bool(executions) and rate >= policy.cases_pass_threshold
        flips["metrics"] += metrics_passed != seen.metrics_passed
        flips["cases"] += cases_passed != seen.cases_passed
        flips["overall"] += (metrics_passed and cases_passed) != seen.passed_both
        if value is not None:
            metrics.append(value)

    decided: dict[GateName, bool] = {"metrics": seen.metrics_passed, "cases": seen.cases_passed}
    decided["overall"] = seen.passed_both
    cases = (
        _case(ex, counts, totals.verdicts, simulations)
        for ex, counts in zip(executions, totals.outcomes, strict=True)
    )
    report = StabilityReport(
        simulations=simulations,
        seed=seed,
        noise=list(noise),
        gates=[
            GateStability(gate=gate, observed_passed=ok, flip=_chance(flips[gate], simulations))
            for gate, ok in decided.items()
        ],
        metrics=_spread(
            "weighted_metrics_score_pct",
            seen.weighted_metrics_score_pct,
            policy.metrics_pass_threshold,
            metrics,
        ),
        cases_rate=_spread(
            "cases_pass_rate_pct",
            seen.cases_pass_rate_pct,
            policy.cases_pass_threshold,
            totals.rates,
        ),
        # flakiest first; the sort is stable, so ties keep the input order
        cases=sorted(cases, key=lambda c: -c.flip.p),
    )
    report.warnings = _warnings(report, policy)
    report.notes = _notes(report)
    return report


def _chance(hits: int, n: int) -> FlipChance:
    p = hits / n
    return FlipChance(p=p, se=math.sqrt(p * (1.0 - p) / n))


def _case(
    ex: _Execution, counts: Mapping[int, int], verdicts: Sequence[CaseVerdict], simulations: int
) -> CaseStability:
    was_passed = ex.observed.passed
    flips = passes = 0
    scores: list[tuple[float, int]] = []
    for outcome, count in counts.items():
        verdict = verdicts[outcome]
        passes += count if verdict.passed else 0
        flips += count if verdict.passed != was_passed else 0
        if verdict.score_pct is not None:
            scores.append((verdict.score_pct, count))
    scores.sort()
    return CaseStability(
        case_id=ex.result.case_id,
        repeat=ex.result.repeat,
        observed=ex.observed.state.value,
        score_pct=ex.observed.score_pct,
        flip=_chance(flips, simulations),
        pass_chance=passes / simulations,
        score_low=_weighted_percentile(scores, 0.025),
        score_high=_weighted_percentile(scores, 0.975),
        noisy_checks=[name for name, _, _ in ex.noisy],
    )


def _weighted_percentile(values: list[tuple[float, int]], q: float) -> float | None:
    """The ``q`` quantile (inverted empirical CDF) of sorted (value, count) pairs."""
    total = sum(c for _, c in values)
    if not total:
        return None
    rank = q * total
    seen = 0
    for value, count in values:
        seen += count
        if seen >= rank:
            return value
    return values[-1][0]


def _spread(
    metric: str, observed: float | None, threshold: float, values: list[float]
) -> RerunSpread:
    pairs = [(v, 1) for v in sorted(values)]
    return RerunSpread(
        metric=metric,
        observed=observed,
        threshold=threshold,
        mean=math.fsum(values) / len(values) if values else None,
        low=_weighted_percentile(pairs, 0.025),
        high=_weighted_percentile(pairs, 0.975),
        values=values,
    )


def _warnings(report: StabilityReport, policy: PassPolicy) -> list[str]:
    out: list[str] = []
    for spread, what, gate in (
        (report.metrics, "mean case score", report.gates[0]),
        (report.cases_rate, "cases pass rate", report.gates[1]),
    ):
        if spread.threshold_inside:
            out.append(
                f"{gate.gate} pass threshold {spread.threshold:g} sits inside the 95% spread "
                f"of the simulated {what} ({spread.low:.1f} to {spread.high:.1f}): the gate flips "
                f"on {100 * gate.flip.p:.1f}% of reruns; {_CUTOFF_ADVICE}"
            )
    straddling = [
        c
        for c in report.cases
        if policy.pass_policy is PassMode.THRESHOLD  # all_checks reads no score threshold
        and c.flip.p > 0.0
        and c.score_low is not None
        and c.score_high is not None
        and c.score_low < policy.pass_threshold <= c.score_high
    ]
    if straddling:
        shown = ", ".join(c.case_id for c in straddling[:5])
        more = f" and {len(straddling) - 5} more" if len(straddling) > 5 else ""
        out.append(
            f"pass threshold {policy.pass_threshold:g} sits inside the 95% spread of the "
            f"simulated score of {len(straddling)} execution(s) ({shown}{more}): their "
            f"pass/fail turns on the judge's noise; {_CUTOFF_ADVICE}"
        )
    return out


def _notes(report: StabilityReport) -> list[str]:
    notes = [
        "each stored judge verdict is taken as the judge's usual answer; a verdict that was "
        "itself a fluke makes its case flakier than shown",
        "only the metrics and cases dimensions are simulated (overall = both); the suite's "
        "gates: (tcr, check pass rates, outcome rates) and outcome classes are not",
    ]
    unmeasured = [n.check for n in report.noise if n.source == "unmeasured"]
    if unmeasured:
        notes.append(
            f"no noise measured for {', '.join(unmeasured)} (no repeated samples stored): "
            "taken as steady; give --noise CHECK=RATE to include them"
        )
    return notes
