"""The typed, versioned shapes of what a run stores: its configuration (:class:`RunConfig`) and
each execution's record (:class:`ResultRecord`), and what makes two runs' verdicts
incomparable: a different judge, judge settings, judge mode or check version."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ._outcome import OutcomeClass
from ._scoring import ScoreStatus
from ._verdict import VerdictState

CONFIG_VERSION = 2
"""The version of :class:`RunConfig`: 1 had no ``schema_version`` (the hand-built snapshot
dict); 2 made it this model, with the checkweigh version that ran it."""


class CheckSnapshot(BaseModel):
    """A check as the run used it."""

    model_config = ConfigDict(extra="allow")

    version: str
    """The check's logic version; a judge check's includes its formatter (``+plain@2``)."""
    spec: Any = None
    """The check's suite entry, as written."""
    when: list[str] = Field(default_factory=list)
    """Its guards, described."""


class AgentSource(BaseModel):
    """Where a run's agent answers came from: the agent itself, recorded or not, or a
    recording of it (then nothing ran, and the run re-scored the recorded behaviour)."""

    model_config = ConfigDict(extra="allow")

    mode: Literal["live", "recorded", "replayed"]
    """``live``: the agent ran; ``recorded``: it ran and its calls were recorded;
    ``replayed``: its calls were answered from a recording."""
    dir: str | None = None
    """The recording's folder (recorded and replayed)."""
    recorded_at: str | None = None
    """When the replayed recording was made (ISO 8601, UTC)."""
    target_kind: str | None = None
    """The kind of target that ran or was recorded."""


class RunConfig(BaseModel):
    """A run's resolved configuration, frozen when it starts and stored with it, so later
    edits of the suite change nothing and two runs can be told apart."""

    model_config = ConfigDict(extra="allow")

    schema_version: int = 1
    """:data:`CONFIG_VERSION` when written; 1 for configurations stored before it existed."""
    checkweigh_version: str | None = None
    """The checkweigh that ran it."""
    suite: str | None = None
    """The suite's name."""
    checks: dict[str, CheckSnapshot] = Field(default_factory=dict)
    """Each check used, with its version."""
    rubrics: list[dict[str, Any]] = Field(default_factory=list)
    """The rubrics: weights, rules, bands."""
    judge: str | None = None
    """``provider:model`` of the judge (None: judge checks were skipped)."""
    judge_mode: str | None = None
    """``single`` (a call per judge check) or ``batch`` (one checklist call per case)."""
    judge_options: dict[str, Any] | None = None
    """The judge's settings (temperature, output format, concurrency...)."""
    graded_weights: dict[str, float] = Field(default_factory=dict)
    """Metric weights overridden for the run."""
    thresholds: dict[str, Any] | None = None
    """The case pass policy."""
    gate_specs: list[Any] = Field(default_factory=list)
    """The gates as written."""
    agent_source: AgentSource | None = None
    """Where the agent answers came from (None: the cases held recorded traces, or the run
    was stored before this was kept)."""


class VerdictRecord(BaseModel):
    """One check's verdict as stored."""

    model_config = ConfigDict(extra="forbid")

    state: VerdictState
    """passed, failed, not_applicable or errored."""
    reason: str = ""
    """Why."""
    error: str | None = None
    """What went wrong, for an errored verdict."""
    measures: dict[str, float] | None = None
    """The numbers it was decided from (a metric's score, a judge's flip rate)."""


class ScoreRecord(BaseModel):
    """One rubric's result as stored."""

    model_config = ConfigDict(extra="forbid")

    status: ScoreStatus
    """scored, errored or not_applicable."""
    score: float | None
    """0-1, when scored."""
    outcome: OutcomeClass | None
    """The outcome class its rules gave."""
    excluded: list[str] = Field(default_factory=list)
    """Checks left out as not applicable."""
    required_failed: list[str] = Field(default_factory=list)
    """Required checks that failed."""
    errored: list[str] = Field(default_factory=list)
    """Checks that errored."""
    outcome_rule: int = -1
    """The index of the outcome rule that classed it (-1: none)."""


class UsageRecord(BaseModel):
    """What the agent consumed, as its log recorded."""

    model_config = ConfigDict(extra="forbid")

    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None


class ResultRecord(BaseModel):
    """One execution of one case as stored (``case_results.record``) and exported (each item
    of ``results`` in ``--json``, which adds the case verdict and, with ``--json-cases``, the
    evaluated case). The store writes it with :meth:`CaseResult.to_record`, without building
    this model (once per case, on the hot path); tests hold the two to the same shape."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    """:data:`~checkweigh.core.RECORD_VERSION` when written; 1 for records stored before."""
    case_id: str
    """The case's id."""
    repeat: int
    """Which execution of the case (from 0)."""
    position: int = 0
    """The case's position in its cases file."""
    latency_ms: float | None = None
    """How long the agent took."""
    agent_error: str | None = None
    """The agent's error, when it failed (then there are no verdicts)."""
    usage: UsageRecord | None = None
    """Tokens and cost, when the log recorded them."""
    verdicts: dict[str, VerdictRecord]
    """Every check's verdict, by name."""
    scores: dict[str, ScoreRecord]
    """Every rubric's result, by name."""


_SETTINGS_THAT_JUDGE = ("format",)
"""Run-wide judge settings that change what it answers (concurrency, timeouts and retries do
not; a check's temperature, samples and question are in its own entry)."""


def read_config(config: Mapping[str, Any]) -> RunConfig:
    """A stored configuration as the model; an unreadable one as an empty one (old or foreign
    files must still compare: what cannot be read cannot be told apart)."""
    try:
        return RunConfig.model_validate(config)
    except ValidationError:
        return RunConfig()


def judging_differences(base: Mapping[str, Any], candidate: Mapping[str, Any]) -> list[str]:
    """Why the two runs' verdicts were not decided alike, one sentence each; empty when they
    were (a change between them is then the agent's, not the judge's)."""
    b, c = read_config(base), read_config(candidate)
    out: list[str] = []
    if b.judge != c.judge:
        out.append(f"judge {_shown(b.judge)} in the base, {_shown(c.judge)} in the candidate")
    elif b.judge is not None:
        if b.judge_mode != c.judge_mode:
            out.append(f"judge mode {b.judge_mode} in the base, {c.judge_mode} in the candidate")
        bo, co = b.judge_options or {}, c.judge_options or {}
        for key in _SETTINGS_THAT_JUDGE:
            if bo.get(key) != co.get(key):
                out.append(
                    f"judge {key} {_shown(bo.get(key))} in the base, "
                    f"{_shown(co.get(key))} in the candidate"
                )
        if b.graded_weights != c.graded_weights:
            out.append("graded metric weights overridden differently")
    for name in sorted(b.checks.keys() & c.checks.keys()):
        bv, cv = b.checks[name].version, c.checks[name].version
        if bv != cv:
            out.append(f"check {name!r} version {bv} in the base, {cv} in the candidate")
        elif b.checks[name].spec != c.checks[name].spec:
            out.append(f"check {name!r} configured differently (its suite entry changed)")
    return out


def _shown(value: object) -> str:
    return "none" if value is None else str(value)
