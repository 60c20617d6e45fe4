"""A monitor file (``checkweigh serve --monitor monitor.yaml``): a suite, the traces it scores
(a filter), how many of them its judge checks see (a sampling rate and a budget per hour), its
time window and its alert rules. Every mistake is one line naming the file, line and field.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..errors import InputError
from ..store import parse_age
from ..suites import inert, read_yaml_file

MONITOR_FILE_LIMIT = 1 * 2**20
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
Scalar = str | int | float | bool


class MonitorError(InputError):
    """A monitor file that cannot be used."""


def parse_duration(text: Any, field: str) -> float:
    """``30s``, ``15m``, ``1h``, ``1d`` (or a number of seconds) as seconds.

    Raises:
        ValueError: anything else, or not above zero.
    """
    return parse_age(text)


class FilterSpec(BaseModel):
    """Which traces the monitor scores: every condition must hold (none: every trace)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    service: str | list[str] | None = None
    """The resource's ``service.name`` (one of a list)."""
    resource: dict[str, Scalar | list[Scalar]] = Field(default_factory=dict)
    """Resource attributes that must hold these values (one of a list)."""
    span: dict[str, Scalar | list[Scalar]] = Field(default_factory=dict)
    """Attributes some span of the trace must hold with these values (one of a list)."""


class SampleSpec(BaseModel):
    """How many traces the judge checks see (the deterministic checks see every one)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    judge: Annotated[float, Field(ge=0, le=1)] = 1.0
    """The share of matching traces whose judge checks run, decided by the trace id (every
    server process decides the same)."""


class BudgetSpec(BaseModel):
    """The judge's spend per clock hour, shared by every server process; a trace sampled
    once it is spent has its judge checks left out (counted, never silently)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    calls_per_hour: Annotated[int, Field(ge=0)] | None = None
    usd_per_hour: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None


class MonitorSpec(BaseModel):
    """A monitor file, as written."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    """The monitor's name (letters, digits, ``.``, ``_``, ``-``), unique on the server."""
    suite: str
    """The suite file (relative to the monitor file): its checks, rubrics and thresholds."""
    window: str | float = "1h"
    """The time windows results are grouped by (``15m``, ``1h``, ``1d``...)."""
    filter: FilterSpec = Field(default_factory=FilterSpec)
    sample: SampleSpec = Field(default_factory=SampleSpec)
    budget: BudgetSpec | None = None
    judge: str | None = None
    """The judge of its judge checks, as PROVIDER:MODEL (as ``--judge``); None: the judge
    checks are left out (not applicable)."""
    judge_cache: bool = True
    """Answer a judge call from checkweigh's judge cache when the same prompt was judged
    before (a cache hit costs nothing and spends no budget); False asks the judge every time."""
    judge_prices: str | None = None
    """USD per million tokens, ``INPUT,OUTPUT`` (as ``--judge-prices``): needed by
    ``budget.usd_per_hour``."""
    alerts: list[dict[str, Any]] = Field(default_factory=list)
    """Alert rules (see :class:`checkweigh.core.AlertRule`)."""
    webhook: str | None = None
    """Where a fired alert is posted (JSON)."""

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME.fullmatch(value):
            raise ValueError(
                "expected 1 to 100 letters, digits, '.', '_' or '-' (starting with a letter "
                f"or digit), got {value[:60]!r}"
            )
        return value

    @field_validator("window")
    @classmethod
    def _window(cls, value: str | float) -> str | float:
        parse_duration(value, "window")
        return value

    @property
    def window_s(self) -> float:
        """The window in seconds."""
        return parse_duration(self.window, "window")


def read_monitor(path: Path) -> tuple[MonitorSpec, Any]:
    """The monitor file's spec, and its line map (for errors found later, in the suite or the
    alert rules).

    Raises:
        MonitorError: one line naming the file, line and field.
    """
    data, lines = read_yaml_file(
        path,
        limit=MONITOR_FILE_LIMIT,
        what="monitor file (YAML)",
        error=MonitorError,
        missing="monitor file not found",
        unreadable="cannot read monitor file",
    )
    if not isinstance(data, dict):
        raise MonitorError("expected a mapping with name and suite", file=path, line=1)
    try:
        spec = MonitorSpec.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and "[" in p))
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            message = f"unknown key {str(loc[-1])!r}"
        elif err["type"] == "missing":
            message = "missing; expected it"
        where = ".".join(str(p) for p in loc) or None
        raise MonitorError(inert(message), file=path, line=lines.line(loc), field=where) from None
    if spec.budget is not None and spec.budget.usd_per_hour is not None and not spec.judge_prices:
        raise MonitorError(
            "budget.usd_per_hour needs judge_prices (USD per million tokens, INPUT,OUTPUT) to "
            "count dollars",
            file=path,
            line=lines.line(("budget", "usd_per_hour")),
            field="budget.usd_per_hour",
        )
    return spec, lines
