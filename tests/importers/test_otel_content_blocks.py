"""Older OTel conventions (``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*``) whose ``content``
holds the JSON text of content blocks, as OpenLLMetry's Anthropic instrumentation writes them:
the blocks are read (tool calls, tool results, text, thinking); plain text stays text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from checkweigh.core import FieldPath
from support.importing import load

TRACE = "5b8aa5a2d2c872e8321cf37308d69df2"
SYSTEM = "You are the SkyWay Airlines agent."
THINK = {"type": "thinking", "thinking": "Look the flight up first.", "signature": "EqQBCgIYAhIM"}
TOOL_USE = {
    "type": "tool_use",
    "id": "toolu_01",
    "name": "get_flight_status",
    "input": {"flight": "HAT170"},
}
RESULT = {
    "type": "tool_result",
    "tool_use_id": "toolu_01",
    "content": '{"status": "delayed", "minutes": 40}',
}


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    return {"stringValue": value}


def _span(span_id: str, start_ms: int, attrs: dict[str, Any]) -> dict[str, Any]:
    base = 1_763_900_000_000_000_000
    return {
        "traceId": TRACE,
        "spanId": span_id,
        "name": "anthropic.chat",
        "kind": 3,
        "startTimeUnixNano": str(base + start_ms * 1_000_000),
        "endTimeUnixNano": str(base + (start_ms + 800) * 1_000_000),
        "attributes": [{"key": k, "value": _value(v)} for k, v in attrs.items()],
        "status": {},
    }


def _request(*spans: dict[str, Any]) -> str:
    scope = {"scope": {"name": "opentelemetry.instrumentation.anthropic", "version": "0.40.0"}}
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "skyway-bot"}}]}
    return json.dumps(
        {"resourceSpans": [{"resource": resource, "scopeSpans": [{**scope, "spans": list(spans)}]}]}
    )


FIRST = _span(
    "1111aaaa2222bbbb",
    0,
    {
        "gen_ai.system": "Anthropic",
        "llm.request.type": "chat",
        "gen_ai.request.model": "claude-sonnet-4-5",
        "gen_ai.response.model": "claude-sonnet-4-5-20250929",
        "gen_ai.usage.input_tokens": 512,
        "gen_ai.usage.output_tokens": 64,
        "gen_ai.prompt.0.content": SYSTEM,
        "gen_ai.prompt.0.role": "system",
        # a message that is one text block is written as its text; a user's JSON stays text
        "gen_ai.prompt.1.content": 'Is HAT170 on time? My booking note says ["HAT170"].',
        "gen_ai.prompt.1.role": "user",
        "gen_ai.completion.0.finish_reason": "tool_use",
        "gen_ai.completion.0.role": "thinking",
        "gen_ai.completion.0.content": "Look the flight up first.",
        "gen_ai.completion.1.role": "assistant",
        "gen_ai.completion.1.tool_calls.0.id": "toolu_01",
        "gen_ai.completion.1.tool_calls.0.name": "get_flight_status",
        "gen_ai.completion.1.tool_calls.0.arguments": '{"flight": "HAT170"}',
        "gen_ai.completion.1.content": "Let me check.",
    },
)
SECOND = _span(
    "3333cccc4444dddd",
    1000,
    {
        "gen_ai.system": "Anthropic",
        "llm.request.type": "chat",
        "gen_ai.response.model": "claude-sonnet-4-5-20250929",
        "gen_ai.usage.input_tokens": 640,
        "gen_ai.usage.output_tokens": 21,
        "gen_ai.prompt.0.content": SYSTEM,
        "gen_ai.prompt.0.role": "system",
        "gen_ai.prompt.1.content": 'Is HAT170 on time? My booking note says ["HAT170"].',
        "gen_ai.prompt.1.role": "user",
        # the whole content as JSON text, and its tool use again as indexed attributes
        "gen_ai.prompt.2.content": json.dumps(
            [THINK, {"type": "text", "text": "Let me check."}, TOOL_USE]
        ),
        "gen_ai.prompt.2.role": "assistant",
        "gen_ai.prompt.2.tool_calls.0.id": "toolu_01",
        "gen_ai.prompt.2.tool_calls.0.name": "get_flight_status",
        "gen_ai.prompt.2.tool_calls.0.arguments": '{"flight": "HAT170"}',
        "gen_ai.prompt.3.content": json.dumps([RESULT]),
        "gen_ai.prompt.3.role": "user",
        "gen_ai.completion.0.finish_reason": "end_turn",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": "HAT170 is delayed by 40 minutes.",
    },
)


def test_anthropic_blocks_in_indexed_content_become_calls_and_results(tmp_path: Path) -> None:
    path = tmp_path / "spans.jsonl"
    path.write_text(_request(FIRST) + "\n" + _request(SECOND) + "\n")
    (case,), ctx = load("otel", path)
    assert ctx.skipped == []
    assert [(s.kind, s.name, s.content) for s in case.trace] == [
        ("system", None, SYSTEM),
        ("user", None, 'Is HAT170 on time? My booking note says ["HAT170"].'),
        ("event", "thinking", "Look the flight up first."),
        ("assistant", None, "Let me check."),
        ("tool_call", "get_flight_status", None),
        ("assistant", None, "HAT170 is delayed by 40 minutes."),
    ]
    call = case.trace[4]
    assert (call.id, call.arguments) == ("toolu_01", {"flight": "HAT170"})
    assert call.result == {"status": "delayed", "minutes": 40}
    first = case.trace[3]
    assert first.attributes["input_tokens"] == 512  # the span's answer, not its thinking
    assert first.attributes["tool_calls"] == 1
    assert case.output == "HAT170 is delayed by 40 minutes."
    said = FieldPath.parse("trace[kind=assistant, attributes.tool_calls=null].content")
    assert said.get(case) == ["HAT170 is delayed by 40 minutes."]


def test_several_results_in_one_message_and_openai_parts(tmp_path: Path) -> None:
    two = [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_01",
            "content": [{"type": "text", "text": "delayed"}],
        },
        {"type": "tool_result", "tool_use_id": "toolu_02", "content": "on time", "is_error": False},
    ]
    span = _span(
        "5555eeee6666ffff",
        0,
        {
            "gen_ai.prompt.0.role": "user",
            "gen_ai.prompt.0.content": json.dumps(
                [
                    {"type": "text", "text": "HAT170 and HAT045?"},
                    {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
                ]
            ),
            "gen_ai.prompt.1.role": "assistant",
            "gen_ai.prompt.1.content": json.dumps(
                [
                    {**TOOL_USE, "id": "toolu_01"},
                    {**TOOL_USE, "id": "toolu_02", "input": {"flight": "HAT045"}},
                ]
            ),
            "gen_ai.prompt.2.role": "user",
            "gen_ai.prompt.2.content": json.dumps(two),
            "gen_ai.completion.0.role": "assistant",
            "gen_ai.completion.0.content": "HAT170 is delayed; HAT045 is on time.",
        },
    )
    path = tmp_path / "spans.json"
    path.write_text(_request(span))
    (case,), _ = load("otel", path)
    assert [(s.kind, s.name, s.content) for s in case.trace] == [
        ("user", None, "HAT170 and HAT045?"),
        ("assistant", None, None),
        ("tool_call", "get_flight_status", None),
        ("tool_call", "get_flight_status", None),
        ("assistant", None, "HAT170 is delayed; HAT045 is on time."),
    ]
    assert [(s.id, s.arguments, s.result) for s in case.trace[2:4]] == [
        ("toolu_01", {"flight": "HAT170"}, "delayed"),
        ("toolu_02", {"flight": "HAT045"}, "on time"),
    ]
