"""Streaming aggregation of case results into a :class:`RunSummary`.

Memory stays flat in the number of cases: running sums, counters and a small heap, plus
per-case scores only when repeats ask for variance.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from ._case_pass import CaseState, PassPolicy
from ._case_tally import CaseTally
from ._outcome import OutcomeBasis, OutcomeClass, basis_note
from ._partial import AggregatePart, RubricPart
from ._result import CaseResult
from ._rubric import Rubric
from ._scoring import ScoreStatus
from ._seen import SeenIds
from ._stats import mean_interval, wilson_interval
from ._summary import (
    AgentUsage,
    CaseVariance,
    CheckStats,
    RubricSummary,
    RunSummary,
    SlowCase,
    WorstCase,
)
from ._usage import CaseUsage
from ._verdict import Verdict, VerdictState

_ERRORED = ScoreStatus.ERRORED
_CASE_ERRORED = CaseState.ERRORED
_NOT_APPLICABLE = ScoreStatus.NOT_APPLICABLE
_TOP_FAILING = 5
_SLOT = {
    VerdictState.PASSED: 0,
    VerdictState.FAILED: 1,
    VerdictState.NOT_APPLICABLE: 2,
    VerdictState.ERRORED: 3,
}
_WORST = 5


class _RubricAcc:
    __slots__ = (
        "basis",
        "basis_of",
        "counts",
        "errored",
        "errored_examples",
        "executions",
        "n",
        "na",
        "name",
        "names",
        "outcomes",
        "pairs",
        "per_case",
        "rubric",
        "scores",
        "total",
        "total_sq",
        "worst",
    )

    def __init__(self, rubric: Rubric, keep_cases: bool, journal: bool = False) -> None:
        self.rubric = rubric
        self.name = rubric.name
        self.executions = 0
        self.na = 0
        self.errored = 0
        self.n = 0
        self.outcomes: dict[OutcomeClass, int] = dict.fromkeys(OutcomeClass, 0)
        # which rule set classed each scored case, by the index of the rule that matched
        self.basis_of = tuple(r.basis for r in rubric.outcome_rules)
        self.basis: dict[OutcomeBasis, int] = dict.fromkeys(OutcomeBasis, 0)
        self.total = 0.0
        self.total_sq = 0.0
        # per check: passed, failed, not applicable, errored
        self.names = rubric.check_names
        self.counts = {name: [0, 0, 0, 0] for name in self.names}
        self.pairs = tuple(self.counts.items())
        self.per_case: dict[str, list[tuple[float, str]]] | None = {} if keep_cases else None
        # every score in order, for a worker's part of the run (see _partial)
        self.scores: list[float] | None = [] if journal else None
        # max-heap by score (negated) of the lowest scores: (-score, -order, WorstCase), ties
        # kept by input position (then repeat), whatever order the executions finished in
        self.errored_examples: list[str] = []
        self.worst: list[tuple[float, int, WorstCase]] = []

    def add(self, result: CaseResult) -> bool:
        """Account for one execution; True when this rubric could not score it."""
        if result.agent_error is not None:
            self.executions += 1
            self.errored += 1
            self._example(f"{result.case_id}#{result.repeat}: {result.agent_error}")
            return True
        r = result.results[self.name]
        status = r.status
        if status is _NOT_APPLICABLE:
            self.na += 1
            if r.excluded:  # every check was excluded: still worth counting as not applicable
                self._count(r.details)
            return False
        self.executions += 1
        details = r.details
        for name, slots in self.pairs:  # inlined _count: this runs per case
            slots[_SLOT[details[name].state]] += 1
        if status is _ERRORED:
            self.errored += 1
            self._example(f"{result.case_id}#{result.repeat}: {r.explanation}")
            return True
        score, outcome = r.score, r.outcome
        assert score is not None
        assert outcome is not None
        self.n += 1
        self.total += score
        self.total_sq += score * score
        if self.scores is not None:
            self.scores.append(score)
        self.outcomes[outcome] += 1
        rule = r.rule
        if 0 <= rule < len(self.basis_of):
            self.basis[self.basis_of[rule]] += 1
        elif self.basis_of:  # no rule matched: the last resort of the suite's own rules
            self.basis[OutcomeBasis.RULES] += 1
        if self.per_case is not None:
            self.per_case.setdefault(result.case_id, []).append((score, outcome.value))
        worst = self.worst
        order = _order(result, self.n)
        if score < 1.0 and (
            len(worst) < _WORST
            or -score > worst[0][0]
            or (-score == worst[0][0] and -order > worst[0][1])
        ):
            entry = WorstCase(
                case_id=result.case_id,
                repeat=result.repeat,
                score=score,
                outcome=outcome.value,
                explanation=r.explanation,
            )
            item = (-score, -order, entry)
            if len(worst) < _WORST:
                heapq.heappush(worst, item)
            else:
                heapq.heapreplace(worst, item)
        return False

    def part(self) -> RubricPart:
        """The figures so far, for :meth:`merge` elsewhere (a journalling accumulator's)."""
        assert self.scores is not None
        return RubricPart(
            executions=self.executions,
            na=self.na,
            errored=self.errored,
            n=self.n,
            outcomes=list(self.outcomes.values()),
            basis=list(self.basis.values()),
            counts=[list(c) for c in self.counts.values()],
            scores=self.scores,
            errored_examples=self.errored_examples,
            worst=self.worst,
        )

    def merge(self, part: RubricPart) -> None:
        """Account for the executions behind ``part``, which came after those added so far."""
        self.executions += part.executions
        self.na += part.na
        self.errored += part.errored
        for outcome, k in zip(self.outcomes, part.outcomes, strict=True):
            self.outcomes[outcome] += k
        for basis, k in zip(self.basis, part.basis, strict=True):
            self.basis[basis] += k
        for slots, more in zip(self.counts.values(), part.counts, strict=True):
            for j, k in enumerate(more):
                slots[j] += k
        for text in part.errored_examples:
            self._example(text)
        total, total_sq = self.total, self.total_sq
        for score in part.scores:  # in order: float sums are not associative
            total += score
            total_sq += score * score
        self.total, self.total_sq = total, total_sq
        # the lowest scores are the lowest (score, position): the part's own are its only
        # candidates, keyed by their input positions as this run's are
        self.n += part.n
        worst = self.worst
        for item in part.worst:
            if len(worst) < _WORST:
                heapq.heappush(worst, item)
            elif item[0] > worst[0][0] or (item[0] == worst[0][0] and item[1] > worst[0][1]):
                heapq.heapreplace(worst, item)

    def _example(self, text: str) -> None:
        if len(self.errored_examples) < _WORST:
            self.errored_examples.append(text)

    def _count(self, details: Mapping[str, Verdict]) -> None:
        for name, slots in self.pairs:
            slots[_SLOT[details[name].state]] += 1

    def summary(self) -> RubricSummary:
        weights = self.rubric.normalized_weights
        checks = []
        for name in self.rubric.check_names:
            p, f, na, e = self.counts[name]
            decided = p + f
            lo, hi = wilson_interval(p, decided)
            checks.append(
                CheckStats(
                    check=name,
                    weight=weights[name],
                    passed=p,
                    failed=f,
                    not_applicable=na,
                    errored=e,
                    pass_rate=(p / decided) if decided else None,
                    ci_low=lo,
                    ci_high=hi,
                )
            )
        failing = sorted((c for c in checks if c.failed), key=lambda c: (-c.failed, -c.weight))
        tcr: float | None = None
        lo_tcr: float | None = None
        hi_tcr: float | None = None
        if self.n:
            tcr, lo_tcr, hi_tcr = mean_interval(self.n, self.total, self.total_sq)
        return RubricSummary(
            rubric=self.rubric.name,
            executions=self.executions,
            scored=self.n,
            errored=self.errored,
            not_applicable=self.na,
            tcr=tcr,
            tcr_low=lo_tcr,
            tcr_high=hi_tcr,
            band=self.rubric.bands.label(tcr) if tcr is not None else None,
            outcomes={o.value: n for o, n in self.outcomes.items()},
            outcome_basis={b.value: n for b, n in self.basis.items() if n},
            outcome_note=basis_note(self.rubric.outcome_rules, self.basis),
            checks=checks,
            top_failing=[c.check for c in failing[:_TOP_FAILING]],
            errored_examples=list(self.errored_examples),
            worst=[w for _, _, w in sorted(self.worst, key=lambda t: (-t[0], -t[1]))],
            normalization_note=self.rubric.normalization_note(),
            case_variance=self._variance(),
        )

    def _variance(self) -> list[CaseVariance]:
        if not self.per_case:
            return []
        out = []
        for case_id, runs in self.per_case.items():
            scores = [s for s, _ in runs]
            n = len(scores)
            mean = math.fsum(scores) / n
            var = math.fsum((s - mean) ** 2 for s in scores) / (n - 1) if n > 1 else 0.0
            out.append(
                CaseVariance(
                    case_id=case_id,
                    runs=n,
                    mean=mean,
                    stdev=math.sqrt(var),
                    min=min(scores),
                    max=max(scores),
                    outcomes=dict(Counter(o for _, o in runs)),
                )
            )
        out.sort(key=lambda v: (-v.stdev, -len(v.outcomes), v.case_id))
        return out


class RunAggregator:
    """Feed it :class:`CaseResult` objects with :meth:`add`; read :meth:`summary` at any time."""

    def __init__(
        self,
        rubrics: Sequence[Rubric],
        *,
        keep_case_scores: bool = False,
        slowest: int = 5,
        policy: PassPolicy | None = None,
        journal: bool = False,
    ):
        """``journal``: also keep every value of each sum in order, so that :meth:`part` can
        hand a chunk's aggregates to the run's aggregator (a worker process's; no repeats)."""
        if journal and keep_case_scores:
            raise ValueError("a journalling aggregator is for runs without repeats")
        self._accs = [_RubricAcc(r, keep_case_scores, journal) for r in rubrics]
        self._policy = policy
        # pass@k and pass^k need each task's tries: counted only when tasks are repeated
        self._cases = (
            CaseTally(policy, repeats=keep_case_scores, journal=journal)
            if policy is not None
            else None
        )
        self._costs: list[float] | None = [] if journal else None
        self._executions = 0
        # distinct cases by their ids' hashes: 8 bytes a case, not the ids themselves (a run of
        # a million cases stays flat); two ids sharing a 64-bit hash would count once
        self._case_ids = SeenIds(positions=False)
        self._new_ids = 0  # ids merged as checked new to the run (see merge)
        self._errored = 0
        self._agent_errors = 0
        self._slow: list[tuple[float, str, int]] = []
        # the agent's usage, from the executions whose log recorded some
        self._used = 0
        self._tokens_in = 0
        self._tokens_out = 0
        self._costed = 0
        self._cost = 0.0
        self._timed = 0
        self._latency = 0.0
        self._slow_n = slowest

    def add(self, result: CaseResult) -> None:
        """Account for one finished execution."""
        self._executions += 1
        self._case_ids.add(result.case_id)
        errored = result.agent_error is not None
        if errored:
            self._agent_errors += 1
        for acc in self._accs:
            errored = acc.add(result) or errored
        # an errored expected-outcome check (or judge replay miss) sits in no rubric: the case
        # verdict is what says the execution errored, as JUnit and the case gates read it
        if self._cases is not None and self._cases.count(result) is _CASE_ERRORED:
            errored = True
        if errored:
            self._errored += 1
        usage = result.usage
        if usage is not None:
            self._add_usage(usage)
        ms = result.latency_ms
        if ms is not None:
            self._timed += 1
            self._latency += ms
        if ms is not None and self._slow_n > 0:
            slow = self._slow
            if len(slow) < self._slow_n:
                heapq.heappush(slow, (ms, result.case_id, result.repeat))
            elif ms > slow[0][0]:
                heapq.heapreplace(slow, (ms, result.case_id, result.repeat))

    def _add_usage(self, usage: CaseUsage) -> None:
        self._used += 1
        self._tokens_in += usage.input_tokens or 0
        self._tokens_out += usage.output_tokens or 0
        if usage.cost_usd is not None:
            self._costed += 1
            self._cost += usage.cost_usd
            if self._costs is not None:
                self._costs.append(usage.cost_usd)

    def part(self) -> AggregatePart:
        """What was added so far, for :meth:`merge` in another process (``journal`` only)."""
        if self._costs is None:
            raise ValueError("only a journalling aggregator gives its part")
        return AggregatePart(
            executions=self._executions,
            errored=self._errored,
            agent_errors=self._agent_errors,
            used=self._used,
            tokens_in=self._tokens_in,
            tokens_out=self._tokens_out,
            costed=self._costed,
            costs=self._costs,
            rubrics=[a.part() for a in self._accs],
            cases=self._cases.part() if self._cases is not None else None,
        )

    def merge(
        self,
        part: AggregatePart,
        case_ids: Sequence[str],
        latencies: Sequence[float | None],
        *,
        new_ids: bool = False,
    ) -> None:
        """Account for the executions behind ``part`` (a chunk of a run without repeats, after
        those added so far), whose case ids and latencies are given in order: the same
        summary as adding each result. ``new_ids``: the caller checked that none of the ids
        came before in the run (a reader that refuses repeated ids), so they are counted
        without being noted.
        """
        self._executions += part.executions
        if new_ids:
            self._new_ids += len(case_ids)
        else:
            for case_id in case_ids:
                self._case_ids.add(case_id)
        self._agent_errors += part.agent_errors
        self._errored += part.errored
        self._used += part.used
        self._tokens_in += part.tokens_in
        self._tokens_out += part.tokens_out
        self._costed += part.costed
        for cost in part.costs:
            self._cost += cost
        for acc, rubric in zip(self._accs, part.rubrics, strict=True):
            acc.merge(rubric)
        if self._cases is not None:
            assert part.cases is not None
            self._cases.merge(part.cases)
        # as add() does, execution by execution: ties among the slowest go by arrival
        slow, slow_n = self._slow, self._slow_n
        for case_id, ms in zip(case_ids, latencies, strict=True):
            if ms is None:
                continue
            self._timed += 1
            self._latency += ms
            if slow_n > 0:
                if len(slow) < slow_n:
                    heapq.heappush(slow, (ms, case_id, 0))
                elif ms > slow[0][0]:
                    heapq.heapreplace(slow, (ms, case_id, 0))

    def _agent_usage(self) -> AgentUsage | None:
        if not self._used and not self._timed:
            return None
        return AgentUsage(
            executions=self._used,
            input_tokens=self._tokens_in,
            output_tokens=self._tokens_out,
            mean_input_tokens=self._tokens_in / self._used if self._used else None,
            mean_output_tokens=self._tokens_out / self._used if self._used else None,
            cost_usd=self._cost if self._costed else None,
            cost_executions=self._costed,
            timed_executions=self._timed,
            mean_latency_ms=self._latency / self._timed if self._timed else None,
        )

    def add_all(self, results: Iterable[CaseResult]) -> RunAggregator:
        """Add many results; returns self."""
        for r in results:
            self.add(r)
        return self

    def _worded(self, rubric: RubricSummary) -> RubricSummary:
        """Under ``all_checks``, the rubric's notes on its weights and outcome classes say that
        they decide no case's pass."""
        policy = self._policy
        if policy is None:
            return rubric
        return rubric.model_copy(
            update={
                "normalization_note": policy.score_only(
                    rubric.normalization_note, "the weights shape the score only"
                ),
                "outcome_note": policy.score_only(
                    rubric.outcome_note, "outcome classes follow the score"
                ),
            }
        )

    def summary(self) -> RunSummary:
        """The aggregates of everything added so far."""
        return RunSummary(
            executions=self._executions,
            cases=len(self._case_ids) + self._new_ids,
            errored_executions=self._errored,
            agent_errors=self._agent_errors,
            rubrics=[self._worded(a.summary()) for a in self._accs],
            slowest=[
                SlowCase(case_id=c, repeat=r, latency_ms=ms)
                for ms, c, r in sorted(self._slow, reverse=True)
            ],
            case_gates=self._cases.gates() if self._cases is not None else None,
            usage=self._agent_usage(),
            reliability=self._cases.reliability() if self._cases is not None else None,
        )


_REPEATS = 1 << 20


def _order(result: CaseResult, seen: int) -> int:
    """Where an execution stands in the input (its case's position, then its repeat, then the
    order it was added in, for results given without positions), as one number: the
    tie-break of equal scores among the worst cases, the same however the run was executed."""
    place = result.position * _REPEATS + min(result.repeat, _REPEATS - 1)
    return (place << 40) + min(seen, (1 << 40) - 1)
