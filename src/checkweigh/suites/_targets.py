"""The ``target:`` block of a suite: which agent runs each case, chosen by ``kind``.

A target kind is one unit (:class:`TargetKind`): the spec of its block, the checks made when
the suite loads, and the driver that runs the cases. The kinds are looked up by name in
:data:`TARGETS`: the built-ins' table below, then other packages' entry points in the group
``checkweigh.targets``. A block without ``kind`` is a Python callable, as suites written before
other kinds existed say.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    ValidationError,
    field_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

from ..errors import CheckweighError
from ..plugins import Registry
from ._errors import first_error, loc_text
from ._http import ReplySpec, check_body, check_headers, check_url

MAX_REPLY_BYTES = 16 * 2**20
"""The default cap on an out-of-process agent's reply (an HTTP body, a program's stdout)."""


class TargetSpecBase(BaseModel):
    """What every kind's ``target:`` block has: its ``kind`` and the limits the engine applies.
    A kind's spec subclasses it and adds its own fields (unknown keys are refused)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    kind: str
    """The target kind's name (``python`` when the block has none)."""

    concurrency: int = Field(default=8, ge=1, le=1024)
    """How many cases run at once."""
    timeout_s: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """Per-call time limit; a call over it is an agent error (its case errored). For a
    multi-turn case it bounds the whole conversation."""
    max_turns: int = Field(default=10, ge=1, le=1000)
    """The most user turns of a conversation with a simulated user (a case's ``user.max_turns``
    overrides it); a scripted user's conversation runs its whole script."""


class PythonTargetSpec(TargetSpecBase):
    """A Python callable, sync or async, imported from the suite's folder."""

    kind: Literal["python"] = "python"
    agent: str
    """``module:function``; the suite's folder is importable."""

    @field_validator("agent")
    @classmethod
    def _dotted(cls, value: str) -> str:
        module, _, attr = value.partition(":")
        if not module or not attr or module.startswith("."):
            raise ValueError(f"expected 'module:function', got {value!r}")
        return value


class HttpTargetSpec(TargetSpecBase):
    """An agent behind an HTTP endpoint: each case is POSTed as JSON (see
    ``docs/targets-http.md``)."""

    kind: Literal["http"]
    url: str
    """``http(s)://host[:port]/path``; ``${NAME}`` takes it (or a part) from the environment."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Request headers; ``${NAME}`` in a value is the environment variable, read at run start
    (the suite and the stored run keep only the name)."""
    body: Any = None
    """The JSON to send instead of the default ``{id, input, metadata}``: a template whose
    strings ``{{path}}`` are replaced by the value at ``path`` of that default payload."""
    reply: ReplySpec = Field(default_factory=lambda: ReplySpec())
    """How to read the reply."""
    request_timeout_s: float = Field(default=60.0, gt=0, allow_inf_nan=False)
    """Time limit of one HTTP request (connect, send, read); ``timeout_s`` bounds the whole
    case, retries included."""
    retries: int = Field(default=2, ge=0, le=10)
    """Further tries after a 429, 502, 503, 504 or a failed connection."""
    backoff_s: float = Field(default=0.5, gt=0, le=60, allow_inf_nan=False)
    """The first wait before a retry; it doubles each try (with jitter)."""
    max_wait_s: float = Field(default=30.0, gt=0, le=600, allow_inf_nan=False)
    """The longest wait between tries: a ``Retry-After`` beyond it ends the case's tries."""
    follow_redirects: Literal["never", "same_host"] = "never"
    """``never``: a redirect is the case's error. ``same_host``: one to the same scheme, host
    and port is followed (the headers go where they were already sent); any other is the
    case's error, so the headers (a token) never reach another host."""
    max_reply_bytes: int = Field(default=MAX_REPLY_BYTES, ge=1, le=2**31)
    """The most of a reply that is read; a longer one is the case's error (the rest is never
    read, so memory stays bounded)."""

    _url = field_validator("url")(check_url)
    _headers = field_validator("headers")(check_headers)
    _body = field_validator("body")(check_body)


