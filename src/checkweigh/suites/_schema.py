"""The shape of a suite file, validated strictly: unknown keys are errors."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from ..checks import parse_path
from ..core import (
    DEFAULT_CASES_PASS_THRESHOLD,
    DEFAULT_METRICS_PASS_THRESHOLD,
    DEFAULT_PASS_THRESHOLD,
    RUN_METRICS,
    Bands,
    Condition,
    ConditionOp,
    FieldPath,
    Gate,
    GateMetric,
    NotApplicablePolicy,
    OutcomeClass,
    OutcomeRule,
    PassMode,
    default_outcome_rules,
)
from ..core import OutcomeRule as _OutcomeRule
from ..importers import FORMATS, FieldMapping, OnBadRecord
from ..judges import JudgeFormat
from ._targets import BuiltinKindsSchema, TargetSpecBase, target_spec
from ._text import shown

Number = Annotated[float, Field(strict=True, allow_inf_nan=False)]
Score = Annotated[float, Field(strict=True, ge=0.0, le=1.0)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class ConditionSpec(_Strict):
    """``{path: ..., <op>: value}`` with exactly one of the ops."""

    path: str
    """The field path to test."""
    equals: Any = None
    """Holds when the value equals this."""
    not_equals: Any = None
    """Holds when the value differs (or is missing)."""
    in_: list[Any] | None = Field(default=None, alias="in")
    """Holds when the value is one of these."""
    exists: bool | None = None
    """Holds when the path resolves (true) or does not (false)."""
    truthy: bool | None = None
    """Holds when the value is truthy."""
    falsy: bool | None = None
    """Holds when the value is falsy or missing."""

    @field_validator("path")
    @classmethod
    def _valid_path(cls, value: str) -> str:
        return parse_path(value)

    @model_validator(mode="after")
    def _one_op(self) -> ConditionSpec:
        ops = (self.model_fields_set - {"path"}) or set()
        if len(ops) != 1:
            raise ValueError("give exactly one of equals, not_equals, in, exists, truthy, falsy")
        return self

    def build(self) -> Condition:
        """The core condition."""
        (op,) = self.model_fields_set - {"path"}
        name = "in" if op == "in_" else op
        value = getattr(self, op)
        if name in ("truthy", "falsy") and value is False:
            name = "falsy" if name == "truthy" else "truthy"
        return Condition(FieldPath.parse(self.path), ConditionOp(name), value)


Conditions = ConditionSpec | list[ConditionSpec]


def build_conditions(spec: Conditions | None) -> tuple[Condition, ...]:
    """Core conditions from one or a list of specs."""
    if spec is None:
        return ()
    items = spec if isinstance(spec, list) else [spec]
    return tuple(c.build() for c in items)


class WeightSpec(_Strict):
    """A check's place in a rubric: its weight and policies. A bare number is the weight."""

    weight: Number = Field(ge=0)
    """The check's weight; weights are normalized to sum to 1."""
    required: bool = False
    """A case that fails this check cannot be a successful completion."""
    not_applicable: NotApplicablePolicy = NotApplicablePolicy.EXCLUDE
    """``pass``: not applicable counts as passed; ``exclude``: drop it and renormalize."""

    @model_validator(mode="before")
    @classmethod
    def _bare_number(cls, data: Any) -> Any:
        if isinstance(data, int | float) and not isinstance(data, bool):
            return {"weight": data}
        if not isinstance(data, dict):
            raise ValueError(
                f"expected a number >= 0 (or {{weight, required, not_applicable}}), got {data!r}"
            )
        return data


class OutcomeDefaults(_Strict):
    """Settings of the default outcome rules."""

    success_path: str = "final_state.success"
    """Where the success flag lives."""
    stage_path: str = "final_state.stage"
    """Where the conversation stage lives."""
    failed_stage: str = "failed"
    """The stage value that means the run failed."""
    success_min: Score = 0.75
    """Lowest score of a successful completion."""
    graceful_min: Score = 0.5
    """Lowest score of a graceful failure."""

    @field_validator("success_path", "stage_path")
    @classmethod
    def _valid_path(cls, value: str) -> str:
        return parse_path(value)

    def build(self) -> tuple[OutcomeRule, ...]:
        """The rules."""
        return default_outcome_rules(**self.model_dump())


class OutcomeRuleSpec(_Strict):
    """One ordered rule: this outcome when the score and state conditions hold."""

    outcome: OutcomeClass
    """The outcome class."""
    min_score: Score | None = None
    """Lowest score that matches."""
    max_score: Score | None = None
    """Highest score that matches."""
    state: Conditions | None = None
    """Conditions on the case's fields."""

    def build(self) -> OutcomeRule:
        """The core rule."""
        return _OutcomeRule(
            self.outcome, self.min_score, self.max_score, build_conditions(self.state)
        )


class BandsSpec(_Strict):
    """Readiness bands of the TCR."""

    production_ready: Score = 0.85
    """TCR at or above this is production ready."""
    needs_improvement: Score = 0.70
    """TCR at or above this (and below production_ready) needs improvement."""

    @model_validator(mode="after")
    def _ordered(self) -> BandsSpec:
        if self.needs_improvement > self.production_ready:
            raise ValueError("needs_improvement must not exceed production_ready")
        return self

    def build(self) -> Bands:
        """The core bands."""
        return Bands(self.production_ready, self.needs_improvement)


