"""Recording an agent's answers and replaying them with no agent running.

A :class:`RecordingTarget` wraps any target and appends each finished call to
``DIR/calls.jsonl``, one JSON line per call, flushed as the call ends (a run killed midway keeps
every call it finished). A :class:`ReplayTarget` answers from such a folder, so a suite's checks
and rubrics can be changed and re-scored against the agent's recorded behaviour.

The folder::

    DIR/manifest.json   format, format_version, suite, target_kind, checkweigh_version, created_at
    DIR/calls.jsonl     {"case_id", "repeat", "turn", "fingerprint", "request",
                         "reply" | "failure", "wall_ms"} per call

Only case data is stored (the request is :func:`request_payload`), never a header or a token.
Recording into a folder that already holds a recording replaces it when the recording starts
(the old manifest is removed first, then both files are swapped in whole), so a folder never
mixes two recordings.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ...errors import InputError
from ...suites import first_error, loc_text
from ._base import AgentFailure, AgentRun, Target, TargetRequest, request_payload
from ._timing import timed

FORMAT: Final = "checkweigh-agent-recording"
"""What ``manifest.json`` says it is, so a foreign folder is told apart."""
FORMAT_VERSION = 1
"""The version of the folder's layout this checkweigh writes and reads."""
MANIFEST = "manifest.json"
CALLS = "calls.jsonl"


class Manifest(BaseModel):
    """``DIR/manifest.json``: what was recorded, by what, when."""

    model_config = ConfigDict(extra="ignore")

    format: Literal["checkweigh-agent-recording"] = FORMAT
    """Always ``checkweigh-agent-recording``."""
    format_version: int = FORMAT_VERSION
    """The layout's version (:data:`FORMAT_VERSION` when written)."""
    suite: str
    """The suite's name."""
    target_kind: str
    """The kind of target recorded (``python``, ``http``, ``command``...)."""
    checkweigh_version: str
    """The checkweigh that recorded it."""
    created_at: datetime
    """When the recording started (UTC)."""


class RecordedCall(BaseModel):
    """One line of ``calls.jsonl``: a call of the target and how it ended."""

    model_config = ConfigDict(extra="forbid")

    case_id: str
    """The case's id."""
    repeat: int
    """Which try of the case (from 0)."""
    turn: int = 0
    """The conversation turn (0 for a single call)."""
    fingerprint: str
    """:func:`fingerprint` of the request: a replay refuses a request that differs."""
    request: dict[str, Any]
    """What the agent was sent (:func:`request_payload`)."""
    reply: AgentRun | None = None
    """The agent's answer, when it gave one."""
    failure: str | None = None
    """The agent's failure (its case's ``agent_error``), when it gave no answer."""
    wall_ms: float
    """How long the call took."""


_KEPT_ONCE: Final = {"reply": {"latency_ms"}}
"""The reply's latency is the call's ``wall_ms``: not written twice."""

Key = tuple[str, int, int]
"""A call's place: case id, try, turn."""


def fingerprint(request: TargetRequest) -> str:
    """The sha256 of the canonical JSON of what ``request`` sends an agent (id, input,
    metadata and, in a conversation, the messages and the turn)."""
    return _digest(request_payload(request))


