"""The agent a run drives: the suite's target, that target recorded, or a recording of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..core import AgentSource
from ..errors import InputError
from ..judges import JudgeModel
from ..suites import Suite
from .targets import RecordingTarget, ReplayTarget, Target, build_target, conversing
from .targets.recording import check_record_dir


@dataclass(frozen=True)
class RunAgent:
    """The target of a run, how it is timed, and what the report and snapshot say of it."""

    target: Target | None
    """None: the cases hold recorded traces."""
    timeout_s: float | None
    """The engine's per-call limit (None when the recording target applies it itself)."""
    source: AgentSource | None
    """For the run's configuration snapshot."""
    notes: list[str] = field(default_factory=list)
    """For the report."""


def run_agent(
    suite: Suite,
    *,
    record: Path | None = None,
    replay: Path | None = None,
    judge: JudgeModel | None = None,
    checkweigh_version: str = "",
) -> RunAgent:
    """The agent of a run of ``suite``: its target, recorded into ``record`` or answered from
    the recording in ``replay`` (then the suite's target is not built: the agent need not be
    reachable, its program need not exist). Cases with a ``user`` hold a conversation with
    it (simulated users speak through ``judge``); a recording holds each case's whole
    conversation, so a replay needs neither the agent nor the simulated user.

    Raises:
        InputError: both folders, no target to record or replay, or an unusable folder.
        TargetError: the suite's target cannot be loaded.
    """
    check_agent_flags(suite, record, replay)
    spec = suite.target
    if spec is None:
        return RunAgent(None, None, None)
    if replay is not None:
        replayed = ReplayTarget(replay)
        m = replayed.manifest
        when = m.created_at.strftime("%Y-%m-%d %H:%M UTC")
        note = f"agent replayed from {replay}, recorded {when}; {len(replayed.calls)} calls"
        source = AgentSource(
            mode="replayed",
            dir=str(replay),
            recorded_at=m.created_at.isoformat(),
            target_kind=m.target_kind,
        )
        return RunAgent(replayed, None, source, [note, *replayed.notes])
    if record is not None:  # before the target is built, which may hold a connection
        check_record_dir(record)
    target = conversing(build_target(spec, suite.base_dir), spec, judge)
    if record is None:
        return RunAgent(target, spec.timeout_s, AgentSource(mode="live", target_kind=target.kind))
    recording = RecordingTarget(
        target,
        record,
        suite=suite.name,
        timeout_s=spec.timeout_s,  # applied by the recording, so a timeout is recorded too
        checkweigh_version=checkweigh_version,
    )
    note = f"agent calls recorded to {record}"
    if recording.replaced is not None:
        when = recording.replaced.created_at.strftime("%Y-%m-%d %H:%M UTC")
        note += f" (replacing the recording made {when})"
    source = AgentSource(mode="recorded", dir=str(record), target_kind=target.kind)
    return RunAgent(recording, None, source, [note])


def check_agent_flags(suite: Suite, record: Path | None, replay: Path | None) -> None:
    """Refuse both recording flags at once, or either for a suite that calls no agent.

    Raises:
        InputError: naming the flag.
    """
    if record is not None and replay is not None:
        raise InputError(
            "--record-agent runs the agent and --replay-agent answers without it: pick one",
            field="--replay-agent",
        )
    flag = "--record-agent" if record is not None else "--replay-agent"
    if (record is not None or replay is not None) and suite.target is None:
        raise InputError(
            f"the suite {suite.name!r} has no target: its cases hold recorded traces and no "
            "agent is called; add a target: block to record or replay one",
            field=flag,
        )
