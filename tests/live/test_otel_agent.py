"""What a real instrumented program sends is what checkweigh reads.

``examples/otel_agent/agent.py`` (the ``openai`` SDK in a tool-calling loop, the official
OpenAI instrumentation, the OpenTelemetry SDK and its OTLP/HTTP exporters) runs as a
subprocess against the fake OpenAI server, which plays its model from a script per request,
and exports to the OTLP capture server. The captured requests, written as a file, go through
``checkweigh import otel``; each case must be the request the agent handled: its prompt, its
tool calls in order with their arguments, results and errors, its final reply, and what was
said (message content, from log events or span attributes depending on the conventions).
Then the example's suite scores the cases.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from checkweigh.cli import app
from checkweigh.core import Case, VerdictState
from checkweigh.importers._otel_steps import NO_CONTENT
from checkweigh.suites import load_suite
from checkweigh.testing import (
    Export,
    Reply,
    SuiteTester,
    ToolCall,
    fake_llm_server,
    otlp_capture_server,
    scripted_agents,
)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "otel_agent"
TOKEN = "otlp-test-token"
SYSTEM_START = "You book meetings for a team of four"

SYNC = "Book a 30 minute sync with Alice and Bob on 2025-03-04 at 10:00."
REVIEW = "Set up a one hour design review with Carol and Dan on 2025-03-05 at 14:00."
CLASH = "Book Alice and Bob for 45 minutes on 2025-03-04 at 14:00."
RUSHED = "Put a 15 minute check-in with Dan on 2025-03-07 at 13:30 in the calendar."
PROMPTS = [SYNC, REVIEW, CLASH, RUSHED]


def slot(people: list[str], start: str, minutes: int, **more: Any) -> dict[str, Any]:
    return {"participants": people, "start": start, "duration_minutes": minutes, **more}


SYNC_SLOT = slot(["Alice", "Bob"], "2025-03-04 10:00", 30)
REVIEW_SLOT = slot(["Carol", "Dan"], "2025-03-05 14:00", 60)
CLASH_SLOT = slot(["Alice", "Bob"], "2025-03-04 14:00", 45)
RUSHED_SLOT = slot(["Dan"], "2025-03-07 13:30", 15, title="Check-in")
REPLIES = {
    SYNC: "Booked your sync with Alice and Bob on Tuesday 4 March, 10:00 to 10:30.",
    REVIEW: "The design review with Carol and Dan is booked for Wednesday 5 March at 14:00.",
    CLASH: "Alice is busy at 14:00 on Tuesday 4 March. Would 15:00 work instead?",
    RUSHED: "Sorry, Dan is busy from 13:00 to 14:30 that Friday. Shall I try 14:30?",
}
SCRIPT = {
    SYNC: [
        Reply(tool_calls=[ToolCall("check_availability", SYNC_SLOT)]),
        Reply(tool_calls=[ToolCall("book_meeting", {**SYNC_SLOT, "title": "Sync"})]),
        Reply(REPLIES[SYNC]),
    ],
    REVIEW: [
        Reply(
            "Let me check their calendars first.",
            tool_calls=[ToolCall("check_availability", REVIEW_SLOT)],
        ),
        Reply(tool_calls=[ToolCall("book_meeting", {**REVIEW_SLOT, "title": "Design review"})]),
        Reply(REPLIES[REVIEW]),
    ],
    CLASH: [
        Reply(tool_calls=[ToolCall("check_availability", CLASH_SLOT)]),
        Reply(REPLIES[CLASH]),
    ],
    # the model skips the check and books a busy slot: the tool fails, the model apologises
    RUSHED: [Reply(tool_calls=[ToolCall("book_meeting", RUSHED_SLOT)]), Reply(REPLIES[RUSHED])],
}
FREE = {"available": True, "busy": []}
# per request: each tool call as (name, arguments, result, error)
CALLS: dict[str, list[tuple[str, Any, Any, str | None]]] = {
    SYNC: [
        ("check_availability", SYNC_SLOT, FREE, None),
        ("book_meeting", {**SYNC_SLOT, "title": "Sync"}, {"booked": True, "title": "Sync"}, None),
    ],
    REVIEW: [
        ("check_availability", REVIEW_SLOT, FREE, None),
        (
            "book_meeting",
            {**REVIEW_SLOT, "title": "Design review"},
            {"booked": True, "title": "Design review"},
            None,
        ),
    ],
    CLASH: [("check_availability", CLASH_SLOT, {"available": False, "busy": ["alice"]}, None)],
    RUSHED: [
        (
            "book_meeting",
            RUSHED_SLOT,
            {"error": "cannot book: dan busy at 2025-03-07 13:30"},
            "cannot book: dan busy at 2025-03-07 13:30",
        )
    ],
}


@dataclass
class Captured:
    """One run of the agent: what it printed, what the collector received, the cases."""

    outcomes: list[dict[str, Any]]
    exports: list[Export]
    cases: dict[str, Case]
    """By trace id (the case id of an imported trace)."""
    import_output: str


def run_agent(tmp_path: Path, env: dict[str, str], *args: str) -> Captured:
    """Run the example agent on :data:`PROMPTS`, two at a time, then import its traces."""
    with (
        fake_llm_server([], respond=scripted_agents(SCRIPT)) as llm,
        otlp_capture_server(token=TOKEN) as collector,
    ):
        # the parent's own OTEL_* / OPENAI_* settings must not leak into the agent
        base = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "OPENAI_"))}
        done = subprocess.run(
            [sys.executable, str(EXAMPLE / "agent.py"), "--concurrency", "2", *args]
            + [a for p in PROMPTS for a in ("--prompt", p)],
            env={
                **base,
                "OPENAI_BASE_URL": llm.base_url,
                "OPENAI_API_KEY": "sk-test",
                "OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint,
                "OTEL_EXPORTER_OTLP_HEADERS": f"Authorization=Bearer%20{TOKEN}",
                "OTEL_BSP_SCHEDULE_DELAY": "50",
                "OTEL_BLRP_SCHEDULE_DELAY": "50",
                **env,
            },
            capture_output=True,
            text=True,
            timeout=120,
        )
        exports = collector.received()
        refused = list(collector.refused)
        collector.write_jsonl(tmp_path / "otlp.jsonl")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == ""  # no exporter warning, no instrumentation complaint
    assert refused == []  # every export carried the bearer token from OTEL_EXPORTER_OTLP_HEADERS
    outcomes = [json.loads(line) for line in done.stdout.splitlines()]
    imported = CliRunner().invoke(
        app, ["import", "otel", str(tmp_path / "otlp.jsonl"), "--out", str(tmp_path / "c.jsonl")]
    )
    assert imported.exit_code == 0, imported.output
    lines = (tmp_path / "c.jsonl").read_text().splitlines()
    cases = [Case.model_validate_json(line) for line in lines]
    return Captured(outcomes, exports, {c.id: c for c in cases}, imported.output)


def assert_cases_are_the_requests(run: Captured) -> None:
    """One case per request, with what the agent did and said."""
    assert [o["prompt"] for o in run.outcomes] == PROMPTS
    assert [o["reply"] for o in run.outcomes] == [REPLIES[p] for p in PROMPTS]
    assert sorted(run.cases) == sorted(o["trace_id"] for o in run.outcomes)
    for outcome in run.outcomes:
        case = run.cases[outcome["trace_id"]]
        prompt = outcome["prompt"]
        assert case.error is None, case.error
        assert case.input == prompt
        assert case.output == REPLIES[prompt]
        assert case.metadata["service.name"] == "booking-agent"
        calls = [s for s in case.trace if s.kind == "tool_call"]
        assert [(s.name, s.arguments, s.error) for s in calls] == [
            (name, arguments, error) for name, arguments, _, error in CALLS[prompt]
        ]
        for step, (_, _, result, _) in zip(calls, CALLS[prompt], strict=True):
            assert isinstance(step.result, dict)
            assert step.result.items() >= result.items()
        # what was said reached the case: the system prompt, the request, every answer
        agent, system, user = case.trace[:3]
        assert (agent.kind, agent.name) == ("event", "booking")
        assert system.kind == "system"
        assert (system.content or "").startswith(SYSTEM_START)
        assert (user.kind, user.content) == ("user", prompt)
        answers = [s for s in case.trace if s.kind == "assistant"]
        assert len(answers) == len(SCRIPT[prompt])
        assert [a.attributes.get("tool_calls", 0) for a in answers] == [
            len(r.tool_calls) for r in SCRIPT[prompt]
        ]
        assert answers[0].attributes["input_tokens"] == 120
        # every step hangs under the agent's span, as the program nested them
        assert {s.parent_id for s in case.trace[1:]} == {agent.id}


def test_protobuf_with_content_as_log_events_the_instrumentations_default(
    tmp_path: Path,
) -> None:
    run = run_agent(
        tmp_path,
        {
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true",
            "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip",
        },
    )
    assert {(e.encoding, e.compression) for e in run.exports} == {("protobuf", "gzip")}
    # the content travelled in log records, not on the chat spans
    assert sum(e.items() for e in run.exports if e.signal == "logs") > 0
    spans = json.dumps([e.body for e in run.exports if e.signal == "traces"])
    assert SYSTEM_START not in spans
    assert "gen_ai.input.messages" not in spans
    assert_cases_are_the_requests(run)


def test_json_encoding_through_the_examples_json_exporter(tmp_path: Path) -> None:
    # the Python SDK exports OTLP/HTTP in protobuf only; the example's otlp_json sends JSON
    run = run_agent(
        tmp_path,
        {
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true",
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
        },
    )
    assert {(e.encoding, e.compression) for e in run.exports} == {("json", None)}
    assert {e.signal for e in run.exports} == {"traces", "logs"}
    first = run.exports[0].body
    scope = (first.get("resourceSpans") or first["resourceLogs"])[0]
    record = (scope.get("scopeSpans") or scope["scopeLogs"])[0]
    item = (record.get("spans") or record["logRecords"])[0]
    assert len(item["traceId"]) == 32  # hex, as OTLP/JSON has ids (not base64)
    assert_cases_are_the_requests(run)


@pytest.mark.parametrize("mode", ["span_only", "event_only", "span_and_event"])
def test_the_latest_experimental_conventions(tmp_path: Path, mode: str) -> None:
    run = run_agent(
        tmp_path,
        {
            "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": mode,
        },
    )
    spans = json.dumps([e.body for e in run.exports if e.signal == "traces"])
    logs = json.dumps([e.body for e in run.exports if e.signal == "logs"])
    # where the content went: gen_ai.input.messages on the chat spans, or one
    # operation.details log event per model call
    assert ("gen_ai.input.messages" in spans) == (mode != "event_only")
    assert ("gen_ai.client.inference.operation.details" in logs) == (mode != "span_only")
    assert_cases_are_the_requests(run)


def test_without_content_capture_each_case_is_errored_and_says_why(tmp_path: Path) -> None:
    run = run_agent(tmp_path, {})
    # the instrumentation still writes its message events, without what was said
    sent = json.dumps([e.body for e in run.exports])
    assert "gen_ai.user.message" in sent
    assert SYSTEM_START not in sent
    assert REPLIES[SYNC] not in sent
    assert len(run.cases) == len(PROMPTS)
    for outcome in run.outcomes:
        case = run.cases[outcome["trace_id"]]
        assert case.error == NO_CONTENT
        # the tool spans still say which tools ran, in order
        names = [s.name for s in case.trace if s.kind == "tool_call"]
        assert names == [name for name, *_ in CALLS[outcome["prompt"]]]
    assert run.import_output.count("no message content") == len(PROMPTS)


def test_the_examples_suite_scores_the_imported_cases(tmp_path: Path) -> None:
    run = run_agent(tmp_path, {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"})
    tester = SuiteTester(load_suite(EXAMPLE / "suite.yaml", own_cases=False))
    states = {}
    for outcome in run.outcomes:
        result = tester.evaluate(run.cases[outcome["trace_id"]])
        states[outcome["prompt"]] = {name: v.state for name, v in result.verdicts.items()}
    P, F, NA = VerdictState.PASSED, VerdictState.FAILED, VerdictState.NOT_APPLICABLE
    common = {"booked_once": P, "replied": P, "grounded_and_polite": NA}  # no judge given
    assert states == {
        SYNC: {**common, "availability_checked": P, "no_tool_error": P},
        REVIEW: {**common, "availability_checked": P, "no_tool_error": P},
        # nothing booked: the order does not apply
        CLASH: {**common, "availability_checked": NA, "no_tool_error": P},
        # booked without checking, and the booking failed
        RUSHED: {**common, "availability_checked": F, "no_tool_error": F},
    }


def test_an_unsupported_protocol_is_one_line_naming_the_variable() -> None:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "OPENAI_"))}
    done = subprocess.run(
        [sys.executable, str(EXAMPLE / "agent.py"), "--requests", "0"],
        env={**base, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "OTEL_EXPORTER_OTLP_PROTOCOL: expected http/protobuf or http/json, got 'grpc'"
    )
