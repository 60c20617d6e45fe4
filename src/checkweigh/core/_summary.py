"""Run summaries: the persisted, JSON-ready aggregates of a run."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, computed_field

from ._judge_calibration import CheckCalibration
from ._reliability import Reliability


class CheckStats(BaseModel):
    """How one check fared within one rubric."""

    check: str
    """The check's name."""
    weight: float
    """Its normalized weight in the rubric."""
    passed: int = 0
    """Executions where it passed."""
    failed: int = 0
    """Executions where it failed."""
    not_applicable: int = 0
    """Executions where it did not apply."""
    errored: int = 0
    """Executions where it could not decide."""
    pass_rate: float | None = None
    """passed / (passed + failed); None when it never decided."""
    ci_low: float = 0.0
    """Lower end of the Wilson 95% interval of the pass rate."""
    ci_high: float = 1.0
    """Upper end of the Wilson 95% interval of the pass rate."""


class CaseVariance(BaseModel):
    """How one case's score varied across repeats (``--repeat K``)."""

    case_id: str
    """The case."""
    runs: int
    """Scored repeats."""
    mean: float
    """Mean score."""
    stdev: float
    """Sample standard deviation of the score."""
    min: float
    """Lowest score."""
    max: float
    """Highest score."""
    outcomes: dict[str, int]
    """How often each outcome class occurred."""


class WorstCase(BaseModel):
    """One of a rubric's lowest-scoring executions, with what went wrong."""

    case_id: str
    """The case."""
    repeat: int
    """Which repeat."""
    score: float
    """Its score."""
    outcome: str
    """Its outcome class."""
    explanation: str
    """What failed."""


class RubricSummary(BaseModel):
    """The aggregates of one rubric over a run."""

    rubric: str
    """The rubric's name."""
    executions: int
    """Executions the rubric applied to."""
    scored: int
    """Executions that got a score."""
    errored: int
    """Executions left unscored because a check or the agent errored."""
    not_applicable: int
    """Executions the rubric did not apply to."""
    tcr: float | None
    """Task Completion Rate: the mean score of the scored executions."""
    tcr_low: float | None
    """Lower end of the 95% t-interval of the TCR."""
    tcr_high: float | None
    """Upper end of the 95% t-interval of the TCR."""
    band: str | None
    """Readiness band of the TCR."""
    outcomes: dict[str, int]
    """Executions per outcome class."""
    outcome_basis: dict[str, int] = Field(default_factory=dict)
    """Scored executions per rule set that classed them: ``success_flag`` (the default rules,
    on the case's success flag), ``score`` (the default rules, for a case without the flag) or
    ``rules`` (the suite's own outcome_rules)."""
    outcome_note: str | None = None
    """Which rule set classed the outcomes and why, in words (None when nothing was scored)."""
    checks: list[CheckStats]
    """Per-check statistics, in rubric order."""
    top_failing: list[str]
    """Checks with the most failures, worst first."""
    worst: list[WorstCase] = Field(default_factory=list)
    """The lowest-scoring executions, lowest first."""
    errored_examples: list[str] = Field(default_factory=list)
    """Explanations of the first few errored executions."""
    normalization_note: str | None = None
    """Set when the rubric's weights did not sum to 1.0."""
    case_variance: list[CaseVariance] = Field(default_factory=list)
    """Per-case spread across repeats, most variable first (only with repeats)."""
    calibrated_tcr: float | None = None
    """The TCR with its judge checks' pass rates corrected by people's labels, where it is
    linear in them (see :func:`~checkweigh.core.calibrated_tcr`); None otherwise."""
    calibrated_tcr_note: str | None = None
    """Why the TCR of a rubric with labelled judge checks is not corrected."""


class SlowCase(BaseModel):
    """One of the slowest executions."""

    case_id: str
    """The case."""
    repeat: int
    """Which repeat."""
    latency_ms: float
    """Its latency."""


class GateResult(BaseModel):
    """One gate's verdict on the run."""

    gate: str
    """The gate, in words."""
    passed: bool
    """Whether the run met it. In an incomplete run: whether the finished part met it, which
    decides nothing (the run's ``gates_passed`` is None)."""
    actual: float | None
    """The measured value (None when it could not be measured, which fails the gate)."""
    decided: bool = True
    """False when the gate rests on a judge check below its ``trust:`` bar, or reads a
    calibrated rate whose interval holds its bound: it neither passed nor failed (``passed``
    is then False) and ``needs`` says what would decide it."""
    needs: str | None = None
    """What would decide a gate that is not decided: more labels, or a judge's agreement."""
    low: float | None = None
    """The lower end of the measured value's 95% interval, for a calibrated rate."""
    high: float | None = None
    """The upper end of that interval."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def status(self) -> Literal["passed", "failed", "not_decided"]:
        """The gate's result in one word."""
        return "not_decided" if not self.decided else "passed" if self.passed else "failed"


