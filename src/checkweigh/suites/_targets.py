"""The ``target:`` block of a suite: which agent runs each case, chosen by ``kind``.

Each kind has its spec here (the suite file's shape) and its code in
``checkweigh.runs.targets`` (how it is driven). A block without ``kind`` is a Python callable,
as suites written before other kinds existed say.
"""

from __future__ import annotations

import shlex
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
)

from ._http import ReplySpec, check_body, check_headers, check_url

MAX_REPLY_BYTES = 16 * 2**20
"""The default cap on an out-of-process agent's reply (an HTTP body, a program's stdout)."""


class _TargetBase(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    concurrency: int = Field(default=8, ge=1, le=1024)
    """How many cases run at once."""
    timeout_s: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """Per-call time limit; a call over it is an agent error (its case errored). For a
    multi-turn case it bounds the whole conversation."""
    max_turns: int = Field(default=10, ge=1, le=1000)
    """The most user turns of a conversation with a simulated user (a case's ``user.max_turns``
    overrides it); a scripted user's conversation runs its whole script."""


class PythonTargetSpec(_TargetBase):
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


class HttpTargetSpec(_TargetBase):
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


class CommandTargetSpec(_TargetBase):
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


TARGET_SPECS: tuple[type[BaseModel], ...] = (
    PythonTargetSpec,
    HttpTargetSpec,
    CommandTargetSpec,
    ReplySpec,
)
"""Every kind's spec, for "did you mean" hints over the keys a suite may use."""
TARGET_KINDS = ("python", "http", "command")
"""The ``kind`` values a suite's target may name."""


# error locations drop a union member's tag only when it looks like a type name: the command
# kind's tag must not read as its field ``command`` (``target.command.command: ...``)
_TAGS = {"command": "CommandTarget"}


def _kind(value: Any) -> str | None:
    if isinstance(value, dict):
        kind = value.get("kind", "python")
        return _TAGS.get(kind, kind) if isinstance(kind, str) else None
    kind = getattr(value, "kind", None)
    return _TAGS.get(kind, kind) if isinstance(kind, str) else None


TargetSpec = Annotated[
    Annotated[PythonTargetSpec, Tag("python")]
    | Annotated[HttpTargetSpec, Tag("http")]
    | Annotated[CommandTargetSpec, Tag("CommandTarget")],
    Discriminator(
        _kind,
        custom_error_type="target_kind",
        custom_error_message=f"expected kind one of: {', '.join(TARGET_KINDS)}",
    ),
]
"""A ``target:`` block, by its ``kind`` (default ``python``)."""