class RubricSpec(_Strict):
    """A rubric: weighted checks, when it applies, and how outcomes are classified."""

    weights: dict[str, WeightSpec] = Field(min_length=1)
    """Check name to weight (or to {weight, required, not_applicable})."""
    when: Conditions | None = None
    """The rubric applies only to cases where these hold."""
    outcomes: OutcomeDefaults | None = None
    """Settings of the default outcome rules."""
    outcome_rules: list[OutcomeRuleSpec] | None = Field(default=None, min_length=1)
    """Explicit ordered rules, instead of ``outcomes``."""
    bands: BandsSpec | None = None
    """Readiness bands."""

    @model_validator(mode="after")
    def _one_rule_style(self) -> RubricSpec:
        if self.outcomes is not None and self.outcome_rules is not None:
            raise ValueError("give either 'outcomes' or 'outcome_rules', not both")
        return self


class GateSpec(_Strict):
    """A run-level threshold."""

    metric: GateMetric
    """What to measure."""
    rubric: str | None = None
    """The rubric measured (all metrics but errored_executions)."""
    check: str | None = None
    """The check (check_pass_rate; a judge check for calibrated_pass_rate)."""
    outcome: OutcomeClass | None = None
    """The outcome class (outcome_rate)."""
    min: Number | None = None
    """The lowest acceptable value."""
    max: Number | None = None
    """The highest acceptable value."""
    k: Annotated[int, Field(strict=True, ge=1)] | None = None
    """Tries per task (pass_at_k, pass_hat_k): at most the run's repeats."""

    @model_validator(mode="after")
    def _complete(self) -> GateSpec:
        if self.min is None and self.max is None:
            raise ValueError("give 'min', 'max' or both")
        reliability = self.metric in (GateMetric.PASS_AT_K, GateMetric.PASS_HAT_K)
        if reliability and self.k is None:
            raise ValueError(f"metric {self.metric.value} needs 'k' (tries per task)")
        if not reliability and self.k is not None:
            raise ValueError(f"'k' is for pass_at_k and pass_hat_k, not {self.metric.value}")
        calibrated = self.metric is GateMetric.CALIBRATED_PASS_RATE
        needs_rubric = self.metric not in RUN_METRICS and not calibrated
        if needs_rubric and self.rubric is None:
            raise ValueError(f"metric {self.metric.value} needs 'rubric'")
        if self.metric is GateMetric.CHECK_PASS_RATE and self.check is None:
            raise ValueError("metric check_pass_rate needs 'check'")
        if calibrated and self.check is None:
            raise ValueError("metric calibrated_pass_rate needs 'check' (a judge check)")
        if self.metric is GateMetric.OUTCOME_RATE and self.outcome is None:
            raise ValueError("metric outcome_rate needs 'outcome'")
        return self

    def build(self) -> Gate:
        """The core gate."""
        return Gate(self.metric, self.min, self.max, self.rubric, self.check, self.outcome, self.k)


Percent = Annotated[float, Field(strict=True, ge=0.0, le=100.0)]


class ThresholdsSpec(_Strict):
    """Case pass/fail and the run's two pass dimensions, on the 0-100 scale."""

    pass_policy: PassMode = PassMode.THRESHOLD
    """``threshold``: expected outcomes, else the score against ``pass_threshold``;
    ``all_checks``: every applicable check of ``score_rubrics`` (default: all) passes."""
    pass_threshold: Percent = DEFAULT_PASS_THRESHOLD
    """The score a case needs when no expected outcome applies to it."""
    metrics_pass_threshold: Percent = DEFAULT_METRICS_PASS_THRESHOLD
    """The mean case score the run needs."""
    cases_pass_threshold: Percent = DEFAULT_CASES_PASS_THRESHOLD
    """The percentage of executions that must pass."""
    score_rubrics: list[str] | None = Field(default=None, min_length=1)
    """The rubrics whose mean score is a case's score (default: all); under ``all_checks``
    also the rubrics whose checks must all pass."""


Seconds = Annotated[float, Field(strict=True, gt=0.0, allow_inf_nan=False)]


