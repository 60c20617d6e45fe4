"""A booking agent's traces made with the real OpenTelemetry SDK, as an instrumented agent sends
them: a root ``invoke_agent`` span, ``chat`` spans carrying the GenAI messages and token usage,
and ``execute_tool`` spans, 8 to 12 spans a trace. For the live-scoring tests and
``benchmarks/bench_live.py``, which send them to ``checkweigh serve`` with the SDK's OTLP/HTTP
exporter.

A trace's spans can be spread over several tracer providers (each with its own exporter, so
its own server): the trace is one trace, its parts arrive at different receivers.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.trace import SpanKind, Tracer

SERVICE = "booking-agent"
MODEL = "gpt-4o-mini"
PEOPLE = ("Alice", "Bob", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hana")
ROOMS = ("Atlas", "Birch", "Cedar", "Delta")

SUITE = """\
name: booking-live
cases: cases.jsonl
checks:
  checked_availability:
    type: tool_called
    step: {{name: check_availability}}
  booked:
    type: tool_called
    step: {{name: book_meeting}}
  answered:
    type: word_count
    path: output
    min: 5
{extra}rubrics:
  booking:
    weights: {{checked_availability: 1.0, booked: 1.0, answered: 0.5{extra_weight}}}
"""
"""The suite the monitors score these traces with (``{extra}``: more checks, YAML, indented
like the others; ``{extra_weight}``: their weights, ``, name: w``)."""


def suite_text(extra: str = "", extra_weight: str = "") -> str:
    """The booking suite, with extra checks (see :data:`SUITE`)."""
    return SUITE.format(extra=extra, extra_weight=extra_weight)


def monitor_text(name: str = "booking", suite: str = "suite.yaml", window: str = "1h") -> str:
    """A monitor of the booking agent's traces."""
    return f"name: {name}\nsuite: {suite}\nwindow: {window}\nfilter:\n  service: {SERVICE}\n"


def provider(exporter: SpanExporter, *, queue: int = 8192, delay_ms: int = 200) -> TracerProvider:
    """A tracer provider of the booking agent exporting through ``exporter`` in batches (the
    SDK's BatchSpanProcessor, its queue made large enough that a burst is not dropped)."""
    made = TracerProvider(resource=Resource.create({"service.name": SERVICE}))
    made.add_span_processor(
        BatchSpanProcessor(
            exporter,
            max_queue_size=queue,
            schedule_delay_millis=delay_ms,
            max_export_batch_size=512,
        )
    )
    return made


