"""Replies of agents that answer like a provider's API: a Chat Completions response or an
Anthropic Messages response is read as the agent's turn, with its token usage."""

from __future__ import annotations

import pytest

from checkweigh.runs.targets import AgentFailure
from checkweigh.runs.targets._reply import reply_reader
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
