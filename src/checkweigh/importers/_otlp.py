"""OTLP/JSON decoding: spans as the OpenTelemetry Collector's file exporter writes them.

A record is an ``ExportTraceServiceRequest`` (``{"resourceSpans": [...]}``). Attribute values
are typed (``{"stringValue": ...}``, ``{"intValue": "42"}`` with the integer as a string, ...)
and become plain Python values; ids are hex (OTLP/JSON) or base64 (protobuf's JSON mapping,
which some exporters write) and become lowercase hex; times are nanoseconds since the epoch,
as strings or numbers.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic_core import from_json

from ..errors import CheckweighError

_HEX = re.compile(r"[0-9a-fA-F]+")
_MAX_NANOS = 2**64
"""OTLP times are fixed64: anything larger is not a time (and no date can hold it)."""
_ERROR_STATUS = (2, "2", "STATUS_CODE_ERROR", "ERROR")
_REQUESTS = ("resourceSpans", "resourceLogs")
"""The export requests a record may be: traces, or logs (read by ``_otlp_logs``)."""


class SpanError(CheckweighError, ValueError):
    """A span (or the request around it) that does not have the OTLP shape."""


@dataclass(slots=True)
class Event:
    """A span event: its name, time and attributes."""

    name: str
    time_ns: int | None
    attributes: dict[str, Any]


@dataclass(slots=True)
class Span:
    """The parts of an OTLP span that make steps, decoded."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    events: list[Event] = field(default_factory=list)
    error: str | None = None
    """The status message when the span's status code is ERROR (``error`` without one)."""
    resource: Mapping[str, Any] = field(default_factory=dict)
    line: int | None = None
    """The file line the span came from, to order spans that start at the same nanosecond."""

    @property
    def duration_ms(self) -> float:
        """The span's duration in milliseconds (0 when it ends before it starts)."""
        return max(self.end_ns - self.start_ns, 0) / 1e6


def decode_value(value: Any) -> Any:
    """A typed OTLP ``AnyValue`` as a plain value (a kvlist becomes a dict).

    Raises:
        SpanError: the value is not an AnyValue.
    """
    if not isinstance(value, dict):
        raise SpanError(f"attribute value is {type(value).__name__}; expected an AnyValue object")
    if not value:
        return None
    if len(value) != 1:
        raise SpanError(f"attribute value has keys {sorted(value)}; expected one typed value")
    kind, raw = next(iter(value.items()))
    if kind == "stringValue" and isinstance(raw, str):
        return raw
    if kind == "boolValue" and isinstance(raw, bool):
        return raw
    if kind == "intValue" and not isinstance(raw, bool):
        # int64 is a string in OTLP/JSON; some writers give a number
        try:
            return int(raw)
        except (TypeError, ValueError):
            raise SpanError(f"intValue {raw!r} is not an integer") from None
    if kind == "doubleValue" and not isinstance(raw, bool):
        if isinstance(raw, int | float):
            return float(raw)
        if isinstance(raw, str) and raw in ("NaN", "Infinity", "-Infinity"):
            return float(raw.replace("Infinity", "inf"))
        raise SpanError(f"doubleValue {raw!r} is not a number")
    if kind == "arrayValue" and isinstance(raw, dict):
        values = raw.get("values", [])
        if not isinstance(values, list):
            raise SpanError("arrayValue.values is not a list")
        return [decode_value(v) for v in values]
    if kind == "kvlistValue" and isinstance(raw, dict):
        return decode_attributes(raw.get("values", []))
    if kind == "bytesValue" and isinstance(raw, str):
        return raw  # base64 text: kept as given, bytes are not JSON
    raise SpanError(f"attribute value {kind!r} holds {type(raw).__name__}; not an OTLP AnyValue")


def decode_attributes(items: Any) -> dict[str, Any]:
    """An OTLP attribute list (``[{"key": ..., "value": {...}}]``) as a dict.

    Raises:
        SpanError: not a list of key/value objects, or a value is not an AnyValue.
    """
    if items is None:
        return {}
    if not isinstance(items, list):
        raise SpanError(f"attributes is {type(items).__name__}; expected a list of key/value")
    out: dict[str, Any] = {}
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("key"), str):
            raise SpanError("an attribute has no string 'key'")
        key = item["key"]
        try:
            out[key] = decode_value(item.get("value", {}))
        except SpanError as exc:
            raise SpanError(f"attribute {key!r}: {exc}") from None
    return out


def decode_id(value: Any, what: str, size: int) -> str:
    """A trace or span id as lowercase hex, from hex or base64 of ``size`` bytes.

    Raises:
        SpanError: missing, empty, all zeros or neither hex nor base64 of the right size.
    """
    if not isinstance(value, str) or not value:
        raise SpanError(f"{what} is missing; expected {size * 2} hex digits")
    if len(value) == size * 2 and _HEX.fullmatch(value):
        hexid = value.lower()
    else:
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raw = b""
        if len(raw) != size:
            raise SpanError(f"{what} {value[:40]!r} is not {size * 2} hex digits (nor base64)")
        hexid = raw.hex()
    if hexid.strip("0") == "":
        raise SpanError(f"{what} is all zeros (invalid)")
    return hexid