def _text(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    part = {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}
    return {"role": "assistant", "parts": [part]}


def _answer(call_id: str, result: Any) -> dict[str, Any]:
    part = {"type": "tool_call_response", "id": call_id, "response": result}
    return {"role": "tool", "parts": [part]}


def plan(n: int) -> list[tuple[str, dict[str, Any], Any]]:
    """The tool calls of trace ``n`` (name, arguments, result): 3 to 5, deterministic. One
    trace in five books without looking at the calendar first, one in seven never books."""
    who = [PEOPLE[n % len(PEOPLE)], PEOPLE[(n * 3 + 1) % len(PEOPLE)]]
    day = f"2026-03-{1 + n % 28:02d}"
    slot = f"{9 + n % 8}:00"
    calls: list[tuple[str, dict[str, Any], Any]] = [
        ("lookup_people", {"names": who}, {"found": who, "timezone": "Europe/Berlin"}),
        ("get_preferences", {"people": who}, {"length_min": 30, "avoid": ["12:00"]}),
    ]
    if n % 5 != 0:
        free = {"free": [slot, f"{10 + n % 7}:30"], "busy": [f"{8 + n % 3}:00"]}
        calls.append(("check_availability", {"people": who, "date": day}, free))
    calls.append(("find_room", {"date": day, "time": slot, "size": 2}, {"room": ROOMS[n % 4]}))
    if n % 7 != 0:
        calls.append(
            (
                "book_meeting",
                {"people": who, "date": day, "time": slot, "room": ROOMS[n % 4]},
                {"booking_id": f"BK-{n:06d}", "status": "confirmed"},
            )
        )
    return calls


def emit_trace(tracers: Sequence[Tracer], n: int, start_ns: int) -> str:
    """Emit trace ``n`` (its spans timed from ``start_ns``), its spans dealt out over
    ``tracers`` in turn (the root with the first); return its trace id (32 hex digits)."""
    calls = plan(n)
    request = f"Book a 30 minute sync with {calls[0][1]['names'][0]} and {calls[0][1]['names'][1]}"
    system = "You are a scheduling assistant. Check availability before booking."
    root = tracers[0].start_span(
        f"invoke_agent {SERVICE}",
        kind=SpanKind.INTERNAL,
        start_time=start_ns,
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": SERVICE,
            "gen_ai.conversation.id": f"conv-{n:06d}",
        },
    )
    parent = trace.set_span_in_context(root)
    history: list[dict[str, Any]] = [_text("user", request)]
    at = start_ns + 1_000_000
    dealt = 1

    def tracer() -> Tracer:
        nonlocal dealt
        dealt += 1
        return tracers[(dealt - 1) % len(tracers)]

    def chat(output: dict[str, Any], tokens: int) -> None:
        nonlocal at
        span = tracer().start_span(
            f"chat {MODEL}",
            context=parent,
            kind=SpanKind.CLIENT,
            start_time=at,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "openai",
                "gen_ai.request.model": MODEL,
                "gen_ai.response.model": f"{MODEL}-2024-07-18",
                "gen_ai.usage.input_tokens": 350 + 120 * len(history),
                "gen_ai.usage.output_tokens": tokens,
                "gen_ai.system_instructions": json.dumps([{"type": "text", "content": system}]),
                "gen_ai.input.messages": json.dumps(history),
                "gen_ai.output.messages": json.dumps([output]),
            },
        )
        at += 400_000_000 + (n % 13) * 10_000_000
        span.end(end_time=at)
        history.append(output)

    for i, (name, arguments, result) in enumerate(calls):
        call_id = f"call_{n:06d}_{i}"
        chat(_call(call_id, name, arguments), 24)
        tool = tracer().start_span(
            f"execute_tool {name}",
            context=parent,
            kind=SpanKind.INTERNAL,
            start_time=at,
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "gen_ai.tool.call.id": call_id,
                "gen_ai.tool.call.arguments": json.dumps(arguments),
                "gen_ai.tool.call.result": json.dumps(result),
            },
        )
        at += 30_000_000
        tool.end(end_time=at)
        history.append(_answer(call_id, result))
    booked = calls[-1][0] == "book_meeting"
    final = (
        f"Booked: {calls[-1][2]['booking_id']} on {calls[-1][1]['date']} at {calls[-1][1]['time']}."
        if booked
        else "I could not book it: nobody confirmed a time."
    )
    chat(_text("assistant", final), 18)
    root.end(end_time=at + 1_000_000)
    return format(root.get_span_context().trace_id, "032x")


def spans_of(n: int) -> int:
    """How many spans trace ``n`` has: its root, a chat and a tool span per call, a last chat."""
    return 2 + 2 * len(plan(n))


def export_body(numbers: Sequence[int], start_ns: int) -> tuple[bytes, dict[str, int]]:
    """One export request (protobuf, as the SDK's OTLP/HTTP exporter sends it) holding
    traces ``numbers`` (the first starting at ``start_ns``, each a minute later); and trace
    id -> spans."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    kept = InMemorySpanExporter()
    made = TracerProvider(resource=Resource.create({"service.name": SERVICE}))
    made.add_span_processor(SimpleSpanProcessor(kept))
    tracer = made.get_tracer("otel_agent")
    sent = {
        emit_trace([tracer], n, start_ns + i * 60_000_000_000): spans_of(n)
        for i, n in enumerate(numbers)
    }
    made.shutdown()
    return encode_spans(kept.get_finished_spans()).SerializeToString(), sent