class FailingCase(BaseModel):
    """An execution that did not pass, and why."""

    case_id: str
    """The case."""
    repeat: int
    """Which repeat."""
    state: str
    """``failed`` or ``errored``."""
    score_pct: float | None
    """Its score (0-100), when it has one."""
    reason: str
    """Why it did not pass."""


class CaseGates(BaseModel):
    """The run's two pass dimensions, with the thresholds snapshotted when the run began."""

    weighted_metrics_score_pct: float | None
    """The mean score (0-100) of the executions that produced one (errored ones excluded)."""
    weighted_metrics_score_low_pct: float | None = None
    """Lower end of the 95% t-interval of the mean case score."""
    weighted_metrics_score_high_pct: float | None = None
    """Upper end of the 95% t-interval of the mean case score."""
    metrics_pass_threshold: float
    """The mean score the run needs."""
    metrics_passed: bool
    """weighted_metrics_score_pct >= metrics_pass_threshold."""
    cases_pass_rate_pct: float
    """passed / executions x 100 (errored executions count as not passed)."""
    cases_pass_threshold: float
    """The pass rate the run needs."""
    cases_passed: bool
    """cases_pass_rate_pct >= cases_pass_threshold."""
    executions: int
    """Executions counted."""
    passed: int
    """Executions that passed."""
    failed: int
    """Executions that failed."""
    errored: int
    """Executions that errored."""
    pass_threshold: float
    """The score a case without expected outcomes needs (0-100; unused under ``all_checks``)."""
    pass_policy: str = "threshold"
    """How a case's pass/fail was decided: ``threshold`` or ``all_checks``."""
    case_pass_rule: str | None = None
    """When a case passes, in words (None in runs stored before it was recorded)."""
    failing: list[FailingCase] = Field(default_factory=list)
    """The first executions that did not pass, in the order they finished."""

    @property
    def passed_both(self) -> bool:
        """Both dimensions passed."""
        return self.metrics_passed and self.cases_passed


class CheckJudgeStats(BaseModel):
    """What the judge did for one check: its share of the run's :class:`JudgeStats`."""

    calls: int = 0
    """Calls made to the provider."""
    cache_hits: int = 0
    """Calls answered from the judge cache (free)."""
    errors: int = 0
    """Calls that failed for good (budget stops not included)."""
    input_tokens: int = 0
    """Tokens sent."""
    output_tokens: int = 0
    """Tokens received."""
    batch_calls: int = 0
    """Of ``calls``, those answered through the provider's batch API (``judge: {mode:
    batch}``)."""
    batch_input_tokens: int = 0
    """Of ``input_tokens``, those of batch calls (priced at half the list price)."""
    batch_output_tokens: int = 0
    """Of ``output_tokens``, those of batch calls (priced at half the list price)."""
    cost_usd: float | None = None
    """Cost at the configured prices (None when no prices are set)."""
    budget_stopped: int = 0
    """Calls not made because the judge budget was spent."""
    cached_input_tokens: int = 0
    """Of ``input_tokens``, those the provider read from its prompt cache."""
    cache_write_tokens: int = 0
    """Of ``input_tokens``, those the provider wrote to its prompt cache."""
    prompt_cache_hit_rate: float | None = None
    """``cached_input_tokens / input_tokens`` (None: no input tokens)."""
    prompt_cache_saved_usd: float | None = None
    """The cost with every input token at the input price, minus ``cost_usd`` (None when
    no prices are set; negative when cache writes cost more than the reads saved)."""


