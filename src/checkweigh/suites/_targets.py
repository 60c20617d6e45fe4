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
    model_validator,
)

from ..importers import FieldMapping


class _TargetBase(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    concurrency: int = Field(default=8, ge=1, le=1024)
    """How many cases run at once."""
    timeout_s: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """Per-call time limit; a call over it is an agent error (its case errored)."""


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


ReplyFormat = Literal["checkweigh", "openai", "openai-responses", "anthropic", "mapping"]
"""How an out-of-process agent's reply is read: checkweigh's own ``{trace, final_state}``, or
one conversation in a log format of ``checkweigh.importers``."""


class ReplySpec(BaseModel):
    """How to read the JSON document an agent answers with."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: ReplyFormat = "checkweigh"
    """``checkweigh``: ``{trace, final_state, usage}``; else the log format of one
    conversation (``openai`` messages, ``anthropic``, ``openai-responses``, ``mapping``)."""
    mapping: FieldMapping | None = None
    """For ``format: mapping``: where the reply keeps its messages or trace and final state."""

    @model_validator(mode="after")
    def _mapping_given(self) -> ReplySpec:
        if (self.format == "mapping") != (self.mapping is not None):
            raise ValueError("'mapping' goes with format: mapping, and only with it")
        return self


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
    reply: ReplySpec = Field(default_factory=ReplySpec)
    """How its stdout is read."""
    max_reply_bytes: int = Field(default=16 * 2**20, ge=1, le=2**31)
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


TARGET_SPECS: tuple[type[_TargetBase], ...] = (PythonTargetSpec, CommandTargetSpec)
"""Every kind's spec, for "did you mean" hints over the keys a suite may use."""
TARGET_KINDS = ("python", "command")
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
    Annotated[PythonTargetSpec, Tag("python")] | Annotated[CommandTargetSpec, Tag("CommandTarget")],
    Discriminator(
        _kind,
        custom_error_type="target_kind",
        custom_error_message=f"expected kind one of: {', '.join(TARGET_KINDS)}",
    ),
]
"""A ``target:`` block, by its ``kind`` (default ``python``)."""
