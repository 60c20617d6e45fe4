"""OTLP/JSON log records: the GenAI events an instrumentation writes as logs.

The official OpenAI instrumentation (``opentelemetry-instrumentation-openai-v2``), on its
default conventions, puts message content in log events, not on its spans:
``gen_ai.system.message``, ``gen_ai.user.message``, ``gen_ai.assistant.message``,
``gen_ai.tool.message`` and ``gen_ai.choice``, each with the message as its body and the trace
and span ids of the chat span it belongs to; on the newer conventions, one
``gen_ai.client.inference.operation.details`` event holds ``gen_ai.input.messages`` and
``gen_ai.output.messages`` as attributes. A record is an ``ExportLogsServiceRequest``
(``{"resourceLogs": [...]}``); each GenAI log becomes an :class:`~._otlp.Event` of the span it
names, read there as a span event is.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ._otlp import Event, SpanError, decode_attributes, decode_id, decode_nanos, decode_value


@dataclass(slots=True)
class LogEvent:
    """A GenAI log record: the trace and span it names, and the event it carries."""

    trace_id: str
    span_id: str | None
    event: Event
    line: int | None


def request_logs(record: dict[str, Any], line: int | None) -> Iterator[LogEvent | SpanError]:
    """The GenAI log events of an export request's ``resourceLogs``, in file order; other
    logs (an application's own) are skipped, and a bad log record is yielded as its error."""
    for rl in record.get("resourceLogs") or ():
        scopes = (
            rl.get("scopeLogs", rl.get("instrumentationLibraryLogs"))
            if isinstance(rl, dict)
            else None
        )
        if not isinstance(scopes, list):
            yield SpanError("a resourceLogs item has no 'scopeLogs' list")
            continue
        for scope in scopes:
            logs = scope.get("logRecords") if isinstance(scope, dict) else None
            if not isinstance(logs, list):
                yield SpanError("a scopeLogs item has no 'logRecords' list")
                continue
            for data in logs:
                try:
                    found = _log(data, line)
                except SpanError as exc:
                    yield exc
                    continue
                if found is not None:
                    yield found


def _log(data: Any, line: int | None) -> LogEvent | None:
    if not isinstance(data, dict):
        raise SpanError(f"a log record is {type(data).__name__}; expected an object")
    attributes = decode_attributes(data.get("attributes"))
    name = data.get("eventName") or attributes.get("event.name")
    if not isinstance(name, str) or not name.startswith("gen_ai."):
        return None  # not a GenAI event
    where = f"log record {name}"
    trace = data.get("traceId")
    if not trace:
        raise SpanError(f"{where}: traceId is missing; expected the trace of its chat span")
    try:
        trace_id = decode_id(trace, "traceId", 16)
        span = data.get("spanId")
        span_id = decode_id(span, "spanId", 8) if span else None
        # a log without its own time (0) has the time the SDK observed it
        times = [data.get(k) for k in ("timeUnixNano", "observedTimeUnixNano")]
        time = next((t for t in times if t not in (None, "0", 0)), None)
        time_ns = decode_nanos(time, "timeUnixNano") if time is not None else None
        body = decode_value(data["body"]) if data.get("body") is not None else None
    except SpanError as exc:
        raise SpanError(f"{where}: {exc}") from None
    fields = body if isinstance(body, dict) else ({"content": body} if body is not None else {})
    # the body is the message; the record's own attributes (gen_ai.system...) add to it
    merged = {k: v for k, v in attributes.items() if k != "event.name"} | fields
    return LogEvent(trace_id, span_id, Event(name, time_ns, merged), line)
