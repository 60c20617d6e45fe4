"""One OTLP export request split by trace, for a receiver that keeps spans as they arrive.

A request (``ExportTraceServiceRequest`` or ``ExportLogsServiceRequest`` in OTLP/JSON, or
protobuf's JSON mapping of one) holds the spans of many traces, grouped by resource and scope.
:func:`split_request` gives, per trace, an export request of the same shape that holds only that
trace's spans (or GenAI log records), its resource and scope kept: what a store keeps per trace,
and what :func:`trace_case` later reads back with the file importer's own code
(:func:`~._otlp.request_spans`, :func:`~._otlp_logs.request_logs`, ``build_case``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

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
        _split_spans(split, rs)
    for rl in doc.get("resourceLogs") or ():
        _split_logs(split, rl)
    return split


def _split_spans(split: SplitRequest, rs: Any) -> None:
    scopes = (
        rs.get("scopeSpans", rs.get("instrumentationLibrarySpans"))
        if isinstance(rs, dict)
        else None
    )
    if not isinstance(scopes, list):
        split.reject("a resourceSpans item has no 'scopeSpans' list")
        return
    resource = rs.get("resource")
    for ss in scopes:
        spans = ss.get("spans") if isinstance(ss, dict) else None
        if not isinstance(spans, list):
            split.reject("a scopeSpans item has no 'spans' list")
            continue
        # per trace: this scope's spans of that trace, in a copy of the resource and scope
        mine: dict[str, list[Any]] = {}
        for data in spans:
            try:
                span = decode_span(data, {}, None)
            except SpanError as exc:
                split.reject(str(exc))
                continue
            mine.setdefault(span.trace_id, []).append(data)
            chunk = _group(split, span.trace_id, "resourceSpans")
            chunk.spans += 1
            chunk.rooted = chunk.rooted or span.parent_id is None
        for trace_id, kept in mine.items():
            scope = {k: v for k, v in ss.items() if k != "spans"}
            item = {"resource": resource or {}, "scopeSpans": [{**scope, "spans": kept}]}
            split.chunks[trace_id].request["resourceSpans"].append(item)


def _split_logs(split: SplitRequest, rl: Any) -> None:
    scopes = (
        rl.get("scopeLogs", rl.get("instrumentationLibraryLogs")) if isinstance(rl, dict) else None
    )
    if not isinstance(scopes, list):
        split.reject("a resourceLogs item has no 'scopeLogs' list")
        return
    resource = rl.get("resource")
    for sl in scopes:
        records = sl.get("logRecords") if isinstance(sl, dict) else None
        if not isinstance(records, list):
            split.reject("a scopeLogs item has no 'logRecords' list")
            continue
        mine: dict[str, list[Any]] = {}
        for data in records:
            one = {"resourceLogs": [{"scopeLogs": [{"logRecords": [data]}]}]}
            found = next(request_logs(one, None), None)
            if found is None:
                split.ignored_logs += 1
            elif isinstance(found, SpanError):
                split.reject(str(found))
            else:
                mine.setdefault(found.trace_id, []).append(data)
                _group(split, found.trace_id, "resourceLogs").logs += 1
        for trace_id, kept in mine.items():
            scope = {k: v for k, v in sl.items() if k != "logRecords"}
            item = {"resource": resource or {}, "scopeLogs": [{**scope, "logRecords": kept}]}
            split.chunks[trace_id].request["resourceLogs"].append(item)


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
