"""Replies of agents that answer like a provider's API: a Chat Completions response or an
Anthropic Messages response is read as the agent's turn, with its token usage."""

from __future__ import annotations

import re

import pytest

from checkweigh.runs.targets import AgentFailure
from checkweigh.runs.targets._reply import raw_reader, reply_reader
from checkweigh.suites import ReplySpec

CHAT_COMPLETION = {
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
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "book_meeting", "arguments": '{"time": "10:00"}'},
                    }
                ],
            },
        }
    ],
    "usage": {"prompt_tokens": 120, "completion_tokens": 18, "total_tokens": 138},
}

ANTHROPIC_MESSAGE = {
    "id": "msg_01",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet",
    "content": [
        {"type": "text", "text": "Checking the calendar."},
        {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "check_availability",
            "input": {"day": "Tue"},
        },
    ],
    "stop_reason": "tool_use",
    "usage": {"input_tokens": 95, "output_tokens": 22},
}


def test_a_chat_completions_response_is_the_agents_turn_with_its_usage() -> None:
    run = reply_reader(ReplySpec(format="openai"))(CHAT_COMPLETION)
    assert [(s.kind, s.name, s.content) for s in run.trace] == [
        ("assistant", None, "Let me book that."),
        ("tool_call", "book_meeting", None),
    ]
    assert run.trace[1].arguments == {"time": "10:00"}
    assert run.usage is not None
    assert (run.usage.input_tokens, run.usage.output_tokens) == (120, 18)


def test_an_anthropic_messages_response_is_the_agents_turn_with_its_usage() -> None:
    run = reply_reader(ReplySpec(format="anthropic"), "command's reply")(ANTHROPIC_MESSAGE)
    assert [(s.kind, s.name) for s in run.trace] == [
        ("assistant", None),
        ("tool_call", "check_availability"),
    ]
    assert run.trace[1].arguments == {"day": "Tue"}
    assert run.usage is not None
    assert (run.usage.input_tokens, run.usage.output_tokens) == (95, 22)


def test_a_response_without_a_message_still_says_what_is_wrong() -> None:
    with pytest.raises(AgentFailure, match=r"^command's reply does not fit format openai: "):
        reply_reader(ReplySpec(format="openai"), "command's reply")({"choices": "none"})


def test_a_text_answer_is_one_assistant_message() -> None:
    spec = ReplySpec(format="text")
    raw = raw_reader(spec)
    assert raw is not None
    run = raw(b"  Booked Alice and Bob for Tuesday at 10:00.\n")
    assert [(s.kind, s.content) for s in run.trace] == [
        ("assistant", "Booked Alice and Bob for Tuesday at 10:00.")
    ]
    with pytest.raises(AgentFailure, match="http reply is empty; expected the agent's answer"):
        raw(b" \n")


def test_a_text_answer_at_a_path_of_a_json_reply() -> None:
    spec = ReplySpec(format="text", text="data.response")
    assert raw_reader(spec) is None  # read as JSON first
    read = reply_reader(spec, "command's reply")
    run = read({"data": {"response": "Done: 10:00 booked."}})
    assert run.trace[0].content == "Done: 10:00 booked."
    with pytest.raises(AgentFailure, match=r"data.response holds a JSON list, not text$"):
        read({"data": {"response": ["x"]}})


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"format": "openai", "text": "response"}, "'text' applies to format: text"),
        ({"format": "text", "text": "a..b"}, "a..b"),
    ],
)
def test_text_is_for_format_text_and_a_path(given: dict[str, str], said: str) -> None:
    with pytest.raises(ValueError, match=re.escape(said)):
        ReplySpec.model_validate(given)


@pytest.mark.parametrize(
    ("fmt", "reply", "missing"),
    [
        ("openai", {"choices": []}, "choices is empty"),
        ("openai", [], "it is an empty list"),
        ("openai", None, "it is null"),
        ("openai", {"messages": [], "final_state": {"booked": True}}, "messages is empty"),
        ("openai-responses", {"output": []}, "output is empty"),
        ("anthropic", {**ANTHROPIC_MESSAGE, "content": []}, "content is empty"),
        ("anthropic", [], "it is an empty list"),
        ("checkweigh", {}, "it is an empty object"),
        ("checkweigh", {"trace": [], "final_state": {}}, "trace is empty"),
        ("checkweigh", None, "it is null"),
        ("mapping", {"out": [], "state": {}}, "nothing in it is a message or a step"),
    ],
)
def test_a_reply_that_carries_no_message_is_an_error_naming_what_is_missing(
    fmt: str, reply: object, missing: str
) -> None:
    mapping = {"mapping": {"messages": "out", "final_state": "state"}} if fmt == "mapping" else {}
    read = reply_reader(ReplySpec.model_validate({"format": fmt, **mapping}))
    with pytest.raises(AgentFailure) as failure:
        read(reply)
    assert str(failure.value) == f"http reply holds no message (format {fmt}): {missing}"


def test_a_reply_of_state_alone_is_an_answer_in_checkweighs_own_format() -> None:
    read = reply_reader(ReplySpec())
    assert read({"final_state": {"booked": False}}).final_state == {"booked": False}


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
def test_a_provider_response_keeps_a_top_level_final_state(fmt: str) -> None:
    response = CHAT_COMPLETION if fmt == "openai" else ANTHROPIC_MESSAGE
    state = {"booked": True, "calendar": {"event_id": "ev-7"}}
    ran = reply_reader(ReplySpec(format=fmt))({**response, "final_state": state})
    assert ran.final_state == state
    assert ran.trace  # the response's message is still the turn
    assert ran.usage is not None
