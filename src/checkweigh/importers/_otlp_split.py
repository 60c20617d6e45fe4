"""One OTLP export request split by trace, for a receiver that keeps spans as they arrive.

A request (``ExportTraceServiceRequest`` or ``ExportLogsServiceRequest`` in OTLP/JSON, or
protobuf's JSON mapping of one) holds the spans of many traces, grouped by resource and scope.
:func:`split_request` gives, per trace, an export request of the same shape that holds only that
trace's spans (or GenAI log records), its resource and scope kept: what a store keeps per trace,
and what :func:`trace_case` later reads back with the file importer's own code
(:func:`~._otlp.request_spans`, :func:`~._otlp_logs.request_logs`, ``build_case``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..core import Case
from ._otel_steps import build_case
from ._otlp import Span, SpanError, decode_span, request_spans
from ._otlp_logs import LogEvent, request_logs


@dataclass(slots=True)
class TraceChunk:
    """The part of one request that belongs to one trace."""

    trace_id: str
    request: dict[str, Any]
    """An OTLP/JSON export request holding only this trace's items."""
    spans: int = 0
    logs: int = 0
    rooted: bool = False
    """Whether it holds the trace's root span (the one without a parent)."""


@dataclass(slots=True)
class SplitRequest:
    """A request split by trace, with what it held that no trace can use."""

    chunks: dict[str, TraceChunk] = field(default_factory=dict)
    rejected: int = 0
    """Spans or GenAI log records that are not valid OTLP (each named in ``errors``)."""
    errors: list[str] = field(default_factory=list)
    """The first few rejections' messages."""
    ignored_logs: int = 0
    """Log records that are not GenAI events (an application's own logs): not kept."""

    def reject(self, message: str) -> None:
        self.rejected += 1
        if len(self.errors) < 5:
            self.errors.append(message)


def _group(split: SplitRequest, trace_id: str, key: str) -> TraceChunk:
    chunk = split.chunks.get(trace_id)
    if chunk is None:
        chunk = split.chunks[trace_id] = TraceChunk(trace_id, {key: []})
    elif key not in chunk.request:
        chunk.request[key] = []
    return chunk


def split_request(doc: Any) -> SplitRequest:
    """The spans and GenAI log records of an OTLP/JSON export request, per trace.

    Raises:
        SpanError: ``doc`` is not an export request at all (no ``resourceSpans`` or
            ``resourceLogs`` list).
    """
    if not isinstance(doc, dict) or not (
        isinstance(doc.get("resourceSpans"), list) or isinstance(doc.get("resourceLogs"), list)
    ):
        got = f"keys {sorted(doc)[:6]}" if isinstance(doc, dict) else type(doc).__name__
        raise SpanError(
            f"expected an OTLP export request with 'resourceSpans' or 'resourceLogs'; got {got}"
        )
    split = SplitRequest()
    for rs in doc.get("resourceSpans") or ():
        _split_resource(split, rs, _SPANS, _span)
    for rl in doc.get("resourceLogs") or ():
        _split_resource(split, rl, _LOGS, _log)
    return split


class _Shape(NamedTuple):
    """Where a signal's items sit in an export request."""

    request: str  # resourceSpans
    scopes: str  # scopeSpans
    legacy: str  # instrumentationLibrarySpans (older exporters)
    items: str  # spans


_SPANS = _Shape("resourceSpans", "scopeSpans", "instrumentationLibrarySpans", "spans")
_LOGS = _Shape("resourceLogs", "scopeLogs", "instrumentationLibraryLogs", "logRecords")
Place = Callable[[SplitRequest, Any], "str | None"]
"""Counts one item in its trace's chunk and gives its trace id; None when it is not kept
(refused, or a log record that is no GenAI event)."""


def _span(split: SplitRequest, data: Any) -> str | None:
    try:
        span = decode_span(data, {}, None)
    except SpanError as exc:
        split.reject(str(exc))
        return None
    chunk = _group(split, span.trace_id, _SPANS.request)
    chunk.spans += 1
    chunk.rooted = chunk.rooted or span.parent_id is None
    return span.trace_id


def _log(split: SplitRequest, data: Any) -> str | None:
    one = {_LOGS.request: [{_LOGS.scopes: [{_LOGS.items: [data]}]}]}
    found = next(request_logs(one, None), None)
    if found is None:
        split.ignored_logs += 1
        return None
    if isinstance(found, SpanError):
        split.reject(str(found))
        return None
    _group(split, found.trace_id, _LOGS.request).logs += 1
    return found.trace_id


def _split_resource(split: SplitRequest, resource_item: Any, shape: _Shape, place: Place) -> None:
    """One ``resourceSpans`` (or ``resourceLogs``) item's items, each in its trace's chunk
    under a copy of its resource and scope."""
    scopes = (
        resource_item.get(shape.scopes, resource_item.get(shape.legacy))
        if isinstance(resource_item, dict)
        else None
    )
    if not isinstance(scopes, list):
        split.reject(f"a {shape.request} item has no '{shape.scopes}' list")
        return
    resource = resource_item.get("resource") or {}
    for scope in scopes:
        items = scope.get(shape.items) if isinstance(scope, dict) else None
        if not isinstance(items, list):
            split.reject(f"a {shape.scopes} item has no '{shape.items}' list")
            continue
        mine: dict[str, list[Any]] = {}
        for data in items:
            trace_id = place(split, data)
            if trace_id is not None:
                mine.setdefault(trace_id, []).append(data)
        rest = {k: v for k, v in scope.items() if k != shape.items}
        for trace_id, kept in mine.items():
            item = {"resource": resource, shape.scopes: [{**rest, shape.items: kept}]}
            split.chunks[trace_id].request[shape.request].append(item)


@dataclass(slots=True)
class TraceItems:
    """A trace's spans and GenAI log events, read back from its stored requests."""

    spans: list[Span] = field(default_factory=list)
    logs: list[LogEvent] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def trace_items(requests: Iterable[Any]) -> TraceItems:
    """The spans and GenAI log events of a trace's stored requests (in the order given), read
    by the file importer's own functions."""
    items = TraceItems()
    for line, request in enumerate(requests, 1):
        try:
            found = [*request_spans(request, line), *request_logs(request, line)]
        except SpanError as exc:
            items.errors.append(str(exc))
            continue
        for item in found:
            if isinstance(item, SpanError):
                items.errors.append(str(item))
            elif isinstance(item, Span):
                items.spans.append(item)
            else:
                items.logs.append(item)
    return items


def trace_case(
    trace_id: str, items: TraceItems, case_id_attribute: str = "checkweigh.case.id"
) -> Case | str:
    """The case a trace makes, as ``checkweigh import otel`` makes it, or why it makes none
    (no span, no GenAI span, a bad span).

    Raises:
        nothing: a trace that cannot be a case gives the reason as text.
    """
    if not items.spans:
        return "GenAI log events but no span"
    try:
        case = build_case(trace_id, items.spans, case_id_attribute, items.logs)
    except SpanError as exc:
        return f"trace {trace_id}: {exc}"
    if not case.trace:
        return "no GenAI span (not an agent's run)"
    return case