class CommandTargetSpec(TargetSpecBase):
    """A program in any language: the case as JSON on its stdin, its reply as JSON on stdout."""

    kind: Literal["command"]
    command: list[str] = Field(min_length=1)
    """The program and its arguments (no shell). A string is split as a shell would
    (``shlex.split``), without expanding anything. A program path with a ``/`` is relative to
    the suite's folder; a bare name is looked up on ``PATH``."""
    cwd: str | None = None
    """The folder it runs in, relative to the suite's folder (default: the suite's folder)."""
    env: dict[str, str] = Field(default_factory=dict)
    """Variables added to the environment it inherits. ``$NAME`` / ``${NAME}`` in a value is
    read from checkweigh's environment when the run starts (``$$`` is a ``$``), so a token is
    named here, never written."""
    reply: ReplySpec = Field(default_factory=lambda: ReplySpec())
    """How its stdout is read."""
    max_reply_bytes: int = Field(default=MAX_REPLY_BYTES, ge=1, le=2**31)
    """The most it may write on stdout; more is an errored case."""

    @field_validator("command", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                value = shlex.split(value)
            except ValueError as exc:  # an unclosed quote
                raise ValueError(f"cannot split the command: {exc}") from None
        if isinstance(value, list) and not value:
            raise ValueError("expected a program and its arguments, got an empty command")
        return value

    @field_validator("command")
    @classmethod
    def _program(cls, value: list[str]) -> list[str]:
        if not value[0]:
            raise ValueError("the program is an empty string")
        if any("\0" in arg for arg in value):
            raise ValueError("an argument holds a NUL character")
        return value

    @field_validator("env")
    @classmethod
    def _names(cls, value: dict[str, str]) -> dict[str, str]:
        for name, text in value.items():
            if not name or "=" in name or "\0" in name or "\0" in text:
                raise ValueError(f"{name!r}: expected a variable name without '=' and no NUL")
        return value


class TargetKind(Protocol):
    """A kind of agent target: what a ``target: {kind: NAME, ...}`` block means.

    It is usually the driver's class itself, with ``spec`` and the two class methods below (as
    an Inspect ``SandboxEnvironment`` owns its config and its lifecycle).
    """

    spec: type[TargetSpecBase]
    """The model of the block (a :class:`TargetSpecBase` subclass); the suite loader
    validates the block with it, and a mistake is one line naming the file, line and key."""

    def check(self, spec: Any, base: Path, *, load_agent: bool) -> None:
        """Checks made when the suite loads (``spec`` is valid by its model): a program or a
        module that is not there, say. ``base`` is the suite's folder; ``load_agent`` is false
        when the run will not call the agent (a replay), so nothing is imported.

        Raises:
            InputError: what is wrong; its ``field`` (``url``, ``env.TOKEN``) is within
                ``target``.
        """
        ...

    def build(self, spec: Any, base: Path) -> Any:
        """The driver of ``spec`` for one run: a :class:`~checkweigh.runs.targets.Target`.

        Raises:
            TargetError: the agent cannot be loaded or reached as configured.
        """
        ...


def _target_kind(value: object) -> TargetKind:
    spec = getattr(value, "spec", None)
    if not (isinstance(spec, type) and issubclass(spec, TargetSpecBase)):
        raise TypeError("expected a target kind whose 'spec' is a TargetSpecBase subclass")
    for method in ("check", "build"):
        if not callable(getattr(value, method, None)):
            raise TypeError(f"expected a target kind with a {method}(spec, base, ...) method")
    return value  # type: ignore[return-value]  # checked above, as far as Python can tell


TARGETS: Registry[TargetKind] = Registry(
    "targets",
    {
        "python": "._python:CallableTarget",
        "http": ".http:HttpTarget",
        "command": ".command:CommandTarget",
    },
    package="checkweigh.runs.targets",
    label="target kind",
    accept=_target_kind,
)
"""The target kinds by name: the built-ins (their drivers imported when a suite names them),
then other packages' through the entry-point group ``checkweigh.targets``."""

TARGET_KINDS = TARGETS.builtin_names()
"""Deprecated (use :data:`TARGETS`): the built-in kinds' names."""
TargetSpec = TargetSpecBase
"""Deprecated (use :class:`TargetSpecBase`): a ``target:`` block of any kind."""


def target_spec(value: Any) -> Any:
    """A ``target:`` block validated by its kind's spec (a built-in's or a plugin's); a spec
    already built is kept. For :class:`SuiteSpec` built from Python: the suite loader
    validates the block itself, to point at the file's line.

    Raises:
        ValueError: an unknown kind, or a block its spec refuses (one line).
    """
    if not isinstance(value, dict):
        return value  # a built spec, None, or not a mapping (said by the field's type)
    name = value.get("kind", "python")
    try:
        kind = TARGETS.get(str(name), field="kind")
    except CheckweighError as exc:
        raise ValueError(str(exc)) from None
    try:
        return kind.spec.model_validate({**value, "kind": name})
    except ValidationError as exc:
        loc, message = first_error(exc, data=value)
        raise ValueError(f"{loc_text(loc)}: {message}" if loc else message) from None


class BuiltinKindsSchema:
    """Marks a ``target`` field whose JSON Schema is any built-in kind's block (or null), read
    from :data:`TARGETS` when a schema is made (``checkweigh schema suite``)."""

    @classmethod
    def __get_pydantic_json_schema__(
        cls, _schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        specs = [TARGETS.get(name).spec for name in TARGETS.builtin_names()]
        kinds = core_schema.union_schema([spec.__pydantic_core_schema__ for spec in specs])
        return handler(core_schema.nullable_schema(kinds))
