"""The typed, versioned shapes of what a run stores: its configuration (:class:`RunConfig`;
each execution's record is ``_result_records.ResultRecord``), and what makes two runs' verdicts
incomparable: a different judge, judge settings, judge mode or check version."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

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