class JudgeBlockSpec(_Strict):
    """``judge:``: how the run's judge is called; each ``--judge-*`` flag overrides its key.
    Keys left out keep their defaults (see the README's "LLM judges")."""

    timeout_s: Seconds | None = None
    """Longest single attempt of a judge call."""
    retries: Annotated[int, Field(strict=True, ge=0, le=100)] | None = None
    """Attempts after the first, for failures that may pass on retry."""
    deadline_s: Seconds | None = None
    """Longest one judge call may take, all attempts and waits included."""
    backoff_initial_s: Annotated[float, Field(strict=True, ge=0.0, allow_inf_nan=False)] | None = (
        None
    )
    """First wait before a retry when the server names none (doubled each time)."""
    backoff_max_s: Seconds | None = None
    """Longest single wait, also the cap on a server's Retry-After."""
    format: JudgeFormat | None = None
    """Structured output: auto, json_schema, json_object or prompt."""
    concurrency: Annotated[int, Field(strict=True, ge=1, le=1024)] | None = None
    """Judge calls in flight at once."""
    max_input_tokens: Annotated[int, Field(strict=True, ge=1)] | None = None
    """The judge model's input limit in tokens: a longer prompt is not sent and its verdict is
    errored (default: the known limit of common models, else none)."""

    mode: Literal["sync", "batch"] | None = None
    """``sync`` (default): each judge call as the check makes it; ``batch``: the calls of a
    recorded run collected and sent through the provider's batch API, at half the price."""
    poll_s: Seconds | None = None
    """In batch mode, seconds between two polls of a submitted batch (default 30)."""
    retry_sync: Annotated[bool, Field(strict=True)] | None = None
    """In batch mode, ask the judge synchronously for the items a batch did not answer
    (expired, cancelled, errored) instead of ending their verdicts errored."""

    def settings(self) -> dict[str, Any]:
        """The keys that were given, of how each call is made (not the batch keys)."""
        return self.model_dump(exclude_none=True, exclude=set(BATCH_KEYS))

    def batch_settings(self) -> dict[str, Any]:
        """The batch keys that were given (``mode``, ``poll_s``, ``retry_sync``)."""
        return self.model_dump(exclude_none=True, include=set(BATCH_KEYS))


BATCH_KEYS = ("mode", "poll_s", "retry_sync")
"""The ``judge:`` keys of batch mode, which the run reads (the rest configure each call)."""


class CasesSpec(_Strict):
    """``cases:``: a checkweigh cases file (a bare path is short for ``{path: ...}``), or agent
    logs read through an importer (``{path: logs.jsonl, format: openai}``)."""

    path: str = Field(min_length=1)
    """The file, relative to the suite file."""
    format: str | None = None
    """The log format (``openai``, ``openai-responses``, ``anthropic``, ``mapping``...);
    without it, a checkweigh cases file (.jsonl, .yaml or .json)."""
    on_bad_record: OnBadRecord = "fail"
    """A log record that cannot be read: stop the run (``fail``), or skip it and say so in the
    report (``skip``)."""
    mapping: FieldMapping | None = None
    """Where each record keeps the case's parts (``format: mapping``)."""
    options: dict[str, Any] = Field(default_factory=dict)
    """The format's own settings, e.g. ``{case_id_attribute: gen_ai.conversation.id}`` for
    ``otel``."""

    @model_validator(mode="before")
    @classmethod
    def _bare_path(cls, data: Any) -> Any:
        if isinstance(data, str):
            return {"path": data}
        if not isinstance(data, dict):
            raise ValueError(
                f"expected text, got {shown(data)} (a file path, or {{path, format, "
                "on_bad_record, mapping}})"
            )
        return data

    @field_validator("format")
    @classmethod
    def _known_format(cls, value: str | None) -> str | None:
        if value is not None and value not in FORMATS:
            raise ValueError(
                f"unknown log format {value!r}; expected one of {', '.join(FORMATS.names())}"
            )
        return value

    @model_validator(mode="after")
    def _consistent(self) -> CasesSpec:
        if self.format == "mapping" and self.mapping is None:
            raise ValueError("format: mapping needs 'mapping' (where each record keeps the case)")
        if self.mapping is not None and self.format != "mapping":
            raise ValueError("'mapping' applies to format: mapping")
        if self.options and self.format is None:
            raise ValueError("'options' apply to logs read through an importer; give 'format'")
        if self.format is None and self.on_bad_record == "skip":
            raise ValueError(
                "on_bad_record: skip applies to logs read through an importer; give 'format'"
            )
        return self


class SuiteSpec(_Strict):
    """A whole suite file."""

    name: str = Field(min_length=1)
    """The suite's name."""
    description: str = ""
    """What it evaluates."""
    cases: CasesSpec
    """The cases file (.jsonl, .yaml or .json), relative to the suite file, or agent logs
    read through an importer (``{path, format, on_bad_record, mapping}``)."""
    target: Annotated[
        TargetSpecBase | None,
        BeforeValidator(target_spec),
        BuiltinKindsSchema,
    ] = None
    """The agent to run; without one the cases carry recorded traces and final states."""
    checks: dict[str, dict[str, Any]] = Field(min_length=1)
    """Check name to its spec (``type`` and that type's fields, plus ``when``)."""
    rubrics: dict[str, RubricSpec] = Field(min_length=1)
    """Rubric name to rubric."""
    thresholds: ThresholdsSpec = Field(default_factory=ThresholdsSpec)
    """Case pass/fail and the run's metrics and cases dimensions."""
    repeats: int = Field(default=1, ge=1, le=10_000)
    """Tries of each case per run (``--repeat`` overrides): pass@k and pass^k need 2 or more."""
    gates: list[GateSpec] | None = None
    """Extra run-level gates (TCR, check pass rates, outcome rates, errored executions)."""
    judge: JudgeBlockSpec | None = None
    """How the run's judge is called: timeouts, retries, deadline, output format."""
