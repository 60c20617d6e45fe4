"""A meeting-booking agent on the OpenAI API, traced with OpenTelemetry.

Written as an application team would write one: the official ``openai`` SDK in a tool-calling
loop (``check_availability``, then ``book_meeting``), the official GenAI instrumentation
(``opentelemetry-instrumentation-openai-v2``) for the model calls, and spans of its own for
the rest, named by the GenAI semantic conventions: one ``invoke_agent booking`` span per user
request, around the chat spans and one ``execute_tool <name>`` span per tool call.

Configured by the standard variables only:

- ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``..._TRACES_ENDPOINT`` / ``..._LOGS_ENDPOINT``),
  ``OTEL_EXPORTER_OTLP_HEADERS`` (``Authorization=Bearer%20<token>``),
  ``OTEL_EXPORTER_OTLP_COMPRESSION``, ``OTEL_EXPORTER_OTLP_PROTOCOL`` (``http/protobuf``, the
  default, or ``http/json``: the Python SDK has no JSON exporter, so ``otlp_json`` stands in),
  ``OTEL_SERVICE_NAME`` (default ``booking-agent``), ``OTEL_RESOURCE_ATTRIBUTES``,
  ``OTEL_BSP_*`` / ``OTEL_BLRP_*`` (batching);
- ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`` to send what was said: the
  instrumentation then writes the messages as log events, exported beside the spans; the tool
  spans carry their arguments and results;
- ``OPENAI_BASE_URL``, ``OPENAI_API_KEY``, ``OPENAI_MODEL`` (default ``gpt-4o-mini``).

Usage: ``python agent.py [--prompt TEXT ...] [--prompts FILE] [--requests N]
[--concurrency N]``. Each request's outcome is printed as a JSON line (its trace id, the
prompt, the reply or the error), in the order of the prompts; the exit status is 1 when any
request failed. The telemetry is flushed before the program exits.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import openai
from calendar_tools import TOOLS, Calendar, ToolError
from opentelemetry import trace
from opentelemetry._logs import set_logger_provider
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer

SYSTEM = (
    "You book meetings for a team of four: Alice, Bob, Carol and Dan. Always check "
    "availability before booking, book only a slot where everyone is free, and book at most "
    "once. Answer in one or two polite sentences that state what was booked, or why nothing "
    "was and what the user can do instead."
)
PROMPTS = [
    "Book a 30 minute sync with Alice and Bob on 2025-03-04 at 10:00.",
    "Set up a one hour design review with Carol and Dan on 2025-03-05 at 14:00.",
    "Book Alice and Bob for 45 minutes on 2025-03-04 at 14:00.",
    "Put a 15 minute check-in with Dan on 2025-03-07 at 09:30 in the calendar.",
]
"""The requests sent when none is given."""
MAX_MODEL_CALLS = 6
"""Model calls per request before the agent gives up (a model that never stops calling)."""


@dataclass
class Outcome:
    """What one request came to."""

    trace_id: str
    prompt: str
    reply: str | None = None
    error: str | None = None


def capture_content() -> bool:
    """Whether content capture is on, as the instrumentation reads the same variable."""
    value = os.environ.get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "")
    return value.strip().lower() in ("true", "span_only", "span_and_event")


def setup_telemetry() -> tuple[TracerProvider, LoggerProvider]:
    """The providers, their OTLP exporters and the OpenAI instrumentation."""
    protocol = (
        os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        or "http/protobuf"
    ).strip()
    if protocol == "http/protobuf":
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        span_exporter: Any = OTLPSpanExporter()
        log_exporter: Any = OTLPLogExporter()
    elif protocol == "http/json":
        from otlp_json import JsonLogExporter, JsonSpanExporter

        span_exporter, log_exporter = JsonSpanExporter(), JsonLogExporter()
    else:
        sys.exit(
            f"OTEL_EXPORTER_OTLP_PROTOCOL: expected http/protobuf or http/json, got {protocol!r}"
        )
    service = os.environ.get("OTEL_SERVICE_NAME") or "booking-agent"
    resource = Resource.create({"service.name": service})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(BatchSpanProcessor(span_exporter))
    trace.set_tracer_provider(tracer_provider)
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(BatchLogRecordProcessor(log_exporter))
    set_logger_provider(logger_provider)
    OpenAIInstrumentor().instrument(
        tracer_provider=tracer_provider, logger_provider=logger_provider
    )
    return tracer_provider, logger_provider


def run_tool(tracer: Tracer, calendar: Calendar, call: Any) -> dict[str, Any]:
    """Run one tool call in its ``execute_tool`` span; the ``tool`` message that answers it."""
    name = call.function.name
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": call.id,
        "gen_ai.tool.type": "function",
    }
    with tracer.start_as_current_span(
        f"execute_tool {name}", kind=SpanKind.INTERNAL, attributes=attributes
    ) as span:
        if capture_content():
            span.set_attribute("gen_ai.tool.call.arguments", call.function.arguments)
        try:
            arguments = json.loads(call.function.arguments or "{}")
            if not isinstance(arguments, dict):
                raise ToolError("arguments: expected a JSON object")
            result: dict[str, Any] = calendar.run(name, arguments)
        except (ToolError, ValueError) as exc:
            # the model hears what went wrong and may recover; the span records the failure
            span.set_status(Status(StatusCode.ERROR, str(exc)))
            span.set_attribute("error.type", type(exc).__name__)
            result = {"error": str(exc)}
        text = json.dumps(result)
        if capture_content():
            span.set_attribute("gen_ai.tool.call.result", text)
    return {"role": "tool", "tool_call_id": call.id, "content": text}


def handle(client: openai.OpenAI, tracer: Tracer, calendar: Calendar, prompt: str) -> Outcome:
    """Answer one user request: call the model and its tools until it replies."""
    model = os.environ.get("OPENAI_MODEL") or "gpt-4o-mini"
    attributes = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "booking",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": model,
        "gen_ai.conversation.id": str(uuid.uuid4()),
    }
    with tracer.start_as_current_span(
        "invoke_agent booking", kind=SpanKind.INTERNAL, attributes=attributes
    ) as span:
        outcome = Outcome(f"{span.get_span_context().trace_id:032x}", prompt)
        messages: list[Any] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": prompt},
        ]
        try:
            for _ in range(MAX_MODEL_CALLS):
                answer = client.chat.completions.create(model=model, messages=messages, tools=TOOLS)
                message = answer.choices[0].message
                calls = [c for c in message.tool_calls or () if c.type == "function"]
                if not calls:
                    outcome.reply = message.content or ""
                    return outcome
                messages.append(
                    {
                        "role": "assistant",
                        "content": message.content,
                        "tool_calls": [c.model_dump(exclude_none=True) for c in calls],
                    }
                )
                messages.extend(run_tool(tracer, calendar, call) for call in calls)
            outcome.error = f"no reply after {MAX_MODEL_CALLS} model calls"
        except openai.OpenAIError as exc:
            span.record_exception(exc)
            outcome.error = f"{type(exc).__name__}: {exc}"
        span.set_status(Status(StatusCode.ERROR, outcome.error))
        span.set_attribute("error.type", "agent_error")
        return outcome


def prompts(args: argparse.Namespace) -> list[str]:
    """The requests to send: the given ones (or the built-in), cycled to ``--requests``."""
    given = list(args.prompt or ())
    if args.prompts is not None:
        lines = Path(args.prompts).read_text(encoding="utf-8").splitlines()
        given += [line.strip() for line in lines if line.strip()]
    chosen = given or PROMPTS
    n = args.requests if args.requests is not None else len(chosen)
    return [chosen[i % len(chosen)] for i in range(n)]


def main() -> int:
    """Send the requests and print their outcomes; 1 when any failed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompt", action="append", help="a request (repeatable)")
    parser.add_argument("--prompts", help="a file of requests, one a line")
    parser.add_argument("--requests", type=int, help="how many requests (prompts are cycled)")
    parser.add_argument("--concurrency", type=int, default=1, help="requests at once")
    args = parser.parse_args()
    if args.concurrency < 1 or (args.requests is not None and args.requests < 0):
        parser.error("--concurrency must be >= 1 and --requests >= 0")
    tracer_provider, logger_provider = setup_telemetry()
    try:
        tracer = tracer_provider.get_tracer("booking-agent", "1.0")
        calendar = Calendar.team()
        client = openai.OpenAI(max_retries=1, timeout=30)
        with ThreadPoolExecutor(args.concurrency) as pool:
            outcomes = list(pool.map(lambda p: handle(client, tracer, calendar, p), prompts(args)))
        client.close()
        for outcome in outcomes:
            print(json.dumps(asdict(outcome)), flush=True)
    finally:
        # the batches still queued go out now: without this the last requests' spans are lost
        tracer_provider.shutdown()
        logger_provider.shutdown()
    return 1 if any(o.error is not None for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