class JudgeStats(BaseModel):
    """What a run's judge did."""

    judge: str
    """``provider:model``."""
    calls: int = 0
    """Calls made to the provider."""
    cache_hits: int = 0
    """Calls answered from the cache."""
    errors: int = 0
    """Calls that failed for good."""
    replay_misses: int = 0
    """Calls that replay mode could not answer from the cache."""
    input_tokens: int = 0
    """Tokens sent."""
    output_tokens: int = 0
    """Tokens received."""
    batch_calls: int = 0
    """Of ``calls``, those answered through the provider's batch API (``judge: {mode:
    batch}``)."""
    batch_input_tokens: int = 0
    """Of ``input_tokens``, those of batch calls (priced at half the list price)."""
    batch_output_tokens: int = 0
    """Of ``output_tokens``, those of batch calls (priced at half the list price)."""
    mean_latency_ms: float | None = None
    """Mean time per call."""
    cost_usd: float | None = None
    """Cost at the configured prices (None when no prices are set)."""
    concurrency: int | None = None
    """The most calls allowed in flight at once (``--judge-concurrency``)."""
    peak_in_flight: int | None = None
    """The most calls that were in flight at once: below ``concurrency``, the judge was not
    what limited the run."""
    budget_usd: float | None = None
    """The most the run may spend on judge calls (``--judge-budget``; None: no cap)."""
    budget_stopped: int = 0
    """Calls not made because the budget was spent (their verdicts are errored, "budget")."""
    adaptive: bool = False
    """Whether the concurrency adapted to the provider (no ``--judge-concurrency`` given):
    ``concurrency`` is then the most it could grow to."""
    answered_429: int = 0
    """Attempts the provider answered 429 (rate limited), each retried after waiting."""
    peak_window: int | None = None
    """Adaptive: the widest the concurrency window grew."""
    learned_rpm: int | None = None
    """Adaptive: the provider's requests-per-minute limit, read from its headers."""
    learned_tpm: int | None = None
    """Adaptive: the provider's tokens-per-minute limit, read from its headers."""
    per_check: dict[str, CheckJudgeStats] = Field(default_factory=dict)
    """The same counts split by the check that made each call; they add up to the totals."""
    cached_input_tokens: int = 0
    """Of ``input_tokens``, those the provider read from its prompt cache (not the judge
    answer cache: see ``cache_hits``)."""
    cache_write_tokens: int = 0
    """Of ``input_tokens``, those the provider wrote to its prompt cache."""
    prompt_cache_hit_rate: float | None = None
    """``cached_input_tokens / input_tokens`` (None: no input tokens)."""
    prompt_cache_saved_usd: float | None = None
    """The cost with every input token at the input price, minus ``cost_usd`` (None when
    no prices are set; negative when cache writes cost more than the reads saved)."""
    prompt_cache_prices: str | None = None
    """How the prompt cache was priced, naming the rates that were assumed."""

    def pacing_line(self) -> str | None:
        """``adaptive: window peak 64, 3 429(s) answered, limit learned 600 rpm / 400,000
        tpm``, or ``3 429(s) answered`` under a fixed concurrency, or None when neither (or
        no call was sent)."""
        if not self.calls or not (self.adaptive or self.answered_429):
            return None
        said = f"{self.answered_429} 429(s) answered"
        if not self.adaptive:
            return said
        learned = " / ".join(
            f"{value:,} {unit}"
            for value, unit in ((self.learned_rpm, "rpm"), (self.learned_tpm, "tpm"))
            if value is not None
        )
        return f"adaptive: window peak {self.peak_window}, {said}" + (
            f", limit learned {learned}" if learned else ""
        )

    def prompt_cache_line(self) -> str | None:
        """``prompt cache: 61.5% hit rate, 12,288 of 19,980 input tokens cached, 1,024
        written; saved $0.0123; priced at ...``, or None without calls. The provider's
        prompt cache, not the judge answer cache (``cache_hits``)."""
        if not self.calls or self.prompt_cache_hit_rate is None:
            return None
        line = (
            f"prompt cache: {self.prompt_cache_hit_rate:.1%} hit rate, "
            f"{self.cached_input_tokens:,} of {self.input_tokens:,} input tokens cached, "
            f"{self.cache_write_tokens:,} written"
        )
        if self.prompt_cache_saved_usd is not None:
            line += f"; saved ${self.prompt_cache_saved_usd:.4f}"
        if self.prompt_cache_prices:
            line += f"; {self.prompt_cache_prices}"
        return line


class AgentUsage(BaseModel):
    """What the agent consumed over a run: tokens and cost from its logs, and its latency."""

    executions: int = 0
    """Executions whose log recorded tokens or cost."""
    input_tokens: int = 0
    """Input tokens, summed."""
    output_tokens: int = 0
    """Output tokens, summed."""
    mean_input_tokens: float | None = None
    """Input tokens per execution that recorded usage."""
    mean_output_tokens: float | None = None
    """Output tokens per execution that recorded usage."""
    cost_usd: float | None = None
    """Cost in US dollars, summed over the executions that recorded one (None: none did)."""
    cost_executions: int = 0
    """Executions whose log recorded a cost."""
    timed_executions: int = 0
    """Executions with a known latency."""
    mean_latency_ms: float | None = None
    """Mean latency of the timed executions."""

    def one_line(self, unit: str = "cases") -> str:
        """``1,234 input + 456 output tokens, $0.0123 over 50 cases; mean latency 812 ms``."""
        parts = []
        if self.executions:
            parts.append(
                f"{self.input_tokens:,} input + {self.output_tokens:,} output tokens"
                + (f", ${self.cost_usd:,.4f}" if self.cost_usd is not None else "")
                + f" over {self.executions:,} {unit}"
            )
        if self.mean_latency_ms is not None:
            parts.append(f"mean latency {self.mean_latency_ms:,.0f} ms")
        return "; ".join(parts)


