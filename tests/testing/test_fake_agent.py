"""The fake OpenAI server as the model of a tool-calling agent: answers that ask for function
calls, read by the real ``openai`` SDK, and one script per user request that holds however
the agent's conversations interleave."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from openai import OpenAI

from checkweigh.testing import Reply, ToolCall, agent_turn, fake_llm_server, scripted_agents

ALICE = "Book Alice and Bob for 30 minutes on 2025-03-04 at 10:00"
CAROL = "Is Carol free on 2025-03-05 at 14:00?"
SCRIPT = {
    ALICE: [
        Reply(
            "Let me check first.",
            tool_calls=[
                ToolCall("check_availability", {"people": ["Alice", "Bob"], "time": "10:00"})
            ],
        ),
        Reply(tool_calls=[ToolCall("book_meeting", {"people": ["Alice", "Bob"]}, id="call_b")]),
        Reply("Booked: Alice and Bob, 2025-03-04 10:00-10:30."),
    ],
    CAROL: [
        Reply(tool_calls=[ToolCall("check_availability", {"people": ["Carol"]})]),
        Reply("Carol is free then."),
    ],
}
TOOLS: list[Any] = [
    {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
    for n in ("check_availability", "book_meeting")
]


def converse(client: OpenAI, request: str) -> list[Any]:
    """An agent's loop: call the model, run the tools it asks for, until it replies."""
    messages: list[Any] = [{"role": "user", "content": request}]
    said = []
    for _ in range(5):
        answer = client.chat.completions.create(model="m", messages=messages, tools=TOOLS)
        message = answer.choices[0].message
        said.append((answer.choices[0].finish_reason, message))
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return said
        for call in message.tool_calls:
            result = {"ok": True}
            messages.append(
                {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)}
            )
    raise AssertionError("the script never replied")


def test_each_request_follows_its_own_script_through_tool_calls_to_the_reply() -> None:
    with fake_llm_server([], respond=scripted_agents(SCRIPT)) as server:
        client = OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        with ThreadPoolExecutor(4) as pool:  # interleaved conversations keep their turns
            alice, carol, alice2 = pool.map(lambda r: converse(client, r), [ALICE, CAROL, ALICE])
        client.close()

    def said(turns: list[Any]) -> list[Any]:
        return [(r, m.content, [c.function.name for c in m.tool_calls or ()]) for r, m in turns]

    assert said(alice) == said(alice2)
    # call ids are unique per server, as the API's are
    assert alice[0][1].tool_calls[0].id != alice2[0][1].tool_calls[0].id
    reasons = [reason for reason, _ in alice]
    assert reasons == ["tool_calls", "tool_calls", "stop"]
    first, second, last = (m for _, m in alice)
    assert first.content == "Let me check first."
    assert first.tool_calls is not None
    assert second.tool_calls is not None
    (check,) = first.tool_calls
    assert check.function.name == "check_availability"
    assert json.loads(check.function.arguments) == {"people": ["Alice", "Bob"], "time": "10:00"}
    assert check.id.startswith("call_")
    assert second.tool_calls[0].id == "call_b"
    assert last.content == "Booked: Alice and Bob, 2025-03-04 10:00-10:30."
    assert last.tool_calls is None
    assert [m.content for _, m in carol] == [None, "Carol is free then."]
    assert len(server.requests) == 3 + 2 + 3


def test_a_request_not_in_the_script_or_past_its_end_goes_to_the_default() -> None:
    respond = scripted_agents(SCRIPT)
    with fake_llm_server([], default=Reply("fallback"), respond=respond) as server:
        client = OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        other = converse(client, "Cancel my 3pm")
        client.close()
    assert [m.content for _, m in other] == ["fallback"]
    past = {"messages": [{"role": "user", "content": CAROL}, *[{"role": "assistant"}] * 2]}
    assert respond(past) is None


def test_the_turn_counts_assistant_messages_after_the_last_user_message() -> None:
    body = {
        "messages": [
            {"role": "system", "content": "You book meetings."},
            {"role": "user", "content": "earlier request"},
            {"role": "assistant", "content": "done"},
            {"role": "user", "content": [{"type": "text", "text": CAROL}]},
            {"role": "assistant", "tool_calls": []},
            {"role": "tool", "content": "{}"},
        ]
    }
    assert agent_turn(body) == (CAROL, 1)
    assert agent_turn({"messages": [{"role": "system", "content": "x"}]}) is None