def decode_nanos(value: Any, what: str) -> int:
    """A ``*UnixNano`` time (a string or a number) as an int.

    Raises:
        SpanError: missing or not a whole number.
    """
    if isinstance(value, bool) or value is None:
        raise SpanError(f"{what} is missing; expected nanoseconds since the epoch")
    text = value.strip() if isinstance(value, str) else ""
    if isinstance(value, int):
        nanos = value
    elif (isinstance(value, float) and value.is_integer()) or (text.isascii() and text.isdigit()):
        nanos = int(value)
    else:
        raise SpanError(f"{what} {value!r} is not a whole number of nanoseconds"[:200])
    if not 0 <= nanos < _MAX_NANOS:
        raise SpanError(f"{what} {nanos} is out of range (an unsigned 64-bit count)"[:200])
    return nanos


def _status_error(status: Any, attributes: dict[str, Any], events: list[Event]) -> str | None:
    """The status message of an ERROR span; without one, its exception's message, else its
    ``error.type``, else ``error``."""
    if not isinstance(status, dict) or status.get("code") not in _ERROR_STATUS:
        return None
    message = status.get("message")
    if isinstance(message, str) and message:
        return message
    for event in events:
        text = event.attributes.get("exception.message") if event.name == "exception" else None
        if isinstance(text, str) and text:
            return text
    kind = attributes.get("error.type")
    return kind if isinstance(kind, str) and kind else "error"


def decode_span(data: Any, resource: Mapping[str, Any], line: int | None) -> Span:
    """One OTLP span.

    Raises:
        SpanError: a field is missing or has the wrong type.
    """
    if not isinstance(data, dict):
        raise SpanError(f"a span is {type(data).__name__}; expected an object")
    trace_id = decode_id(data.get("traceId"), "traceId", 16)
    span_id = decode_id(data.get("spanId"), "spanId", 8)
    parent = data.get("parentSpanId")
    parent_id = decode_id(parent, "parentSpanId", 8) if parent else None
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise SpanError(f"span {span_id}: 'name' is missing; expected the operation's name")
    try:
        start = decode_nanos(data.get("startTimeUnixNano"), "startTimeUnixNano")
        end = decode_nanos(data.get("endTimeUnixNano"), "endTimeUnixNano")
        attributes = decode_attributes(data.get("attributes"))
        events = [_decode_event(e) for e in data.get("events") or ()]
    except SpanError as exc:
        raise SpanError(f"span {span_id} ({name}): {exc}") from None
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_id=parent_id,
        name=name,
        start_ns=start,
        end_ns=end,
        attributes=attributes,
        events=events,
        error=_status_error(data.get("status"), attributes, events),
        resource=resource,
        line=line,
    )


def _decode_event(data: Any) -> Event:
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        raise SpanError("an event has no string 'name'")
    time = data.get("timeUnixNano")
    return Event(
        name=data["name"],
        time_ns=decode_nanos(time, "event timeUnixNano") if time is not None else None,
        attributes=decode_attributes(data.get("attributes")),
    )


def request_spans(record: Any, line: int | None) -> Iterator[Span | SpanError]:
    """The spans of one export request, in file order; a bad span is yielded as its error
    (so one bad span does not lose its neighbours). A logs request has no span.

    Raises:
        SpanError: the record is not an export request at all.
    """
    spans, logs = (record.get(k) if isinstance(record, dict) else None for k in _REQUESTS)
    if not isinstance(spans, list) and not isinstance(logs, list):
        got = type(record).__name__ if not isinstance(record, dict) else f"keys {sorted(record)}"
        raise SpanError(
            f"expected an OTLP export request with 'resourceSpans' or 'resourceLogs'; got {got}"[
                :200
            ]
        )
    for rs in spans if isinstance(spans, list) else ():
        if not isinstance(rs, dict):
            yield SpanError("a resourceSpans item is not an object")
            continue
        try:
            resource = decode_attributes((rs.get("resource") or {}).get("attributes"))
        except (SpanError, AttributeError) as exc:
            yield SpanError(f"resource attributes: {exc}")
            continue
        # older exporters wrote instrumentationLibrarySpans
        scopes = rs.get("scopeSpans", rs.get("instrumentationLibrarySpans")) or []
        if not isinstance(scopes, list):
            yield SpanError("scopeSpans is not a list")
            continue
        for ss in scopes:
            spans = ss.get("spans") if isinstance(ss, dict) else None
            if not isinstance(spans, list):
                yield SpanError("a scopeSpans item has no 'spans' list")
                continue
            for data in spans:
                try:
                    yield decode_span(data, resource, line)
                except SpanError as exc:
                    yield exc


def json_value(value: Any) -> Any:
    """A JSON-text attribute parsed (``gen_ai.input.messages`` and the like); other values,
    and text that is not JSON, as given."""
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            return from_json(value)
        except ValueError:
            return value
    return value
