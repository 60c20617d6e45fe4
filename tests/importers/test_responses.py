"""The ``openai-responses`` format: Responses API items from a shop's order-support agent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from checkweigh.errors import CaseFileError
from support.importing import FIXTURES, load, shape, write_jsonl

SHOP = FIXTURES / "responses_shop.jsonl"


def test_a_response_object_with_its_input_reasoning_and_usage() -> None:
    cases, ctx = load("openai-responses", SHOP)
    assert (ctx.records, ctx.cases) == (2, 2)
    status = cases[0]
    assert status.id == "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b"
    assert status.input == "Where is my order 8812? It was supposed to arrive Monday."
    assert shape(status) == [
        ("system", "You are Shopwise's", None, None),
        ("user", "Where is my", None, None),
        ("event", "reasoning", "rs_01", None),
        ("tool_call", "lookup_order", "call_Q1x", None),
        ("event", "reasoning", "rs_02", None),
        ("assistant", "Order 8812 shipped", None, None),
    ]
    assert (
        status.trace[2].content == "The user asks for the status of order 8812; look it up first."
    )
    assert status.trace[3].arguments == {"order_id": "8812"}
    assert status.trace[3].result["tracking"] == "1Z999AA10123456784"
    assert status.trace[-1].attributes == {
        "model": "o4-mini-2025-04-16",
        "input_tokens": 812,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 96,
        "output_tokens_details": {"reasoning_tokens": 64},
        "total_tokens": 908,
    }
    assert status.final_state == {"success": True, "order_status_told": "shipped"}
    assert status.ground_truth == {"tracking": "1Z999AA10123456784"}
    assert status.metadata == {
        "object": "response",
        "created_at": 1741476542,
        "status": "completed",
    }


def test_a_list_of_items_with_parallel_calls_an_error_and_a_retry() -> None:
    refund = load("openai-responses", SHOP)[0][1]
    assert refund.id == "responses_shop-2"
    assert refund.input == "Order 7730 arrived broken. Refund me $80 and check if 7731 has shipped."
    assert shape(refund) == [
        ("system", "You are Shopwise's", None, None),
        ("user", "Order 7730 arrived", None, None),
        ("event", "reasoning", "rs_11", None),
        ("tool_call", "lookup_order", "call_A", None),
        ("tool_call", "lookup_order", "call_B", None),
        ("tool_call", "issue_refund", "call_C", "refund 80 exceeds the order total 64.5"),
        ("tool_call", "issue_refund", "call_D", None),
        ("assistant", "I refunded the", None, None),
    ]
    # answered in the other order, each output went to the call its call_id names
    assert refund.trace[3].result["status"] == "delivered"
    assert refund.trace[4].result["status"] == "processing"
    assert refund.trace[6].arguments == {"order_id": "7730", "amount": 64.5}


def test_built_in_tools_mcp_calls_and_unknown_items(tmp_path: Path) -> None:
    log = write_jsonl(
        tmp_path / "tools.jsonl",
        {
            "input": "Find the 2025 Nobel laureates in physics",
            "output": [
                {
                    "type": "web_search_call",
                    "id": "ws_1",
                    "status": "completed",
                    "action": {"type": "search", "query": "2025 Nobel physics"},
                },
                {
                    "type": "mcp_call",
                    "id": "mcp_1",
                    "server_label": "wiki",
                    "name": "fetch_page",
                    "arguments": '{"title": "Nobel Prize in Physics"}',
                    "output": None,
                    "error": "upstream 503",
                },
                {
                    "type": "custom_tool_call",
                    "call_id": "ct_1",
                    "name": "grep",
                    "input": "laureate",
                },
                {"type": "custom_tool_call_output", "call_id": "ct_1", "output": "3 matches"},
                {"type": "image_generation_call", "id": "ig_1", "status": "failed"},
                {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAA"},
                {"role": "assistant", "content": "Three laureates share it."},
            ],
        },
    )
    (case,), _ = load("openai-responses", log)
    assert case.input == "Find the 2025 Nobel laureates in physics"
    assert shape(case) == [
        ("user", "Find the 2025", None, None),
        ("tool_call", "web_search", "ws_1", None),
        ("tool_call", "fetch_page", "mcp_1", "upstream 503"),
        ("tool_call", "grep", "ct_1", None),
        ("tool_call", "image_generation", "ig_1", "failed"),
        ("event", "compaction", None, None),
        ("assistant", "Three laureates share", None, None),
    ]
    assert case.trace[1].arguments == {"action": {"type": "search", "query": "2025 Nobel physics"}}
    assert (case.trace[3].arguments, case.trace[3].result) == ("laureate", "3 matches")
    assert case.trace[5].result == {"id": "cmp_1", "encrypted_content": "gAAA"}


BAD: list[tuple[Any, str]] = [
    (
        {"messages": []},
        "expected a list of items, an object with 'input' / 'output', or one with 'request'",
    ),
    ({"input": [{"content": "hi"}]}, "input[0].type: expected an item type such as 'message'"),
    (
        {"output": [{"type": "message", "role": "tool", "content": "x"}]},
        "output[0].role: unknown role 'tool'; expected user, assistant, system or developer",
    ),
    ([{"type": "function_call", "call_id": "c", "arguments": "{}"}], "[0].name: a tool call"),
    ({"input": 3}, "input: expected a list of items, got the number 3"),
]


@pytest.mark.parametrize(("record", "message"), BAD, ids=[m[:40] for _, m in BAD])
def test_a_bad_record_names_its_line_and_field(tmp_path: Path, record: Any, message: str) -> None:
    log = write_jsonl(tmp_path / "log.jsonl", {"input": "fine"}, record)
    with pytest.raises(CaseFileError) as caught:
        load("openai-responses", log)
    assert str(caught.value).startswith(f"{log}:2: ")
    assert message in str(caught.value)
    cases, ctx = load("openai-responses", log, on_bad_record="skip")
    assert [c.id for c in cases] == ["log-1"]
    assert ctx.skipped_total == 1
