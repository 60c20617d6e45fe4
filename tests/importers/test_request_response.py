"""Calls logged with their response (``{request, response}``, as logging proxies write them):
the reply's usage counted once whatever the reply's shape, an API error imported as an errored
case carrying the error, and the same record shape for every message format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from checkweigh.cli import app
from checkweigh.core import CaseUsage, trace_usage
from support.importing import load, shape, write_jsonl

HISTORY = [
    {"role": "user", "content": "Is flight HAT045 on time?"},
    {"role": "assistant", "content": "Let me check. What is the date of your flight?"},
    {"role": "user", "content": "May 25."},
]
USAGE = {
    "input_tokens": 812,
    "output_tokens": 97,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
}
TOOL_USE = {
    "type": "tool_use",
    "id": "toolu_01A09q90qw90lq917835lq9",
    "name": "get_flight_status",
    "input": {"flight": "HAT045", "date": "2024-05-25"},
}
THINKING = {
    "type": "thinking",
    "thinking": "The user gave the date; look the flight up.",
    "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds",
}
TEXT = {"type": "text", "text": "HAT045 on May 25 is on time."}
REPLIES = {
    "text first": [TEXT],
    "text then tool use": [{"type": "text", "text": "Let me look that up."}, TOOL_USE],
    "thinking first": [THINKING, TEXT],
    "thinking then tool use": [THINKING, TOOL_USE],
    "tool use only": [TOOL_USE],
    "redacted thinking": [
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIw"},
        TOOL_USE,
    ],
    "server tool use": [
        {
            "type": "server_tool_use",
            "id": "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE",
            "name": "web_search",
            "input": {"query": "HAT045 status"},
        },
        {
            "type": "web_search_tool_result",
            "tool_use_id": "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE",
            "content": [
                {
                    "type": "web_search_result",
                    "url": "https://example.com/hat045",
                    "title": "HAT045",
                    "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUtODgx",
                    "page_age": None,
                }
            ],
        },
        TEXT,
    ],
}


def _anthropic_record(content: list[Any]) -> dict[str, Any]:
    return {
        "request": {
            "model": "claude-sonnet-4-5",
            "max_tokens": 1024,
            "system": "You are the SkyWay Airlines agent.",
            "messages": HISTORY,
        },
        "response": {
            "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": content,
            "stop_reason": "tool_use" if content[-1]["type"] == "tool_use" else "end_turn",
            "stop_sequence": None,
            "usage": USAGE,
        },
    }


@pytest.mark.parametrize("content", list(REPLIES.values()), ids=list(REPLIES))
def test_anthropic_usage_is_counted_once_whatever_the_reply_starts_with(
    tmp_path: Path, content: list[Any]
) -> None:
    log = write_jsonl(tmp_path / "proxy.jsonl", _anthropic_record(content))
    (case,), _ = load("anthropic", log)
    assert trace_usage(case.trace) == CaseUsage(812, 97, None)
    carrying = [s for s in case.trace if "input_tokens" in s.attributes]
    assert len(carrying) == 1
    (step,) = carrying
    assert step.attributes["model"] == "claude-sonnet-4-5-20250929"
    # on the reply's own steps: its text when it has some, else its first step
    reply = case.trace[len(case.trace) - _steps_of(content) :]
    assert step in reply
    texts = [s for s in reply if s.kind == "assistant"]
    assert step is (texts[0] if texts else reply[0])
    # the request's earlier assistant message carries nothing
    assert case.trace[2].attributes == {}


def _steps_of(content: list[Any]) -> int:
    # a server tool's result pairs onto its call; every other block is one step
    return sum(1 for b in content if not b["type"].endswith("tool_result"))


def test_openai_usage_is_counted_once_when_the_reply_is_tool_calls_only(tmp_path: Path) -> None:
    record = {
        "request": {"model": "gpt-4o", "messages": HISTORY},
        "response": {
            "id": "chatcmpl-AB1",
            "object": "chat.completion",
            "model": "gpt-4o-2024-08-06",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "refusal": None,
                        "tool_calls": [
                            {
                                "id": "call_7",
                                "type": "function",
                                "function": {
                                    "name": "get_flight_status",
                                    "arguments": '{"flight": "HAT045"}',
                                },
                            }
                        ],
                    },
                }
            ],
            "usage": {"prompt_tokens": 96, "completion_tokens": 18, "total_tokens": 114},
        },
    }
    (case,), _ = load("openai", write_jsonl(tmp_path / "proxy.jsonl", record))
    assert trace_usage(case.trace) == CaseUsage(96, 18, None)
    assert case.trace[-1].kind == "tool_call"
    assert case.trace[-1].attributes["model"] == "gpt-4o-2024-08-06"
    assert case.trace[1].attributes == {}  # the history's reply is not the one they describe


OPENAI_ERROR = {
    "error": {
        "message": "This model's maximum context length is 128000 tokens. However, your "
        "messages resulted in 131072 tokens.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}
ANTHROPIC_ERROR = {
    "type": "error",
    "error": {"type": "overloaded_error", "message": "Overloaded"},
}
RESPONSES_FAILED = {
    "id": "resp_67ccd2bed1ec8190",
    "object": "response",
    "status": "failed",
    "model": "gpt-4.1",
    "error": {
        "code": "server_error",
        "message": "The server had an error processing your request.",
    },
    "output": [],
    "usage": None,
}
ERRORS = [
    (
        "openai",
        {"model": "gpt-4o", "messages": HISTORY},
        OPENAI_ERROR,
        "API error (invalid_request_error): This model's maximum context length is 128000 "
        "tokens. However, your messages resulted in 131072 tokens.",
    ),
    (
        "openai",
        {"model": "gpt-4o", "messages": HISTORY},
        {"status_code": 429, "body": {"error": {"message": "Rate limit reached", "code": None}}},
        "API error (HTTP 429): Rate limit reached",
    ),
    (
        "anthropic",
        {"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": HISTORY},
        ANTHROPIC_ERROR,
        "API error (overloaded_error): Overloaded",
    ),
    (
        "openai-responses",
        {"model": "gpt-4.1", "input": "Is flight HAT045 on time?"},
        RESPONSES_FAILED,
        "API error (server_error): The server had an error processing your request.",
    ),
]


@pytest.mark.parametrize(
    ("fmt", "request_", "response", "error"),
    ERRORS,
    ids=[f"{e[0]}-{i}" for i, e in enumerate(ERRORS)],
)
def test_a_response_that_is_an_api_error_is_an_errored_case(
    tmp_path: Path, fmt: str, request_: dict[str, Any], response: dict[str, Any], error: str
) -> None:
    log = write_jsonl(
        tmp_path / "proxy.jsonl", {"id": "call-1", "request": request_, "response": response}
    )
    (case,), _ = load(fmt, log)
    assert case.error == error
    # what was asked is kept; no reply was given
    assert case.input == "Is flight HAT045 on time?"
    assert case.trace[-1].kind == "user"
    # written and read back by `checkweigh import` as it was built
    out = tmp_path / "cases.jsonl"
    result = CliRunner().invoke(app, ["import", fmt, str(log), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["error"] == error


def test_an_errored_record_is_reported_errored_by_a_run_not_failed(tmp_path: Path) -> None:
    ok = {
        "id": "ok",
        "request": {"model": "gpt-4o", "messages": HISTORY},
        "response": {
            "model": "gpt-4o",
            "choices": [{"message": {"role": "assistant", "content": "HAT045 is on time."}}],
        },
    }
    bad = {
        "id": "too-long",
        "request": {"model": "gpt-4o", "messages": HISTORY},
        "response": OPENAI_ERROR,
    }
    write_jsonl(tmp_path / "proxy.jsonl", ok, bad)
    (tmp_path / "suite.yaml").write_text(
        "name: status\n"
        "cases: {path: proxy.jsonl, format: openai}\n"
        "checks:\n"
        "  answered: {type: contains, path: output, values: [on time]}\n"
        "rubrics:\n"
        "  status: {weights: {answered: 1}}\n"
    )
    report = tmp_path / "r.json"
    result = CliRunner().invoke(
        app,
        [
            "run",
            str(tmp_path / "suite.yaml"),
            "--db",
            f"sqlite:///{tmp_path / 'r.db'}",
            "--json",
            str(report),
            "-q",
        ],
    )
    results = {r["case_id"]: r for r in json.loads(report.read_text())["results"]}
    assert results["ok"]["verdicts"]["answered"]["state"] == "passed"
    assert results["too-long"]["verdicts"] == {}
    assert results["too-long"]["agent_error"].startswith("API error (invalid_request_error): ")
    # errored, not failed: the default case gate counts it as not passed (exit 1)
    assert result.exit_code == 1, result.output
    assert "cases 1 passed, 0 failed, 1 errored of 2" in result.output
    assert "errored too-long#0: agent error: API error (invalid_request_error)" in result.output


def test_responses_request_and_response_records(tmp_path: Path) -> None:
    record = {
        "id": "resp-call-9",
        "request": {
            "model": "gpt-4.1",
            "instructions": "You are the SkyWay Airlines agent.",
            "input": [{"role": "user", "content": "Is flight HAT045 on time?"}],
            "tools": [{"type": "function", "name": "get_flight_status"}],
            "temperature": 0,
        },
        "response": {
            "id": "resp_68af",
            "object": "response",
            "status": "completed",
            "model": "gpt-4.1-2025-04-14",
            "error": None,
            "output": [
                {
                    "type": "function_call",
                    "id": "fc_1",
                    "call_id": "call_1",
                    "name": "get_flight_status",
                    "arguments": '{"flight": "HAT045"}',
                    "status": "completed",
                }
            ],
            "usage": {"input_tokens": 120, "output_tokens": 22, "total_tokens": 142},
        },
    }
    (case,), _ = load("openai-responses", write_jsonl(tmp_path / "calls.jsonl", record))
    assert case.id == "resp-call-9"
    assert case.error is None
    assert shape(case) == [
        ("system", "You are the", None, None),
        ("user", "Is flight HAT045", None, None),
        ("tool_call", "get_flight_status", "call_1", None),
    ]
    assert case.trace[-1].arguments == {"flight": "HAT045"}
    assert case.trace[-1].attributes == {
        "model": "gpt-4.1-2025-04-14",
        "input_tokens": 120,
        "output_tokens": 22,
        "total_tokens": 142,
    }
    assert case.metadata == {
        "tools": [{"type": "function", "name": "get_flight_status"}],
        "temperature": 0,
    }


def test_an_agents_reply_that_is_a_failed_call_is_an_agent_failure() -> None:
    from checkweigh.runs.targets import AgentFailure
    from checkweigh.runs.targets._reply import reply_reader
    from checkweigh.suites import ReplySpec

    read = reply_reader(ReplySpec(format="openai"), "command's reply")
    with pytest.raises(AgentFailure) as caught:
        read({"request": {"model": "gpt-4o", "messages": HISTORY}, "response": OPENAI_ERROR})
    assert str(caught.value) == (
        "command's reply reports an error: API error (invalid_request_error): This model's "
        "maximum context length is 128000 tokens. However, your messages resulted in 131072 "
        "tokens."
    )


def test_a_target_that_runs_an_errored_case_again_replaces_its_error() -> None:
    from checkweigh.core import Case, Step
    from checkweigh.runs._engine import ran_case
    from checkweigh.runs.targets import AgentRun

    recorded = Case(id="too-long", input="Is flight HAT045 on time?", error="API error (x): y")
    ran = ran_case(recorded, AgentRun(trace=[Step(kind="assistant", content="On time.")]))
    assert (ran.error, ran.output) == (None, "On time.")