class UnheldPath(BaseModel):
    """A path a check reads that no case of the run held: a misspelt path, most likely,
    which made the check answer as if the value were absent on every case."""

    check: str
    """The check's name."""
    field: str
    """Its field naming the path (``reference_path``, ``when``, ``overrides key``...)."""
    path: str
    """The path (or tool name) as written."""


class RunSummary(BaseModel):
    """Everything a report needs about a run."""

    executions: int
    """Case executions (cases x repeats) that finished."""
    cases: int
    """Distinct cases."""
    errored_executions: int
    """Executions whose case verdict is errored: the agent failed, a rubric could not be
    scored, or an expected-outcome check errored (a judge error or a replay miss)."""
    agent_errors: int
    """Executions where the agent target raised."""
    rubrics: list[RubricSummary]
    """One summary per rubric, in suite order."""
    slowest: list[SlowCase]
    """The slowest executions, slowest first."""
    gates: list[GateResult] = Field(default_factory=list)
    """Gate results; empty until gates are evaluated."""
    notes: list[str] = Field(default_factory=list)
    """What a reader must know about how the run was scored (e.g. skipped judge checks)."""
    unheld_paths: list[UnheldPath] = Field(default_factory=list)
    """The paths checks read that no case of the run held (each is also a note)."""
    judge: JudgeStats | None = None
    """The judge's calls, cache hits, tokens and cost, when the run had a judge."""
    case_gates: CaseGates | None = None
    """Case pass/fail counts and the run's metrics and cases dimensions."""
    usage: AgentUsage | None = None
    """The agent's tokens, cost and mean latency, when some execution recorded any."""
    reliability: Reliability | None = None
    """pass@k, pass^k and flaky tasks over each task's tries (runs with ``--repeat`` > 1)."""
    calibration: list[CheckCalibration] = Field(default_factory=list)
    """The judge checks measured against people's labels (those with labels in the store, a
    ``trust:`` bar, or a gate on their calibrated rate), as the labels stood when the run
    ended."""
    case_gates_undecided: str | None = None
    """Why the two pass dimensions are not decided although the run is complete: a judge check
    weighed in a rubric is below its ``trust:`` bar. None when they are decided."""
    gates_not_decided: str | None = None
    """Why the run's gates are not decided (it ended before every case finished: interrupted,
    stopped by an error, abandoned); None when they are. The gate values are then measured on
    the finished executions only, and pass or fail nothing."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def gates_passed(self) -> bool | None:
        """True when both pass dimensions and every extra gate passed; None when the gates are
        not decided (see :attr:`gates_not_decided`)."""
        if self.gates_not_decided is not None:
            return None
        dims_decided = self.case_gates is None or self.case_gates_undecided is None
        if dims_decided and self.case_gates is not None and not self.case_gates.passed_both:
            return False
        if any(g.decided and not g.passed for g in self.gates):
            return False  # a gate that failed decides, whatever the undecided ones would do
        if not dims_decided or not all(g.decided for g in self.gates):
            return None
        return True

    def to_decide(self) -> list[str]:
        """What each gate that is not decided needs (the run itself being complete), in words;
        empty when every gate is decided."""
        if self.gates_not_decided is not None:
            return []
        out = []
        if self.case_gates is not None and self.case_gates_undecided is not None:
            out.append(f"pass dimensions: {self.case_gates_undecided}")
        out += [f"{g.gate}: {g.needs}" for g in self.gates if not g.decided]
        return out

    @computed_field  # type: ignore[prop-decorator]
    @property
    def gates_status(self) -> Literal["passed", "failed", "not_decided"]:
        """``gates_passed`` in one word, for readers of the JSON."""
        passed = self.gates_passed
        return "not_decided" if passed is None else "passed" if passed else "failed"

    def undecided(self, reason: str) -> RunSummary:
        """This summary with its gates not decided, for ``reason`` (a first reason is kept)."""
        if self.gates_not_decided is not None:
            return self
        return self.model_copy(update={"gates_not_decided": reason})

    def rubric(self, name: str) -> RubricSummary:
        """The summary of one rubric; KeyError when the run has none of that name."""
        for r in self.rubrics:
            if r.rubric == name:
                return r
        raise KeyError(name)
