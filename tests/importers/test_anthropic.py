"""The ``anthropic`` format: Messages from an IT helpdesk agent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from checkweigh.errors import CaseFileError
from support.importing import FIXTURES, load, shape, write_jsonl

HELPDESK = FIXTURES / "anthropic_helpdesk.jsonl"


def test_tool_use_and_results_thinking_and_an_error_flag() -> None:
    cases, ctx = load("anthropic", HELPDESK)
    assert (ctx.records, ctx.cases) == (2, 2)
    unlock = cases[0]
    assert unlock.id == "it-4410"
    assert unlock.input == "Hi, I'm locked out of my laptop. Employee id E-2291."
    assert shape(unlock) == [
        ("system", "You are the", None, None),
        ("user", "Hi, I'm locked", None, None),
        ("event", "thinking", None, None),
        ("assistant", "Let me verify", None, None),
        ("tool_call", "get_employee", "toolu_01A", None),
        # is_error: the result's text is the call's error; a user message holding only
        # tool results gives no user step
        (
            "tool_call",
            "unlock_account",
            "toolu_01B",
            "PermissionDenied: unlock requires a ticket id",
        ),
        ("assistant", "I need to", None, None),
        ("tool_call", "create_ticket", "toolu_01C", None),
        ("tool_call", "notify_manager", "toolu_01D", None),
        ("tool_call", "unlock_account", "toolu_01E", None),
        # a result beside text: the text is still the user's turn
        ("user", "thanks, trying now", None, None),
        ("assistant", "Your account is", None, None),
    ]
    assert unlock.trace[2].content == "Verify employee E-2291 first, then unlock the account."
    assert unlock.trace[4].result["locked"] is True
    assert unlock.trace[8].result == "sent"
    assert unlock.trace[9].arguments == {"employee_id": "E-2291", "ticket_id": "T-90817"}
    assert unlock.trace[-1].attributes == {
        "model": "claude-sonnet-4-20250514",
        "input_tokens": 2210,
        "output_tokens": 318,
        "cache_read_input_tokens": 1024,
    }
    assert unlock.final_state == {"success": True, "account": {"locked": False}}


def test_text_blocks_are_joined_and_images_carry_no_text() -> None:
    vpn = load("anthropic", HELPDESK)[0][1]
    assert vpn.id == "anthropic_helpdesk-2"
    assert vpn.input == "What does this error on my screen mean?"
    assert shape(vpn) == [
        ("user", "What does this", None, None),
        ("assistant", "It means the", None, None),
        ("tool_call", "renew_vpn_certificate", "toolu_02A", None),
        ("assistant", "Renewed: the certificate", None, None),
    ]
    assert vpn.trace[1].content == "It means the VPN certificate expired.\nI can renew it for you."
    assert vpn.trace[2].arguments == {}


def test_repeated_ids_results_without_calls_and_server_tools(tmp_path: Path) -> None:
    log = write_jsonl(
        tmp_path / "odd.jsonl",
        {
            "system": "Be brief.",
            "messages": [
                {"role": "user", "content": "check both"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "id": "t", "name": "ping", "input": {"host": "a"}},
                        {"type": "tool_use", "id": "t", "name": "ping", "input": {"host": "b"}},
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "t", "content": "a up"},
                        {"type": "tool_result", "tool_use_id": "t", "content": "b down"},
                        {"type": "tool_result", "tool_use_id": "zz", "content": "late"},
                    ],
                },
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "server_tool_use",
                            "id": "srv_1",
                            "name": "web_search",
                            "input": {"query": "status page"},
                        },
                        {
                            "type": "web_search_tool_result",
                            "tool_use_id": "srv_1",
                            "content": {
                                "type": "web_search_tool_result_error",
                                "error_code": "too_many_requests",
                            },
                        },
                        {"type": "redacted_thinking", "data": "EmwKAhgB"},
                        {"type": "text", "text": "a is up, b is down."},
                    ],
                },
            ],
        },
    )
    (case,), _ = load("anthropic", log)
    assert case.trace[0].content == "Be brief."
    a, b = case.trace[2], case.trace[3]
    assert (a.arguments, a.result, b.arguments, b.result) == (
        {"host": "a"},
        "a up",
        {"host": "b"},
        "b down",
    )
    assert (case.trace[4].kind, case.trace[4].name, case.trace[4].result) == (
        "event",
        "tool_result",
        "late",
    )
    search = case.trace[5]
    assert (search.name, search.error) == (
        "web_search",
        '{"type":"web_search_tool_result_error","error_code":"too_many_requests"}',
    )
    assert case.trace[6].name == "redacted_thinking"
    assert case.output == "a is up, b is down."


BAD: list[tuple[Any, str]] = [
    ([{"role": "system_admin", "content": "x"}], "messages[0].role: unknown role 'system_admin'"),
    (
        [{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "input": {}}]}],
        "messages[0].content[0].name: a tool call without a name",
    ),
    (
        [{"role": "user", "content": [{"text": "no type"}]}],
        "messages[0].content[0]: expected a content block",
    ),
    (
        [{"role": "user", "content": {"type": "text"}}],
        "messages[0].content: expected text or a list",
    ),
    ({"messages": [], "metadata": "x"}, "metadata: expected an object, got the text 'x'"),
]


@pytest.mark.parametrize(("record", "message"), BAD, ids=[m[:40] for _, m in BAD])
def test_a_bad_record_names_its_line_and_field(tmp_path: Path, record: Any, message: str) -> None:
    log = write_jsonl(tmp_path / "log.jsonl", record, [{"role": "user", "content": "fine"}])
    with pytest.raises(CaseFileError) as caught:
        load("anthropic", log)
    assert str(caught.value).startswith(f"{log}:1: {message}")
    cases, ctx = load("anthropic", log, on_bad_record="skip")
    assert [c.id for c in cases] == ["log-2"]
    assert ctx.skipped_total == 1


def test_a_request_logged_with_its_response(tmp_path: Path) -> None:
    log = write_jsonl(
        tmp_path / "proxy.jsonl",
        {
            "request": {
                "model": "claude-3-5-haiku-latest",
                "max_tokens": 512,
                "system": "You are terse.",
                "messages": [{"role": "user", "content": "Reset my VPN token."}],
            },
            "response": {
                "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
                "type": "message",
                "role": "assistant",
                "model": "claude-3-5-haiku-20241022",
                "content": [
                    {"type": "tool_use", "id": "toolu_9", "name": "reset_vpn_token", "input": {}}
                ],
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 40, "output_tokens": 22},
            },
        },
    )
    (case,), _ = load("anthropic", log)
    assert case.id == "proxy-1"
    assert shape(case) == [
        ("system", "You are terse.", None, None),
        ("user", "Reset my VPN", None, None),
        ("tool_call", "reset_vpn_token", "toolu_9", None),
    ]
    assert case.trace[-1].attributes == {
        "model": "claude-3-5-haiku-20241022",
        "input_tokens": 40,
        "output_tokens": 22,
    }
    assert case.metadata == {"max_tokens": 512}
