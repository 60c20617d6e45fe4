"""A person's label on one check of one case, as the store keeps it, and the fingerprints that
let it follow the same case into later runs.

A label says yes or no about what a judge was shown. Two fingerprints tie it to that:

- the **criterion**: the check's question (its spec, without settings that only change how
  it is asked, such as ``samples``) and its version. A label made under another criterion is
  stale: it answers another question.
- the **evidence**: the prompt the judge was sent (its first call for the check). A later
  execution whose judge saw the very same prompt carries the same label; one that saw another
  (the agent did something else) does not.

An execution whose check made no judge call (a deterministic check) has no evidence
fingerprint: its label is bound to the run and the repeat it was made in.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, field_validator

from .._text import safe_text
from ._exchange import ExchangeMessage

CRITERION_IGNORED = frozenset(
    {"description", "samples", "temperature", "max_tokens", "trust", "timeout_s"}
)
"""Spec fields that change how a check is asked or shown, not what it answers."""


class LabelSource(StrEnum):
    """Where a label was made."""

    UI = "ui"
    API = "api"
    FILE = "file"


class Label(BaseModel):
    """A person's yes/no on one check of one case, with what it was made on."""

    model_config = ConfigDict(frozen=True)

    check: str = Field(min_length=1, max_length=200)
    """The check's name."""
    case_id: str = Field(min_length=1, max_length=200)
    """The case."""
    label: bool
    """True for yes: the check should pass on this evidence."""
    note: str = ""
    """The labeller's comment."""
    reviewer: str = Field(default="", max_length=200)
    """Who labelled (a name per token, or what they typed); empty when unknown."""
    criterion: str | None = None
    """The criterion's fingerprint (:func:`criterion_fingerprint`); None when unknown."""
    evidence: str | None = None
    """The evidence's fingerprint (:func:`evidence_fingerprint`); None for a check that made no
    judge call, whose label is bound to ``run_id`` and ``repeat``."""
    run_id: str | None = None
    """The run it was made in, when known."""
    repeat: int | None = None
    """The execution it was made on (from 0); None for every repeat."""
    judge: str | None = None
    """The judge whose verdict the labeller saw."""
    verdict: Literal["yes", "no"] | None = None
    """That verdict, when one was shown."""
    created_at: datetime | None = None
    """When it was made (the store sets it)."""
    source: LabelSource = LabelSource.API
    """Where it was made."""

    @field_validator("check", "case_id", "note", "reviewer", "judge", mode="before")
    @classmethod
    def _storable(cls, value: object) -> object:
        # any Python string is kept: a lone surrogate becomes its visible escape
        return safe_text(value) if isinstance(value, str) else value

    def key(self) -> tuple[str, str, str | None, str | None, str | None, int | None]:
        """What one label per reviewer is kept for: a later one replaces it."""
        if self.evidence is not None:
            return (self.check, self.case_id, self.criterion, self.evidence, None, None)
        return (self.check, self.case_id, self.criterion, None, self.run_id, self.repeat)


def _digest(value: Any) -> str:
    raw = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(raw).hexdigest()[:32]


def criterion_fingerprint(snapshot: Mapping[str, Any]) -> str:
    """The fingerprint of a check's criterion, from its entry in a run's configuration
    (``{"version": ..., "spec": {...}}``)."""
    spec = snapshot.get("spec") or {}
    kept = {k: v for k, v in spec.items() if k not in CRITERION_IGNORED}
    return _digest({"version": snapshot.get("version"), "spec": kept})


def evidence_fingerprint(messages: Iterable[ExchangeMessage]) -> str:
    """The fingerprint of the prompt a judge was sent."""
    return _digest([[m.role, m.content] for m in messages])
