"""A ``.json`` file that is one conversation (a list of messages or items, or one object)
imports as one case in every format where that shape means something; a list of
conversations stays a list of cases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from checkweigh.errors import CaseFileError
from support.importing import load, shape

OPENAI = [
    {"role": "system", "content": "You are the support agent of Acme Shop."},
    {"role": "user", "content": "Where is order 1042?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_order", "arguments": '{"order_id": "1042"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": '{"status": "shipped"}'},
    {"role": "assistant", "content": "Order 1042 has shipped."},
]
ANTHROPIC = [
    {"role": "user", "content": "Where is order 1042?"},
    {
        "role": "assistant",
        "content": [
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "get_order",
                "input": {"order_id": "1042"},
            }
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": '{"status": "shipped"}'}
        ],
    },
    {"role": "assistant", "content": [{"type": "text", "text": "Order 1042 has shipped."}]},
]
RESPONSES = [
    {"role": "user", "content": "Where is order 1042?"},
    {
        "type": "function_call",
        "call_id": "call_1",
        "name": "get_order",
        "arguments": '{"order_id": "1042"}',
    },
    {"type": "function_call_output", "call_id": "call_1", "output": '{"status": "shipped"}'},
    {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Order 1042 has shipped."}],
    },
]
SHAPE = [("user", "Where is order"), ("tool_call", "get_order"), ("assistant", "Order 1042 has")]
FORMATS = [("openai", OPENAI), ("anthropic", ANTHROPIC), ("openai-responses", RESPONSES)]


def _json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value, indent=2), encoding="utf-8")
    return path


@pytest.mark.parametrize(("fmt", "messages"), FORMATS, ids=[f for f, _ in FORMATS])
def test_a_json_file_that_is_a_list_of_messages_is_one_case(
    tmp_path: Path, fmt: str, messages: list[Any]
) -> None:
    (case,), ctx = load(fmt, _json(tmp_path / "chat.json", messages))
    assert (ctx.records, ctx.cases) == (1, 1)
    assert case.id == "chat-1"
    assert case.input == "Where is order 1042?"
    rows = [(kind, label) for kind, label, _, _ in shape(case) if kind != "system"]
    assert rows == SHAPE
    assert case.trace[-2].result == {"status": "shipped"}
    assert case.output == "Order 1042 has shipped."


@pytest.mark.parametrize(("fmt", "messages"), FORMATS, ids=[f for f, _ in FORMATS])
def test_a_json_file_of_one_object_or_a_list_of_conversations(
    tmp_path: Path, fmt: str, messages: list[Any]
) -> None:
    key = "input" if fmt == "openai-responses" else "messages"
    one = _json(tmp_path / "one.json", {"id": "order-1042", key: messages})
    (case,), _ = load(fmt, one)
    assert (case.id, case.output) == ("order-1042", "Order 1042 has shipped.")
    # a list of conversations (lists, or objects) is one case each
    many = _json(tmp_path / "many.json", [messages, {"id": "b", key: messages}])
    cases, ctx = load(fmt, many)
    assert [c.id for c in cases] == ["many-1", "b"]
    assert (ctx.records, ctx.cases) == (2, 2)


def test_a_mapping_file_that_is_one_record_or_a_list_of_records(tmp_path: Path) -> None:
    mapping = {"id": "ticket", "messages": "turns"}
    one = _json(tmp_path / "one.json", {"ticket": "T-1", "turns": OPENAI})
    (case,), _ = load("mapping", one, mapping=mapping)
    assert (case.id, case.output) == ("T-1", "Order 1042 has shipped.")
    many = _json(
        tmp_path / "many.json",
        [{"ticket": "T-1", "turns": OPENAI}, {"ticket": "T-2", "turns": OPENAI}],
    )
    cases, _ = load("mapping", many, mapping=mapping)
    assert [c.id for c in cases] == ["T-1", "T-2"]


def test_a_file_of_messages_one_a_line_says_how_to_give_one_conversation(tmp_path: Path) -> None:
    log = tmp_path / "chat.jsonl"
    log.write_text("".join(json.dumps(m) + "\n" for m in OPENAI), encoding="utf-8")
    with pytest.raises(CaseFileError) as caught:
        load("openai", log)
    assert str(caught.value) == (
        f"{log}:1: expected a list of messages or an object with 'messages', got a single "
        "message (an object with 'role'); a file that is one conversation holds its messages "
        "in one JSON list"
    )


def test_a_bad_message_in_a_one_conversation_file_names_the_message(tmp_path: Path) -> None:
    bad = [*OPENAI[:2], {"role": "customer", "content": "hi"}]
    log = _json(tmp_path / "chat.json", bad)
    with pytest.raises(CaseFileError) as caught:
        load("openai", log)
    message = str(caught.value)
    assert message == (
        f"{log}: record 1: messages[2].role: unknown role 'customer'; expected system, "
        "developer, user, assistant or tool"
    )
    assert "\n" not in message


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
def test_a_json_file_of_one_logged_call(tmp_path: Path, fmt: str) -> None:
    reply: dict[str, Any] = (
        {"choices": [{"message": {"role": "assistant", "content": "It has shipped."}}]}
        if fmt == "openai"
        else {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "text", "text": "It has shipped."}],
        }
    )
    call = {
        "request": {"model": "m", "messages": [{"role": "user", "content": "Where is 1042?"}]},
        "response": reply,
    }
    (case,), ctx = load(fmt, _json(tmp_path / "call.json", call))
    assert (case.id, case.input, case.output, ctx.records) == (
        "call-1",
        "Where is 1042?",
        "It has shipped.",
        1,
    )