def _digest(payload: dict[str, Any]) -> str:
    # without the try number: the call's key holds it, and recordings made before requests
    # carried it keep their fingerprints
    sent = {k: v for k, v in payload.items() if k != "repeat"}
    text = json.dumps(sent, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _where(request: TargetRequest) -> str:
    """``case 'x' try 2 (turn 0)``: tries counted from 1, as a person counts them."""
    return f"case {request.case.id!r} try {request.repeat + 1} (turn {request.turn})"


class RecordingTarget:
    """``inner``, with each finished call appended to ``DIR/calls.jsonl``.

    The per-case time limit is applied here (give ``timeout_s``, and none to the engine), so
    a call that times out is recorded as the failure it was and replays as the same one; a
    call cancelled by a stop is not finished and is not recorded.
    """

    def __init__(
        self,
        inner: Target,
        dir: Path,
        *,
        suite: str = "",
        timeout_s: float | None = None,
        checkweigh_version: str = "",
    ) -> None:
        self.inner = inner
        self.kind = inner.kind
        self.dir = Path(dir)
        self.timeout_s = timeout_s
        self.replaced = start_recording(
            self.dir,
            Manifest(
                suite=suite,
                target_kind=inner.kind,
                checkweigh_version=checkweigh_version,
                created_at=datetime.now(UTC),
            ),
        )
        """The manifest of the recording this one replaced, if the folder held one."""
        self.calls = 0
        """Calls recorded so far."""
        self._file: IO[str] | None = None
        self._closed = False

    async def run(self, request: TargetRequest) -> AgentRun:
        """``inner``'s answer to ``request``, recorded once the call ends.

        Raises:
            AgentFailure: the agent's failure (recorded too).
        """
        payload = request_payload(request)
        reply: AgentRun | None = None
        failure: str | None = None
        start = time.perf_counter()
        try:
            ran, ms = await timed(self.inner, request, self.timeout_s)
        except AgentFailure as exc:
            failure = str(exc)
            ms = (time.perf_counter() - start) * 1000.0
        else:
            # the agent's own time when it knows it, so the replay gives the same latency
            ms = ran.latency_ms if ran.latency_ms is not None else ms
            reply = ran.model_copy(update={"latency_ms": ms})
        self._append(
            RecordedCall(
                case_id=request.case.id,
                repeat=request.repeat,
                turn=request.turn,
                fingerprint=_digest(payload),
                request=payload,
                reply=reply,
                failure=failure,
                wall_ms=ms,
            )
        )
        if reply is None:
            raise AgentFailure(failure or "agent failed")
        return reply

    def _append(self, call: RecordedCall) -> None:
        if self._closed:  # a late call after the run ended is not recorded
            return
        if self._file is None:  # opened by the first call, so only a run that calls closes it
            self._file = open(self.dir / CALLS, "a", encoding="utf-8")  # noqa: SIM115
        # one write of a whole line, flushed: a killed run keeps every finished call
        self._file.write(call.model_dump_json(exclude_none=True, exclude=_KEPT_ONCE) + "\n")
        self._file.flush()
        self.calls += 1

    async def aclose(self) -> None:
        """Close the recording, then the agent's target."""
        self._closed = True
        if self._file is not None:
            self._file.close()
            self._file = None
        await self.inner.aclose()


def start_recording(folder: Path, manifest: Manifest) -> Manifest | None:
    """Make ``folder`` a new, empty recording described by ``manifest``; the manifest of the
    recording it replaced, if any.

    Raises:
        InputError: ``folder`` is a file, or holds a ``calls.jsonl`` or ``manifest.json`` that
            is not a checkweigh recording (it is not overwritten).
    """
    old = check_record_dir(folder)
    folder.mkdir(parents=True, exist_ok=True)
    # the manifest goes first and comes back last: a folder caught in between reads as "not a
    # recording", never as the old manifest over new calls
    (folder / MANIFEST).unlink(missing_ok=True)
    _write_whole(folder / CALLS, "")
    _write_whole(folder / MANIFEST, manifest.model_dump_json(indent=2) + "\n")
    return old


def check_record_dir(folder: Path, field: str = "--record-agent") -> Manifest | None:
    """Whether a recording may be written into ``folder``; the manifest of the recording it
    holds (which recording will replace), if any.

    Raises:
        InputError: ``folder`` is a file, or holds files named like a recording's that are not
            one.
    """
    if folder.exists() and not folder.is_dir():
        raise InputError(f"{folder} is a file; expected a folder for the recording", field=field)
    manifest, calls = folder / MANIFEST, folder / CALLS
    if manifest.exists():
        try:
            return read_manifest(folder, field)
        except InputError:
            raise InputError(
                f"{folder} holds a {MANIFEST} that is not a checkweigh agent recording; "
                "not overwritten: give an empty or new folder",
                field=field,
            ) from None
    if calls.exists():
        raise InputError(
            f"{folder} holds a {CALLS} without a {MANIFEST}; not overwritten: give an empty "
            "or new folder",
            field=field,
        )
    return None


def _write_whole(path: Path, text: str) -> None:
    """``path`` replaced by ``text`` in one step (a temporary file renamed over it)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_manifest(folder: Path, field: str = "--replay-agent") -> Manifest:
    """The manifest of the recording in ``folder``.

    Raises:
        InputError: the folder is missing or is not a recording this checkweigh can read.
    """
    if not folder.exists():
        raise InputError(f"{folder} does not exist; record one with --record-agent", field=field)
    if not folder.is_dir():
        raise InputError(f"{folder} is a file; expected a recording's folder", field=field)
    path = folder / MANIFEST
    if not path.is_file():
        raise InputError(
            f"{folder} is not an agent recording (no {MANIFEST}); record one with --record-agent",
            field=field,
        )
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"not readable JSON: {exc}", file=path) from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise InputError(f"not a checkweigh agent recording (expected format: {FORMAT})", file=path)
    version = raw.get("format_version")
    if isinstance(version, int) and version > FORMAT_VERSION:
        raise InputError(
            f"recorded in format {version} by a newer checkweigh; this one reads {FORMAT_VERSION}",
            file=path,
            field="format_version",
        )
    try:
        manifest = Manifest.model_validate(raw)
    except ValidationError as exc:
        loc, message = first_error(exc)
        raise InputError(message, file=path, field=loc_text(loc)) from None
    if not (folder / CALLS).is_file():
        raise InputError(f"{folder} holds no {CALLS}; the recording is incomplete", field=field)
    return manifest


class ReplayTarget:
    """Answers each call from a recording, with no agent running.

    A call that was not recorded, or whose request differs from the recorded one (the case's
    input changed), is its case's error, saying which.
    """

    kind = "replay"

    def __init__(self, dir: Path) -> None:
        """Load the recording's index.

        Raises:
            InputError: the folder is not a recording, or a line of ``calls.jsonl`` is not a
                recorded call (naming the file and line).
        """
        self.dir = Path(dir)
        self.manifest = read_manifest(self.dir)
        self.calls: dict[Key, RecordedCall] = {}
        """The recorded calls by place; a place recorded twice keeps its last call."""
        self.notes: list[str] = []
        """What loading skipped, for the report."""
        self.replayed = 0
        """Calls answered so far."""
        self._load(self.dir / CALLS)

    def _load(self, path: Path) -> None:
        try:
            with path.open("rb") as f:
                previous: tuple[int, bytes] | None = None
                for number, line in enumerate(f, 1):
                    if previous is not None:
                        self._add(path, *previous)
                    previous = (number, line)
                if previous is not None:
                    self._add_last(path, *previous)
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", file=path) from None

    def _add(self, path: Path, number: int, line: bytes) -> None:
        if not line.strip():
            return
        try:
            call = RecordedCall.model_validate_json(line.rstrip(b"\r\n"))
        except ValidationError as exc:
            loc, message = first_error(exc)
            what = f"{loc_text(loc)}: {message}" if loc else message
            raise InputError(f"not a recorded agent call: {what}", file=path, line=number) from None
        self.calls[call.case_id, call.repeat, call.turn] = call

    def _add_last(self, path: Path, number: int, line: bytes) -> None:
        """A recording stopped mid-write (kill -9) can end in part of a line: that call was
        never finished, so it is left out, with a note."""
        try:
            self._add(path, number, line)
        except InputError:
            if line.endswith(b"\n"):
                raise
            self.notes.append(
                f"{path}:{number}: the last line was cut short (the recording was stopped "
                "while writing it); that call is not replayed"
            )

    async def run(self, request: TargetRequest) -> AgentRun:
        """The recorded answer to ``request``, with the recorded wall time as its latency.

        Raises:
            AgentFailure: the recorded failure, a call that was not recorded, or one recorded
                for a different request.
        """
        call = self.calls.get((request.case.id, request.repeat, request.turn))
        if call is None:
            raise AgentFailure(f"no recorded agent call for {_where(request)} in {self.dir}")
        if call.fingerprint != fingerprint(request):
            raise AgentFailure(
                f"the recorded agent call for {_where(request)} in {self.dir} was sent a "
                "different request (the case's input, metadata or messages changed since "
                "it was recorded)"
            )
        await asyncio.sleep(0)  # a replay still yields, as a real call would
        self.replayed += 1
        if call.reply is None:
            raise AgentFailure(call.failure or "agent failed (recorded without a reason)")
        return call.reply.model_copy(update={"latency_ms": call.wall_ms})

    async def aclose(self) -> None:
        """Nothing to release: the recording was read whole at the start."""
