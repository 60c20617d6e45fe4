"""A converted case written as a line of checkweigh JSONL without building the case.

``checkweigh import`` only writes the cases it reads. Building each
:class:`~checkweigh.core.Case` (a model per step) and dumping it costs more than reading and
converting the record; here the case's fields are checked by a plain schema instead (pydantic,
strict, no objects built) and written by orjson. The schema accepts only a part of what
``Case`` accepts: fields whose values ``Case`` keeps exactly as given. Anything else (a
timestamp to parse, a number to coerce, arguments left as text, a wrong type...) gets ``None``
here, and the caller builds the case as before, so its errors and its output are unchanged.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired, Required

import orjson
from pydantic import ConfigDict, Field, TypeAdapter, ValidationError
from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

_STRICT = ConfigDict(extra="forbid", strict=True)


class StepWire(TypedDict, total=False):
    """The :class:`~checkweigh.core.Step` fields written as given (``timestamp`` and
    ``latency_ms`` are not: ``Step`` converts them)."""

    __pydantic_config__ = _STRICT  # type: ignore[misc]

    kind: Required[Literal["user", "assistant", "tool_call", "system", "event"]]
    content: str | None
    name: str | None
    arguments: dict[str, Any]
    """An object only: ``Step`` parses text, so text takes the slow way."""
    result: Any
    error: str | None
    id: str | None
    parent_id: str | None
    attributes: dict[str, Any]


class CaseWire(TypedDict):
    """The :class:`~checkweigh.core.Case` fields written as given (not ``latency_ms``)."""

    __pydantic_config__ = _STRICT  # type: ignore[misc]

    id: Annotated[str, Field(min_length=1)]
    input: NotRequired[Any]
    trace: NotRequired[list[StepWire]]
    final_state: NotRequired[dict[str, Any]]
    ground_truth: NotRequired[Any]
    metadata: NotRequired[dict[str, Any]]
    error: NotRequired[str]


# the schema's own validator: TypeAdapter.validate_python adds a microsecond a call
class CaseHeadWire(TypedDict):
    """:class:`CaseWire` for a format whose steps have their types by construction (see
    ``RecordFormat.steps_checked``): each step is left as built."""

    __pydantic_config__ = _STRICT  # type: ignore[misc]

    id: Annotated[str, Field(min_length=1)]
    input: NotRequired[Any]
    trace: NotRequired[list[Any]]
    final_state: NotRequired[dict[str, Any]]
    ground_truth: NotRequired[Any]
    metadata: NotRequired[dict[str, Any]]
    error: NotRequired[str]


_CHECK = TypeAdapter(CaseWire).validator.validate_python
_CHECK_HEAD = TypeAdapter(CaseHeadWire).validator.validate_python
_CASE_DEFAULTS: dict[str, Any] = {
    "input": None,
    "trace": [],
    "final_state": {},
    "ground_truth": None,
    "metadata": {},
    "error": None,
}
"""What ``model_dump_json(exclude_defaults=True)`` leaves out (a step's defaults are None,
and ``{}`` for its attributes)."""
_LINE = orjson.OPT_APPEND_NEWLINE


def _default(key: str, value: Any) -> bool:
    return value is None or (key == "attributes" and value == {})


def case_line(data: dict[str, Any], *, steps_checked: bool = False) -> bytes | None:
    """A case's fields as a line of JSONL (with its newline) holding the same keys and values
    as ``Case.model_validate(data).model_dump_json(exclude_defaults=True)``; None when the
    case must be built to tell (see the module's docstring) or orjson cannot write a value
    (an integer beyond 64 bits, text with a lone surrogate, nesting deeper than 254).

    ``steps_checked``: the steps were built with the types of ``Step``'s fields (by a
    converter that checks what it takes from the record), so only the case's own fields are
    checked; a step with a timestamp (which ``Step`` parses) still gets None.
    """
    try:
        (_CHECK_HEAD if steps_checked else _CHECK)(data)
    except ValidationError:
        return None
    trace = data.get("trace")
    if trace:
        for i, step in enumerate(trace):
            if steps_checked and "timestamp" in step:
                return None
            if None in step.values() or step.get("attributes") == {}:
                trace = trace.copy() if trace is data["trace"] else trace
                trace[i] = {k: v for k, v in step.items() if not _default(k, v)}
    case = {k: v for k, v in data.items() if k == "id" or v != _CASE_DEFAULTS[k]}
    if trace:
        case["trace"] = trace
    try:
        return orjson.dumps(case, option=_LINE)
    except orjson.JSONEncodeError:
        return None
