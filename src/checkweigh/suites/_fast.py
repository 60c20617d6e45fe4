"""The fast path of reading a JSONL case: msgspec decodes and validates the line, and the
models are built from what it decoded without validating them a second time.

pydantic spends about a microsecond building each :class:`~checkweigh.core.Step` (most of it
the model machinery, not the checks), which made it most of the time of reading a recorded
case. msgspec decodes a line straight into the structs below, checking every type and
refusing unknown keys as it goes; the case and its steps are then built the way
``model_construct`` builds a model, with the same values, the same fields set and in the same
field order as pydantic's validation gives.

The structs accept a subset of what :class:`~checkweigh.core.Case` accepts (never more):
only JSON types, numbers in their range, no conversation ``user``. A line they refuse is not
necessarily bad: :func:`fast_case` returns None and the caller validates it in full, which
accepts it or gives the one-line error naming the field. ``tests/suites/test_fast.py`` holds
the two paths to the same case, fields set included.
"""

from __future__ import annotations

from datetime import datetime
from operator import attrgetter
from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, UnsetType
from pydantic import BaseModel, TypeAdapter, ValidationError

from ..core import Case, Step, parsed_arguments

_FLOAT_MAX = 1.7976931348623157e308
# a latency: a finite number >= 0 (Case and Step refuse infinity and NaN); an integer becomes
# a float, as pydantic makes it
_Latency = Annotated[float, msgspec.Meta(ge=0, le=_FLOAT_MAX)] | None | UnsetType


# UNSET marks a key the line does not have: pydantic counts a key given as null among the
# fields set, and leaves out one not given
class _Step(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    kind: Literal["user", "assistant", "tool_call", "system", "event"]
    content: str | UnsetType | None = UNSET
    name: str | UnsetType | None = UNSET
    # text is JSON text (parsed as Step parses it) or kept as given
    arguments: dict[str, Any] | str | UnsetType | None = UNSET
    result: Any = UNSET
    error: str | UnsetType | None = UNSET
    id: str | UnsetType | None = UNSET
    parent_id: str | UnsetType | None = UNSET
    attributes: dict[str, Any] | UnsetType = UNSET
    # text is parsed by pydantic's own datetime validator, as the field parses it
    timestamp: str | UnsetType | None = UNSET
    latency_ms: _Latency = UNSET


class _Case(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    id: Annotated[str, msgspec.Meta(min_length=1)]
    input: Any = UNSET
    trace: list[_Step] | UnsetType = UNSET
    final_state: dict[str, Any] | UnsetType = UNSET
    ground_truth: Any = UNSET
    metadata: dict[str, Any] | UnsetType = UNSET
    latency_ms: _Latency = UNSET
    # a conversation's user (scripted or simulated): left to the full validation
    user: UnsetType | None = UNSET
    error: str | UnsetType | None = UNSET


_decode = msgspec.json.Decoder(_Case).decode
# the given fields of each step, UNSET ones left out (free JSON values are plain data already)
_given = msgspec.to_builtins
_datetime = TypeAdapter(datetime).validate_python
# every field of a step in pydantic's order with its default (kind has none: it is always
# given); attributes, whose default is a new dict per step, gets its own in _steps
_STEP_DEFAULTS: dict[str, Any] = {
    name: field.get_default(call_default_factory=True) for name, field in Step.model_fields.items()
}
_CASE_FIELDS = set(Case.model_fields)
_result_of = attrgetter("result")
_LIFT_RESULTS_FROM = 400
"""Bytes of the line per step from which the steps' results are lifted out (see _steps):
recorded scheduling runs have ~250, airline conversations with long tool results ~650."""
# the slots pydantic's own construction fills: setting them through their descriptors skips
# BaseModel.__setattr__ (which refuses frozen models) and a lookup by name
_new = object.__new__
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def fast_case(raw: bytes) -> Case | None:
    """The case on a JSONL line, or None when the line is outside what the fast path
    vouches for (not JSON, not a valid case, or valid in a way only the full validation
    reads): the caller then validates it in full."""
    try:
        parsed = _decode(raw)
    except (ValueError, RecursionError):  # not JSON, or not a case the structs accept
        return None
    try:
        return _built(parsed, len(raw))
    except (ValidationError, RecursionError):  # a timestamp that is no time; a result too
        return None  # deep to convert from where this runs


def _built(parsed: _Case, size: int) -> Case:
    """The case the struct holds, as pydantic builds it (``size``: the line's length)."""
    # recorded cases give most fields: the ones not given are taken out of the fields set
    fields = _CASE_FIELDS.copy()
    value = parsed.input
    if value is UNSET:
        value = None
        fields.discard("input")
    trace: Any = parsed.trace
    if trace is UNSET:
        trace = []
        fields.discard("trace")
    else:
        # bytes per step: a cheap sign of steps carrying big values (see _steps)
        trace = _steps(trace, size > _LIFT_RESULTS_FROM * len(trace))
    final_state: Any = parsed.final_state
    if final_state is UNSET:
        final_state = {}
        fields.discard("final_state")
    ground_truth = parsed.ground_truth
    if ground_truth is UNSET:
        ground_truth = None
        fields.discard("ground_truth")
    metadata: Any = parsed.metadata
    if metadata is UNSET:
        metadata = {}
        fields.discard("metadata")
    latency = parsed.latency_ms
    if latency is UNSET:
        latency = None
        fields.discard("latency_ms")
    if parsed.user is UNSET:  # else given as null
        fields.discard("user")
    error = parsed.error
    if error is UNSET:
        error = None
        fields.discard("error")
    case: Case = _new(Case)
    _set_dict(
        case,
        {
            "id": parsed.id,
            "input": value,
            "trace": trace,
            "final_state": final_state,
            "ground_truth": ground_truth,
            "metadata": metadata,
            "latency_ms": latency,
            "user": None,
            "error": error,
        },
    )
    _set_fields(case, fields)
    _set_extra(case, None)
    _set_private(case, None)
    return case


def _steps(parsed: list[_Step], lift_results: bool) -> list[Step]:
    """The steps, built. ``lift_results``: the results are taken out of the structs before
    the given fields are converted to dicts, which would copy them (on steps carrying big
    tool results, that copy costs more than pydantic's building of the steps), and put back
    into the steps built."""
    if lift_results:
        results = list(map(_result_of, parsed))
        for item in parsed:
            item.result = UNSET
    steps: list[Step] = []
    append = steps.append
    # one call for the whole trace: the steps' given fields as dicts
    for given in _given(parsed):
        values = {**_STEP_DEFAULTS, "attributes": {}, **given}
        arguments = values["arguments"]
        if arguments.__class__ is str:
            values["arguments"] = parsed_arguments(arguments)
        if values["timestamp"] is not None:
            values["timestamp"] = _datetime(values["timestamp"])
        step: Step = _new(Step)
        _set_dict(step, values)
        _set_fields(step, set(given))
        _set_extra(step, None)
        _set_private(step, None)
        append(step)
    if lift_results:
        for step, result in zip(steps, results, strict=True):
            if result is not UNSET:
                step.__dict__["result"] = result
                step.__pydantic_fields_set__.add("result")
    return steps
