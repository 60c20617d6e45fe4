"""Catalogue of judge faults, each run through the CLI (`checkweigh run --judge`) and the real
provider SDK against the scripted loopback server: 429 bursts, 5xx, resets, hangs, junk,
truncated and mistyped answers, empty choices, HTML error pages, final 4xx, servers without
structured output. Every row states how the judge check must end (passed after retries, or
errored with the given text: never "no") and the run's exit code; no row may print a
traceback or take long."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from checkweigh.core import VerdictState
from checkweigh.store import Store
from checkweigh.testing import Reply, fake_llm_server
from checkweigh.testing._fake_llm import Structured
from support.judge_suite import CASES, YES, judge_suite, run_judged

ANTHROPIC_YES = Reply(tool_input=json.loads(YES))


def openai_body(content: str, **extra: Any) -> str:
    """A chat-completions body answering ``content``, with ``extra`` top-level fields."""
    message = {"role": "assistant", "content": content}
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    return json.dumps({"id": "c", "object": "chat.completion", "choices": [choice], **extra})


def openai_message(**message: Any) -> str:
    """A chat-completions body whose message is ``message`` (content null unless given)."""
    message = {"role": "assistant", "content": None, **message}
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    return json.dumps({"id": "c", "object": "chat.completion", "choices": [choice]})


def tool_call(arguments: str) -> list[dict[str, Any]]:
    """The ``tool_calls`` of a message calling the answer tool with ``arguments``."""
    function = {"name": "binary_verdict", "arguments": arguments}
    return [{"id": "call_1", "type": "function", "function": function}]


def anthropic_body(**extra: Any) -> str:
    """A messages body answering YES through the tool, with ``extra`` top-level fields."""
    block = {"type": "tool_use", "id": "t", "name": "binary_verdict", "input": json.loads(YES)}
    body = {"id": "m", "type": "message", "role": "assistant", "model": "claude-test"}
    return json.dumps({**body, "content": [block], "stop_reason": "tool_use", **extra})


HTML = "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
# every row runs with short limits, so a fault that is not handled ends the test quickly
LIMITS = ("--judge-timeout", "0.4", "--judge-deadline", "2", "--judge-concurrency", "8")


def repaired_by(fixed: Reply, junk: Reply) -> Callable[[dict[str, Any]], Reply]:
    """``junk`` to every question, ``fixed`` to the repair request that follows it."""

    def respond(body: dict[str, Any]) -> Reply:
        last = body.get("messages", [{}])[-1].get("content", "")
        return fixed if str(last).startswith("That answer is not valid") else junk

    return respond


@dataclass(frozen=True)
class Fault:
    """One judge fault, what the server does, and how the run must end."""

    name: str
    script: list[Reply] = field(default_factory=list)
    default: Reply | None = None
    respond: Callable[[dict[str, Any]], Reply | None] | None = None
    wire: str = "openai"
    structured: Structured = "all"
    args: tuple[str, ...] = ()
    exit_code: int = 0
    """0: every judge check passed; 1: every one errored (the errored-executions gate)."""
    error: str | None = None
    """Text in every errored verdict."""
    max_requests: int | None = None
    """How many calls the server may see at most (final errors are not retried)."""


FAULTS = [
    Fault(
        "429 burst with Retry-After seconds, then answers",
        script=[Reply(status=429, retry_after="0.05")] * 12,
        default=Reply(YES),
    ),
    Fault(
        "429 burst with retry-after-ms, then answers",
        script=[Reply(status=429, retry_after_ms="20")] * 12,
        default=Reply(YES),
    ),
    Fault(
        "429 with a Retry-After longer than the deadline (capped, retried until the deadline)",
        default=Reply(status=429, retry_after="600"),
        exit_code=1,
        error="HTTP 429",
    ),
    Fault(
        "mixed 500/502/503/504, then answers",
        script=[Reply(status=s) for s in (500, 502, 503, 504)] * 3,
        default=Reply(YES),
    ),
    Fault(
        "persistent 503",
        default=Reply(status=503),
        exit_code=1,
        error="HTTP 503",
    ),
    Fault(
        "HTML 502 error pages from a proxy, then answers",
        script=[Reply(status=502, raw=HTML, content_type="text/html")] * 8,
        default=Reply(YES),
    ),
    Fault(
        "HTML page with status 200",
        default=Reply(raw=HTML, content_type="text/html"),
        exit_code=1,
        error="malformed response",
    ),
    Fault(
        "connection resets, then answers",
        script=[Reply(reset=True)] * 8,
        default=Reply(YES),
    ),
    Fault(
        "every connection reset",
        default=Reply(reset=True),
        exit_code=1,
        error="connection reset",
    ),
    Fault(
        "hung provider",
        default=Reply(hang=True),
        exit_code=1,
        error="deadline 2 s)",
    ),
    Fault(
        "slow but within the per-attempt timeout",
        default=Reply(YES, delay_s=0.2),
    ),
    Fault(
        "slower than the per-attempt timeout once, then fast",
        script=[Reply(YES, delay_s=1.5)] * 3,
        default=Reply(YES),
    ),
    Fault(
        "junk prose answer, repair fails too",
        default=Reply("I believe the agent did well."),
        exit_code=1,
        error="invalid judge answer after one repair: the answer holds no JSON object",
        max_requests=2 * CASES,
    ),
    Fault(
        "junk answer fixed by the repair",
        respond=repaired_by(Reply(YES), Reply("Yes.")),
    ),
    Fault(
        "truncated JSON",
        default=Reply('{"verdict": "yes", "reason": "the trace shows'),
        exit_code=1,
        error="invalid judge answer after one repair",
    ),
    Fault(
        "wrong types: boolean verdict",
        default=Reply('{"verdict": true, "reason": "fine"}'),
        exit_code=1,
        error="verdict:",
    ),
    Fault(
        "capitalised verdict",
        default=Reply('{"verdict": "Yes", "reason": "fine"}'),
        exit_code=1,
        error="verdict:",
    ),
    Fault(
        "missing reason",
        default=Reply('{"verdict": "no"}'),
        exit_code=1,
        error="reason: Field required",
    ),
    Fault(
        "empty choices",
        default=Reply(raw='{"id": "x", "object": "chat.completion", "choices": []}'),
        exit_code=1,
        error="malformed response",
    ),
    Fault(
        "null message content",
        default=Reply(raw='{"choices": [{"index": 0, "message": {"content": null}}]}'),
        exit_code=1,
        error="invalid judge answer after one repair",
    ),
    Fault(
        "body that is not JSON",
        default=Reply(raw="upstream connect error or disconnect/reset before headers"),
        exit_code=1,
        error="malformed response",
    ),
    *(
        Fault(
            f"final {status}",
            default=Reply(status=status),
            exit_code=1,
            error=f"HTTP {status}",
            max_requests=CASES,
        )
        for status in (400, 401, 403, 404, 422)
    ),
    Fault(
        "408 and 409, then answers",
        script=[Reply(status=408), Reply(status=409)] * 3,
        default=Reply(YES),
    ),
    Fault(
        "llama-cpp-python server: json_schema refused with a 500",
        default=Reply(YES),
        structured="llama",
    ),
    Fault(
        "server without structured output",
        default=Reply(YES),
        structured="none",
    ),
    Fault(
        "forced json_schema against a server that refuses it",
        default=Reply(YES),
        structured="llama",
        args=("--judge-format", "json_schema"),
        exit_code=1,
        error="try --judge-format auto",
        max_requests=CASES,
    ),
    Fault(
        "usage counts absurd (10**30) or junk: the valid answer stands, the totals stay sane",
        script=[
            Reply(raw=openai_body(YES, usage={"prompt_tokens": 10**30, "completion_tokens": 1}))
        ]
        * 3,
        default=Reply(raw=openai_body(YES, usage={"prompt_tokens": "x", "completion_tokens": -5})),
    ),
    Fault(
        "a tool call instead of content: its arguments are the answer",
        default=Reply(raw=openai_message(tool_calls=tool_call(YES))),
    ),
    Fault(
        "a tool call whose arguments are not a valid answer",
        default=Reply(raw=openai_message(tool_calls=tool_call('{"verdict": "maybe"}'))),
        exit_code=1,
        error="invalid judge answer after one repair: verdict:",
    ),
    Fault(
        "a 200 that wraps an upstream error (a proxy)",
        default=Reply(raw=json.dumps({"error": {"message": "upstream overloaded", "code": 529}})),
        exit_code=1,
        error="openai:gpt-test: the server answered 200 with an error: upstream overloaded",
        max_requests=CASES,
    ),
    Fault(
        "a refusal instead of an answer",
        default=Reply(raw=openai_message(refusal="I can't help with that.")),
        exit_code=1,
        error="openai:gpt-test: the model refused to answer: I can't help with that.",
        max_requests=CASES,
    ),
    Fault(
        "answer nested 100,000 levels deep",
        default=Reply('{"verdict": "yes", "a": ' + "[" * 100_000 + "]" * 100_000 + "}"),
        exit_code=1,
        error="the answer's JSON is nested too deeply",
    ),
    Fault(
        "anthropic usage counts absurd or junk: the valid answer stands",
        script=[Reply(raw=anthropic_body(usage={"input_tokens": 10**30, "output_tokens": 1}))] * 3,
        default=Reply(raw=anthropic_body(usage={"input_tokens": "x", "output_tokens": None})),
        wire="anthropic",
    ),
    *(
        Fault(
            f"anthropic 200 with {what}",
            default=Reply(raw=raw),
            wire="anthropic",
            exit_code=1,
            error="malformed response",
            max_requests=CASES,
        )
        for what, raw in (
            ("a JSON null body", "null"),
            ("a JSON array body", "[]"),
            ("a body nested 100,000 levels deep", "[" * 100_000 + "]" * 100_000),
        )
    ),
    *(
        Fault(
            f"{status} redirect to {where} (not followed)",
            default=Reply(status=status, raw="", headers={"location": target}),
            wire=wire,
            exit_code=1,
            error=f"HTTP {status}: the server redirects to {target!r}; redirects are not followed",
            max_requests=CASES,
        )
        for status, where, target, wire in (
            (307, "another path of the server", "/v1/elsewhere/chat/completions", "openai"),
            (302, "a host on the network", "http://example.com/v1/chat/completions", "openai"),
            (308, "a host on the network", "https://example.com/v1/messages", "anthropic"),
        )
    ),
    Fault(
        "anthropic tool input passed on as a JSON string (a proxy)",
        default=Reply(
            raw=anthropic_body(
                content=[{"type": "tool_use", "id": "t", "name": "binary_verdict", "input": YES}]
            )
        ),
        wire="anthropic",
    ),
    *(
        Fault(
            f"anthropic refusal {how}",
            default=Reply(raw=anthropic_body(content=blocks, stop_reason="refusal")),
            wire="anthropic",
            exit_code=1,
            error=f"anthropic:claude-test: the model refused to answer{said}",
            max_requests=CASES,
        )
        for how, blocks, said in (
            ("without content", [], ""),
            ("with text", [{"type": "text", "text": "I can't."}], ": I can't."),
        )
    ),
    Fault(
        "anthropic 529 overloaded, then answers",
        script=[Reply(status=529)] * 6,
        default=ANTHROPIC_YES,
        wire="anthropic",
    ),
    Fault(
        "anthropic connection resets, then answers",
        script=[Reply(reset=True)] * 6,
        default=ANTHROPIC_YES,
        wire="anthropic",
    ),
    Fault(
        "anthropic hung",
        default=Reply(hang=True),
        wire="anthropic",
        exit_code=1,
        error="deadline 2 s)",
    ),
    Fault(
        "anthropic final 401",
        default=Reply(status=401),
        wire="anthropic",
        exit_code=1,
        error="HTTP 401",
        max_requests=CASES,
    ),
]


@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
def test_judge_fault(fault: Fault, tmp_path: Path) -> None:
    suite = judge_suite(tmp_path / "suite")
    judge = "anthropic:claude-test" if fault.wire == "anthropic" else "openai:gpt-test"
    with fake_llm_server(
        fault.script,
        wire=fault.wire,
        default=fault.default,
        structured=fault.structured,
        respond=fault.respond,
    ) as server:
        start = time.monotonic()
        code, out = run_judged(suite, server, tmp_path, *LIMITS, *fault.args, judge=judge)
        took = time.monotonic() - start
    assert code == fault.exit_code, out
    assert "Traceback" not in out
    assert took < 20.0  # the 2 s deadline plus start-up, with room for a loaded CI machine
    store = Store(f"sqlite:///{tmp_path / 'runs.db'}")
    verdicts = [r.verdicts["grounded"] for r in store.iter_results(store.get_run("latest").id)]
    assert len(verdicts) == CASES
    cached = list((tmp_path / "cache").rglob("*.json"))
    if fault.error is None:
        assert {v.state for v in verdicts} == {VerdictState.PASSED}, [v.error for v in verdicts]
        assert len(cached) == CASES
    else:
        assert cached == []  # neither a failed call nor an invalid answer is cached
        assert {v.state for v in verdicts} == {VerdictState.ERRORED}  # never read as "no"
        for verdict in verdicts:
            assert verdict.error is not None
            assert fault.error in verdict.error
            if "deadline" in fault.error:
                assert "timed out after" in verdict.error
        assert f"{CASES} errored" in out
    if fault.max_requests is not None:
        assert len(server.requests) <= fault.max_requests
