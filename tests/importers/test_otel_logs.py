"""OTLP log events beside the spans: the official OpenAI instrumentation's default conventions
put message content in log records (``resourceLogs``) that name their chat span; they are
joined to it by trace and span id. A trace whose spans and logs carry no content is imported
as an errored case, and the import says so, naming the trace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from checkweigh.cli import app
from checkweigh.errors import CaseFileError
from support.importing import load

TRACE = "0af7651916cd43dd8448eb211c80319c"
SILENT = "6e0c63257de34c926f9efcd03919fb9c"
BASE = 1_763_900_000_000_000_000
SCOPE = {"name": "opentelemetry.instrumentation.openai_v2", "version": "2.1b0"}
RESOURCE = {"attributes": [{"key": "service.name", "value": {"stringValue": "flight-bot"}}]}


def _any(value: Any) -> dict[str, Any]:
    """A Python value as an OTLP AnyValue, as the OTLP/JSON exporters write it."""
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, list):
        return {"arrayValue": {"values": [_any(v) for v in value]}}
    return {"kvlistValue": {"values": [{"key": k, "value": _any(v)} for k, v in value.items()]}}


def _attrs(values: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": _any(v)} for k, v in values.items()]


def _chat(trace: str, span: str, start_ms: int, tokens: tuple[int, int]) -> dict[str, Any]:
    # the default conventions: no message content on the span
    return {
        "traceId": trace,
        "spanId": span,
        "name": "chat gpt-4o-mini",
        "kind": 3,
        "startTimeUnixNano": str(BASE + start_ms * 1_000_000),
        "endTimeUnixNano": str(BASE + (start_ms + 700) * 1_000_000),
        "attributes": _attrs(
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.system": "openai",
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
                "gen_ai.response.finish_reasons": ["tool_calls" if start_ms == 0 else "stop"],
                "gen_ai.usage.input_tokens": tokens[0],
                "gen_ai.usage.output_tokens": tokens[1],
                "server.address": "api.openai.com",
            }
        ),
        "status": {},
    }


def _log(
    name: str, body: Any, span: str, at_ms: int, *, trace: str = TRACE, new_sdk: bool = True
) -> dict[str, Any]:
    attributes = {"gen_ai.system": "openai"}
    if not new_sdk:  # older SDKs name the event in an attribute
        attributes["event.name"] = name
    record: dict[str, Any] = {
        "timeUnixNano": str(BASE + at_ms * 1_000_000),
        "observedTimeUnixNano": str(BASE + at_ms * 1_000_000),
        "severityNumber": 9,
        "body": _any(body),
        "attributes": _attrs(attributes),
        "traceId": trace,
        "spanId": span,
        "flags": 1,
    }
    if new_sdk:
        record["eventName"] = name
    return record


def _spans(*spans: dict[str, Any]) -> str:
    return json.dumps(
        {
            "resourceSpans": [
                {"resource": RESOURCE, "scopeSpans": [{"scope": SCOPE, "spans": list(spans)}]}
            ]
        }
    )


def _logs(*records: dict[str, Any]) -> str:
    return json.dumps(
        {
            "resourceLogs": [
                {"resource": RESOURCE, "scopeLogs": [{"scope": SCOPE, "logRecords": list(records)}]}
            ]
        }
    )


CALL = {
    "id": "call_VSPygqKTWdrhaFErNvMV18Yl",
    "type": "function",
    "function": {"name": "get_flight_status", "arguments": '{"flight": "HAT170"}'},
}
SYSTEM = {"content": "You are the SkyWay Airlines agent."}
USER = {"content": "Is flight HAT170 on time?"}
FIRST, SECOND = "00f067aa0ba902b7", "a1b2c3d4e5f60718"
LINES = [
    # the logs of the first call come before its span (the log exporter flushed first)
    _logs(
        _log("gen_ai.system.message", SYSTEM, FIRST, 1),
        _log("gen_ai.user.message", USER, FIRST, 1, new_sdk=False),
        _log(
            "gen_ai.choice",
            {"index": 0, "finish_reason": "tool_calls", "message": {"tool_calls": [CALL]}},
            FIRST,
            700,
        ),
        # an application's own log in the same request: not a GenAI event
        {
            "timeUnixNano": str(BASE),
            "body": {"stringValue": "looking up HAT170"},
            "traceId": TRACE,
            "spanId": FIRST,
        },
    ),
    _spans(_chat(TRACE, FIRST, 0, (96, 18))),
    _spans(_chat(TRACE, SECOND, 1000, (140, 15))),
    _logs(
        _log("gen_ai.system.message", SYSTEM, SECOND, 1001),
        _log("gen_ai.user.message", USER, SECOND, 1001),
        _log("gen_ai.assistant.message", {"tool_calls": [CALL]}, SECOND, 1001),
        _log(
            "gen_ai.tool.message",
            {"content": '{"status": "delayed", "minutes": 40}', "id": CALL["id"]},
            SECOND,
            1001,
        ),
        _log(
            "gen_ai.choice",
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": "HAT170 is delayed by 40 minutes."},
            },
            SECOND,
            1700,
        ),
    ),
    # another trace, traced with content capture off: no message anywhere
    _spans(_chat(SILENT, "0f1e2d3c4b5a6978", 3000, (80, 9))),
]


def _file(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "otel.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_log_events_give_the_chat_spans_their_messages(tmp_path: Path) -> None:
    cases, ctx = load("otel", _file(tmp_path, LINES))
    case = next(c for c in cases if c.id == TRACE)
    assert [(s.kind, s.name, s.content) for s in case.trace] == [
        ("system", None, "You are the SkyWay Airlines agent."),
        ("user", None, "Is flight HAT170 on time?"),
        ("assistant", None, None),
        ("tool_call", "get_flight_status", None),
        ("assistant", None, "HAT170 is delayed by 40 minutes."),
    ]
    call = case.trace[3]
    assert (call.id, call.arguments) == (CALL["id"], {"flight": "HAT170"})
    assert call.result == {"status": "delayed", "minutes": 40}
    assert case.input == "Is flight HAT170 on time?"
    assert case.error is None
    assert [s.attributes.get("input_tokens") for s in case.trace if s.kind == "assistant"] == [
        96,
        140,
    ]
    assert case.output == "HAT170 is delayed by 40 minutes."
    assert ctx.skipped == []


def test_a_trace_without_content_is_an_errored_case_the_import_names(tmp_path: Path) -> None:
    cases, ctx = load("otel", _file(tmp_path, LINES))
    silent = next(c for c in cases if c.id == SILENT)
    assert silent.error is not None
    assert silent.error.startswith("no message content: its chat spans carry no messages")
    assert [w.one_line() for w in ctx.warnings] == [
        f"{tmp_path / 'otel.jsonl'}:5: trace {SILENT}: {silent.error}; an errored case"
    ]
    out = tmp_path / "cases.jsonl"
    result = CliRunner().invoke(
        app, ["import", "otel", str(tmp_path / "otel.jsonl"), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == f"read 5 record(s) from 1 file(s); wrote 2 case(s) to {out}"
    assert lines[1].startswith(
        f"note: {tmp_path / 'otel.jsonl'}:5: trace {SILENT}: no message content"
    )


def test_the_same_trace_without_its_logs_is_errored_too(tmp_path: Path) -> None:
    spans_only = [line for line in LINES if "resourceSpans" in line]
    cases, ctx = load("otel", _file(tmp_path, spans_only))
    assert {c.id: c.error is not None for c in cases} == {TRACE: True, SILENT: True}
    assert ctx.warnings_total == 2


def test_logs_whose_spans_are_in_another_file_make_no_case(tmp_path: Path) -> None:
    logs_only = [line for line in LINES if "resourceLogs" in line]
    path = tmp_path / "logs.jsonl"
    path.write_text("".join(line + "\n" for line in logs_only))
    cases, ctx = load("otel", path)
    assert cases == []
    assert ctx.notes() == [
        "1 trace(s) with GenAI log events but no span in the same file: no case made"
    ]
    out = tmp_path / "cases.jsonl"
    result = CliRunner().invoke(app, ["import", "otel", str(path), "--out", str(out)])
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        "error: FILE: no case in 2 record(s): 1 trace(s) with GenAI log events but no span in "
        "the same file; nothing written"
    )


def test_a_bad_log_record_names_its_line(tmp_path: Path) -> None:
    bad = _log("gen_ai.user.message", USER, FIRST, 1)
    bad["traceId"] = "not-an-id"
    path = _file(tmp_path, [LINES[1], _logs(bad)])
    with pytest.raises(CaseFileError) as caught:
        load("otel", path)
    assert str(caught.value) == (
        f"{path}:2: log record gen_ai.user.message: traceId 'not-an-id' is not 32 hex digits "
        "(nor base64)"
    )


def test_newer_conventions_operation_details_event(tmp_path: Path) -> None:
    details = _log("gen_ai.client.inference.operation.details", {}, FIRST, 700)
    details.pop("body")
    details["attributes"] += _attrs(
        {
            "gen_ai.input.messages": json.dumps(
                [
                    {
                        "role": "user",
                        "parts": [{"type": "text", "content": "Is flight HAT170 on time?"}],
                    }
                ]
            ),
            "gen_ai.output.messages": json.dumps(
                [
                    {
                        "role": "assistant",
                        "parts": [{"type": "text", "content": "It is on time."}],
                        "finish_reason": "stop",
                    }
                ]
            ),
        }
    )
    (case,), _ = load("otel", _file(tmp_path, [LINES[1], _logs(details)]))
    assert [(s.kind, s.content) for s in case.trace] == [
        ("user", "Is flight HAT170 on time?"),
        ("assistant", "It is on time."),
    ]
    assert case.error is None


def _event(name: str, body: Any, span: str, at_ms: int) -> dict[str, Any]:
    """A GenAI log record; with no body (None) as the SDK writes one: without the field."""
    record = _log(name, body if body is not None else {}, span, at_ms)
    if body is None:
        del record["body"]
    return record


def _two_calls(first_choice: dict[str, Any], echoed: dict[str, Any], **bodies: Any) -> list[str]:
    """A trace of two chat calls as the OpenAI instrumentation logs them: the first's choice,
    then the second's input (system, user, the first answer echoed, the tool's result)."""
    system, user = bodies.get("system", SYSTEM), bodies.get("user", USER)
    tool = bodies.get("tool", {"id": CALL["id"]})
    final = bodies.get("final", {"role": "assistant"})
    stop = {"index": 0, "finish_reason": "stop", "message": final}
    return [
        _spans(_chat(TRACE, FIRST, 0, (96, 18)), _chat(TRACE, SECOND, 1000, (140, 15))),
        _logs(
            _event("gen_ai.system.message", system, FIRST, 1),
            _event("gen_ai.user.message", user, FIRST, 1),
            _event("gen_ai.choice", first_choice, FIRST, 700),
            _event("gen_ai.system.message", system, SECOND, 1001),
            _event("gen_ai.user.message", user, SECOND, 1001),
            _event("gen_ai.assistant.message", echoed, SECOND, 1001),
            _event("gen_ai.tool.message", tool, SECOND, 1001),
            _event("gen_ai.choice", stop, SECOND, 1700),
        ),
    ]


def test_the_text_beside_tool_calls_is_one_answer_when_the_echo_drops_it(
    tmp_path: Path,
) -> None:
    # the instrumentation's assistant.message event keeps only the tool calls of an answer
    # that had text too: the echo is still that answer, not a new turn
    lines = _two_calls(
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {
                "role": "assistant",
                "content": "Let me look that up.",
                "tool_calls": [CALL],
            },
        },
        {"tool_calls": [CALL]},
        tool={"content": '{"status": "on time"}', "id": CALL["id"]},
        final={"role": "assistant", "content": "HAT170 is on time."},
    )
    (case,), _ = load("otel", _file(tmp_path, lines))
    assert [(s.kind, s.name, s.content) for s in case.trace] == [
        ("system", None, "You are the SkyWay Airlines agent."),
        ("user", None, "Is flight HAT170 on time?"),
        ("assistant", None, "Let me look that up."),
        ("tool_call", "get_flight_status", None),
        ("assistant", None, "HAT170 is on time."),
    ]
    assert case.trace[3].result == {"status": "on time"}
    assert case.error is None


def test_message_events_written_without_content_capture_are_no_content(tmp_path: Path) -> None:
    # capture off: every message still has its event, with the role, the call ids and the
    # tool names, and nothing that was said
    bare = {"id": CALL["id"], "type": "function", "function": {"name": "get_flight_status"}}
    lines = _two_calls(
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {"role": "assistant", "tool_calls": [bare]},
        },
        {"tool_calls": [bare]},
        system=None,
        user=None,
    )
    (case,), ctx = load("otel", _file(tmp_path, lines))
    assert case.error is not None
    assert case.error.startswith("no message content: its chat spans carry no messages")
    assert ctx.warnings_total == 1
