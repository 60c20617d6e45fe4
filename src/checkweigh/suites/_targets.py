"""The ``target:`` block of a suite: which agent runs each case, chosen by ``kind``.

Each kind has its spec here (the suite file's shape) and its code in
``checkweigh.runs.targets`` (how it is driven). A block without ``kind`` is a Python callable,
as suites written before other kinds existed say.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator


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


TARGET_SPECS: tuple[type[_TargetBase], ...] = (PythonTargetSpec,)
"""Every kind's spec, for "did you mean" hints over the keys a suite may use."""
TARGET_KINDS = ("python",)
"""The ``kind`` values a suite's target may name."""


def _kind(value: Any) -> str | None:
    if isinstance(value, dict):
        kind = value.get("kind", "python")
        return kind if isinstance(kind, str) else None
    return getattr(value, "kind", None)


TargetSpec = Annotated[
    Annotated[PythonTargetSpec, Tag("python")],
    Discriminator(
        _kind,
        custom_error_type="target_kind",
        custom_error_message=f"expected kind one of: {', '.join(TARGET_KINDS)}",
    ),
]
"""A ``target:`` block, by its ``kind`` (default ``python``)."""
