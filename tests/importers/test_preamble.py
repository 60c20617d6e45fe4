"""Assistant text sent together with tool calls is a preamble to the calls, not a reply: every
importer (and an agent's reply read in a log format) marks it with the attribute
``tool_calls``, ``output`` skips it, and a filter path reaches only what was said to the user."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from checkweigh.core import Case, FieldPath
from checkweigh.runs.targets._reply import reply_reader
from checkweigh.suites import ReplySpec
from support.importing import FIXTURES, load

SAID = FieldPath.parse("trace[kind=assistant, attributes.tool_calls=null].content")
ALL_TEXT = FieldPath.parse("trace[kind=assistant].content")


def _call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


# the agent answers, then (its last turn) says it will check and calls a tool: the log ends
# there, as tau-bench's do when a conversation hits its step limit
OPENAI = [
    {"role": "user", "content": "Can I add a bag to reservation SDZQKO?"},
    {"role": "assistant", "content": "Yes: one more checked bag costs $50. Shall I add it?"},
    {"role": "user", "content": "Yes please."},
    {
        "role": "assistant",
        "content": "Let me add the bag now.",
        "tool_calls": [_call("call_1", "update_reservation_baggages", '{"total_baggages": 2}')],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": '{"total_baggages": 2}'},
]
ANTHROPIC = [
    OPENAI[0],
    {"role": "assistant", "content": [{"type": "text", "text": OPENAI[1]["content"]}]},
    OPENAI[2],
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me add the bag now."},
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "update_reservation_baggages",
                "input": {"total_baggages": 2},
            },
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": '{"total_baggages": 2}'}
        ],
    },
]
RESPONSES = [
    OPENAI[0],
    {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": OPENAI[1]["content"]}],
    },
    OPENAI[2],
    {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Let me add the bag now."}],
    },
    {
        "type": "function_call",
        "call_id": "call_1",
        "name": "update_reservation_baggages",
        "arguments": '{"total_baggages": 2}',
    },
    {"type": "function_call_output", "call_id": "call_1", "output": '{"total_baggages": 2}'},
]
FORMATS = [
    ("openai", OPENAI, {}),
    ("anthropic", ANTHROPIC, {}),
    ("openai-responses", RESPONSES, {}),
    ("mapping", {"turns": OPENAI}, {"mapping": {"messages": "turns"}}),
    (
        "mapping",
        {"turns": ANTHROPIC},
        {"mapping": {"messages": "turns", "messages_format": "anthropic"}},
    ),
]


def _assert_marked(case: Case) -> None:
    preamble = next(s for s in case.trace if s.content == "Let me add the bag now.")
    assert preamble.kind == "assistant"
    assert preamble.attributes["tool_calls"] == 1
    reply = next(s for s in case.trace if s.content and s.content.startswith("Yes: one"))
    assert "tool_calls" not in reply.attributes
    assert SAID.get(case) == [OPENAI[1]["content"]]
    assert ALL_TEXT.get(case) == [OPENAI[1]["content"], "Let me add the bag now."]
    assert case.output == OPENAI[1]["content"]
    assert case.turns[1].output == ""  # the second turn said nothing to the user


@pytest.mark.parametrize(
    ("fmt", "record", "options"), FORMATS, ids=[f"{f}-{i}" for i, (f, _, _) in enumerate(FORMATS)]
)
def test_every_importer_marks_text_sent_with_tool_calls(
    tmp_path: Path, fmt: str, record: Any, options: dict[str, Any]
) -> None:
    log = tmp_path / "log.json"
    log.write_text(json.dumps(record))
    (case,), _ = load(fmt, log, **options)
    _assert_marked(case)


def test_anthropic_text_after_a_server_tool_result_is_a_reply(tmp_path: Path) -> None:
    # a server tool runs inside the model's turn: the text after its result answers the user
    reply = [
        OPENAI[0],
        {
            "role": "assistant",
            "content": [
                {
                    "type": "server_tool_use",
                    "id": "srvtoolu_1",
                    "name": "web_search",
                    "input": {"query": "bag fees"},
                },
                {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
                {"type": "text", "text": "A checked bag costs $50."},
            ],
        },
    ]
    log = tmp_path / "log.json"
    log.write_text(json.dumps(reply))
    (case,), _ = load("anthropic", log)
    assert case.output == "A checked bag costs $50."
    assert SAID.get(case) == ["A checked bag costs $50."]


def test_otel_answers_that_asked_for_tool_calls_are_marked() -> None:
    cases, _ = load("otel", FIXTURES / "otel_airline.jsonl", on_bad_record="skip")
    bags = next(c for c in cases if c.id == "9c1e7f0a4b3d2e1f8a7b6c5d4e3f2a1b")
    preamble = bags.trace[4]
    assert (preamble.content, preamble.attributes["tool_calls"]) == ("Let me add the bag now.", 1)
    assert "Let me add the bag now." not in SAID.get(bags)
    assert bags.output.startswith("Done: reservation SDZQKO now has 2 checked bags")


COMPLETION = {
    "id": "chatcmpl-9x",
    "object": "chat.completion",
    "model": "gpt-4o-mini",
    "choices": [
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {
                "role": "assistant",
                "content": "Let me book that.",
                "tool_calls": [_call("call_1", "book_meeting", '{"time": "10:00"}')],
            },
        }
    ],
    "usage": {"prompt_tokens": 120, "completion_tokens": 18},
}
MESSAGE = {
    "id": "msg_01",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [
        {"type": "text", "text": "Let me book that."},
        {"type": "tool_use", "id": "toolu_1", "name": "book_meeting", "input": {"time": "10:00"}},
    ],
    "stop_reason": "tool_use",
    "usage": {"input_tokens": 95, "output_tokens": 22},
}


@pytest.mark.parametrize(("fmt", "reply"), [("openai", COMPLETION), ("anthropic", MESSAGE)])
def test_an_agents_reply_in_a_log_format_is_marked_the_same_way(fmt: str, reply: Any) -> None:
    run = reply_reader(ReplySpec(format=fmt))(reply)
    said = run.trace[0]
    assert (said.kind, said.content, said.attributes["tool_calls"]) == (
        "assistant",
        "Let me book that.",
        1,
    )
    assert Case(id="c", trace=run.trace).output == ""
