"""The http target against a real HTTP agent on 127.0.0.1: the request it sends, the reply
formats it reads, retries (backoff timing, Retry-After in seconds and as a date), timeouts,
refused connections, secrets, and what happens without aiohttp."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from email.utils import formatdate
from pathlib import Path
from typing import Any

import pytest

from checkweigh.core import Case, Step
from checkweigh.errors import TargetError
from checkweigh.runs.targets import (
    AgentFailure,
    AgentRun,
    HttpTarget,
    TargetRequest,
    build_target,
    timed,
)
from checkweigh.runs.targets.http import retry_after_s
from checkweigh.suites import HttpTargetSpec
from support.http_agent import Reply, closed_port, http_agent

OTEL_REPLY = Path(__file__).parents[2] / "importers" / "fixtures" / "otel_events.json"
CASE = Case.model_validate(
    {"id": "book-1", "input": {"time": "10:00"}, "metadata": {"team": "sales"}}
)


def _target(url: str, **fields: Any) -> HttpTarget:
    spec = HttpTargetSpec.model_validate({"kind": "http", "url": url, **fields})
    return HttpTarget(spec)


def _run(target: HttpTarget, request: TargetRequest | None = None) -> AgentRun:
    async def go() -> AgentRun:
        try:
            return await target.run(request or TargetRequest(CASE))
        finally:
            await target.aclose()

    return asyncio.run(go())


class Sleeps:
    """A fake ``asyncio.sleep`` that records the waits (the backoff, not the clock)."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def test_the_case_is_posted_as_json_and_the_reply_is_its_trace_and_state() -> None:
    with http_agent() as agent:
        spec = HttpTargetSpec.model_validate(
            {"kind": "http", "url": agent.url, "headers": {"Authorization": "Bearer ${TOK}"}}
        )
        ran = _run(HttpTarget(spec, environ={"TOK": "t0k3n-abc"}))
    assert ran.final_state == {"booked": True, "time": "10:00"}
    assert [(s.kind, s.name) for s in ran.trace] == [
        ("user", None),
        ("tool_call", "book_meeting"),
        ("assistant", None),
    ]
    [(_, body, headers)] = agent.requests
    assert body == {"id": "book-1", "input": {"time": "10:00"}, "metadata": {"team": "sales"}}
    assert headers["authorization"] == "Bearer t0k3n-abc"
    assert headers["content-type"] == "application/json"


def test_a_conversation_turn_sends_the_messages_so_far_and_the_turn() -> None:
    history = (
        Step(kind="user", content="Book 10:00 with Alice"),
        Step(kind="assistant", content="Alice is busy at 10:00; 11:00?"),
        Step(kind="user", content="Yes, 11:00"),
    )
    with http_agent() as agent:
        _run(_target(agent.url), TargetRequest(CASE, history=history, turn=1))
    body = agent.requests[0][1]
    assert body["turn"] == 1
    assert body["messages"] == [
        {"role": "user", "content": "Book 10:00 with Alice"},
        {"role": "assistant", "content": "Alice is busy at 10:00; 11:00?"},
        {"role": "user", "content": "Yes, 11:00"},
    ]


def test_a_body_template_takes_values_whole_or_as_text() -> None:
    template = {
        "model": "scheduler-v2",
        "question": "{{input.time}}",
        "context": "{{metadata}}",
        "note": "case {{id}} at {{input.time}} for {{metadata}}",
    }
    with http_agent() as agent:
        _run(_target(agent.url, body=template))
    assert agent.requests[0][1] == {
        "model": "scheduler-v2",
        "question": "10:00",
        "context": {"team": "sales"},
        "note": 'case book-1 at 10:00 for {"team":"sales"}',
    }


def test_a_body_template_reading_what_the_request_lacks_is_the_cases_error() -> None:
    with http_agent() as agent, pytest.raises(AgentFailure, match=r"body: \{\{messages\}\}"):
        _run(_target(agent.url, body={"messages": "{{messages}}"}))
    assert agent.requests == []


def test_503_then_ok_is_retried_with_exponential_backoff() -> None:
    sleeps = Sleeps()
    script = {"book-1": [Reply(status=503), Reply(status=502), Reply(status=504), Reply()]}
    with http_agent(script) as agent:
        spec = HttpTargetSpec.model_validate(
            {"kind": "http", "url": agent.url, "retries": 3, "backoff_s": 0.5}
        )
        ran = _run(HttpTarget(spec, sleep=sleeps, jitter=lambda: 1.0))
    assert ran.final_state["booked"] is True
    assert len(agent.calls("book-1")) == 4
    assert sleeps.waits == [0.5, 1.0, 2.0]  # doubling; jitter 1.0 is the full wait


def test_backoff_jitter_stays_between_half_and_the_full_wait_and_is_capped() -> None:
    spec = HttpTargetSpec.model_validate(
        {"kind": "http", "url": "http://127.0.0.1:9/a", "backoff_s": 1, "max_wait_s": 3}
    )
    low = HttpTarget(spec, jitter=lambda: 0.0)
    high = HttpTarget(spec, jitter=lambda: 0.999999)
    assert [low._backoff(n) for n in (1, 2, 3, 4)] == [0.5, 1.0, 1.5, 1.5]
    assert [round(high._backoff(n), 3) for n in (1, 2, 3, 4)] == [1.0, 2.0, 3.0, 3.0]


def test_retries_run_out_on_a_service_that_stays_unavailable() -> None:
    sleeps = Sleeps()
    script = {"book-1": [Reply(status=503, body={"error": "overloaded"})] * 5}
    with http_agent(script) as agent:
        spec = HttpTargetSpec.model_validate({"kind": "http", "url": agent.url, "retries": 2})
        with pytest.raises(AgentFailure) as failure:
            _run(HttpTarget(spec, sleep=sleeps))
    assert str(failure.value) == (
        f"http agent answered 503 Service Unavailable ({agent.url}): "
        '{"error": "overloaded"} (after 3 tries)'
    )
    assert len(agent.calls("book-1")) == 3
    assert len(sleeps.waits) == 2


def test_429_waits_as_long_as_retry_after_says_in_seconds() -> None:
    script = {"book-1": [Reply(status=429, retry_after="1"), Reply()]}
    with http_agent(script) as agent:
        ran = _run(_target(agent.url, backoff_s=0.01))
    first, second = agent.calls("book-1")
    assert ran.final_state["booked"] is True
    assert 0.95 <= second - first < 1.6


def test_429_waits_until_a_retry_after_date() -> None:
    script = {"book-1": [Reply(status=429, retry_after=formatdate(time.time() + 2, usegmt=True))]}
    with http_agent(script) as agent:
        _run(_target(agent.url, backoff_s=0.01))
    first, second = agent.calls("book-1")
    # an HTTP date has whole seconds: the wait is between 1 and 2 s
    assert 0.9 <= second - first < 2.6


def test_retry_after_is_read_as_seconds_or_an_http_date() -> None:
    now = 1_750_000_000.0
    assert retry_after_s("7", now) == 7.0
    assert retry_after_s("0.5", now) == 0.5
    assert retry_after_s(formatdate(now + 30, usegmt=True), now) == 30.0
    assert retry_after_s(formatdate(now - 30, usegmt=True), now) == 0.0  # already past
    assert retry_after_s("soon", now) is None
    assert retry_after_s("-3", now) is None
    assert retry_after_s(None, now) is None


def test_a_retry_after_beyond_max_wait_ends_the_tries_at_once() -> None:
    script = {"book-1": [Reply(status=429, retry_after="120")]}
    with http_agent(script) as agent, pytest.raises(AgentFailure) as failure:
        _run(_target(agent.url, max_wait_s=10))
    assert "answered 429 Too Many Requests" in str(failure.value)
    assert "(Retry-After 120s is over max_wait_s 10)" in str(failure.value)
    assert len(agent.calls("book-1")) == 1


def test_a_500_is_not_retried_and_its_body_is_one_clean_line() -> None:
    raw = b"calendar DB down\n\x1b[31mTraceback (most recent call last):\r\n" + b"x" * 500
    script = {"book-1": [Reply(status=500, raw=raw)]}
    with http_agent(script) as agent, pytest.raises(AgentFailure) as failure:
        _run(_target(agent.url))
    text = str(failure.value)
    assert text.startswith(f"http agent answered 500 Internal Server Error ({agent.url}): ")
    assert "calendar DB down [31mTraceback (most recent call last): xxx" in text
    assert not any(c in text for c in "\x1b\n\r")
    assert len(text) < 320
    assert len(agent.calls("book-1")) == 1


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            b"{not json",
            "http reply is not JSON (unexpected character, expected a string key): {not json",
        ),
        (b"", "http reply is empty; expected JSON"),
        (
            b"<html>502 Bad Gateway</html>",
            "not JSON (unexpected character, expected a JSON value): <html>502 Bad Gateway</html>",
        ),
    ],
)
def test_a_reply_that_is_not_json_is_the_cases_error(raw: bytes, message: str) -> None:
    with http_agent({"book-1": [Reply(raw=raw)]}) as agent, pytest.raises(AgentFailure) as failure:
        _run(_target(agent.url))
    assert str(failure.value).endswith(message)


def test_a_hung_agent_times_out_per_request() -> None:
    with http_agent({"book-1": [Reply(hang=True)]}) as agent:
        began = time.monotonic()
        with pytest.raises(AgentFailure) as failure:
            _run(_target(agent.url, request_timeout_s=0.3))
    assert (
        str(failure.value)
        == f"http agent gave no reply within 0.3s (request_timeout_s): {agent.url}"
    )
    assert time.monotonic() - began < 2


def test_the_per_case_limit_cancels_a_hung_request() -> None:
    with http_agent({"book-1": [Reply(hang=True)]}) as agent:
        target = _target(agent.url)

        async def go() -> None:
            try:
                await timed(target, TargetRequest(CASE), 0.3)
            finally:
                await target.aclose()

        began = time.monotonic()
        with pytest.raises(AgentFailure, match=r"agent timed out after 0.3s"):
            asyncio.run(go())
    assert time.monotonic() - began < 2


def test_a_refused_connection_is_retried_then_the_cases_error() -> None:
    sleeps = Sleeps()
    url = f"http://127.0.0.1:{closed_port()}/agent"
    spec = HttpTargetSpec.model_validate({"kind": "http", "url": url, "retries": 1})
    with pytest.raises(AgentFailure) as failure:
        _run(HttpTarget(spec, sleep=sleeps))
    assert str(failure.value) == f"connection refused: {url} (after 2 tries)"
    assert len(sleeps.waits) == 1


def test_reply_format_openai_reads_one_conversation_and_its_final_state() -> None:
    reply = {
        "messages": [
            {"role": "user", "content": "Book 10:00 with Alice"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "book_meeting", "arguments": '{"time": "10:00"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": '{"ok": true}'},
            {"role": "assistant", "content": "Booked at 10:00."},
        ],
        "final_state": {"booked": True},
    }
    with http_agent({"book-1": [Reply(body=reply)]}) as agent:
        ran = _run(_target(agent.url, reply={"format": "openai"}))
    assert [(s.kind, s.name) for s in ran.trace] == [
        ("user", None),
        ("tool_call", "book_meeting"),
        ("assistant", None),
    ]
    assert ran.trace[1].arguments == {"time": "10:00"}
    assert ran.trace[1].result == {"ok": True}
    assert ran.final_state == {"booked": True}


def test_reply_format_anthropic() -> None:
    reply = {
        "messages": [
            {"role": "user", "content": "Book 10:00"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Booking."},
                    {"type": "tool_use", "id": "tu1", "name": "book_meeting", "input": {}},
                ],
            },
        ]
    }
    with http_agent({"book-1": [Reply(body=reply)]}) as agent:
        ran = _run(_target(agent.url, reply={"format": "anthropic"}))
    assert [(s.kind, s.name) for s in ran.trace] == [
        ("user", None),
        ("assistant", None),
        ("tool_call", "book_meeting"),
    ]


def test_reply_format_mapping_reads_where_the_reply_keeps_its_parts() -> None:
    reply = {"output": {"chat": [{"role": "assistant", "content": "Booked."}]}, "state": {"n": 1}}
    mapping = {"messages": "output.chat", "final_state": "state"}
    with http_agent({"book-1": [Reply(body=reply)]}) as agent:
        ran = _run(_target(agent.url, reply={"format": "mapping", "mapping": mapping}))
    assert [(s.kind, s.content) for s in ran.trace] == [("assistant", "Booked.")]
    assert ran.final_state == {"n": 1}


def test_reply_format_otel_reads_one_traces_spans() -> None:
    reply = json.loads(OTEL_REPLY.read_text())
    with http_agent({"book-1": [Reply(body=reply)]}) as agent:
        ran = _run(_target(agent.url, reply={"format": "otel"}))
    assert ran.trace  # the GenAI spans became steps
    assert any(s.kind == "assistant" for s in ran.trace)


@pytest.mark.parametrize(
    ("fmt", "reply", "message"),
    [
        (
            "checkweigh",
            {"trace": [{"kind": "robot"}], "final_state": {}},
            "http reply does not fit format checkweigh: trace[0].kind: ",
        ),
        ("checkweigh", ["Booked"], "expected an object with trace and final_state, got list"),
        ("openai", {"messages": "hi"}, "http reply does not fit format openai: messages: "),
        (
            "openai",
            {"messages": [{"role": "bot", "content": "x"}]},
            "http reply does not fit format openai: messages[0].role: ",
        ),
        ("otel", {"spans": []}, "http reply does not fit format otel: expected an OTLP"),
    ],
)
def test_a_reply_that_does_not_fit_its_format_is_the_cases_error(
    fmt: str, reply: Any, message: str
) -> None:
    with http_agent({"book-1": [Reply(body=reply)]}) as agent, pytest.raises(AgentFailure) as err:
        _run(_target(agent.url, reply={"format": fmt}))
    assert message in str(err.value)


def test_a_header_variable_missing_at_run_start_names_the_suite_field() -> None:
    spec = HttpTargetSpec.model_validate(
        {"kind": "http", "url": "http://127.0.0.1:9/a", "headers": {"X-Api-Key": "${AGENT_KEY}"}}
    )
    with pytest.raises(TargetError) as err:
        HttpTarget(spec, environ={})
    assert str(err.value) == (
        "target.headers.X-Api-Key: environment variable AGENT_KEY is not set "
        "(the suite reads it at run start)"
    )
    with pytest.raises(TargetError, match="AGENT_KEY is empty"):
        HttpTarget(spec, environ={"AGENT_KEY": ""})


def test_the_url_may_come_from_the_environment_and_is_checked_then() -> None:
    spec = HttpTargetSpec.model_validate({"kind": "http", "url": "${AGENT_URL}"})
    target = HttpTarget(spec, environ={"AGENT_URL": "http://127.0.0.1:8080/run?key=s3cr3t"})
    assert target.where == "http://127.0.0.1:8080/run"  # messages never show the query
    with pytest.raises(TargetError) as err:
        HttpTarget(spec, environ={"AGENT_URL": "127.0.0.1:8080"})
    assert str(err.value).startswith("target.url: expected an http:// or https:// URL")


def test_a_reply_echoing_the_token_shows_it_masked() -> None:
    echo = {"error": "invalid token Bearer s3cr3t-T0KEN for /agent"}
    with http_agent({"book-1": [Reply(status=401, body=echo)]}) as agent:
        spec = HttpTargetSpec.model_validate(
            {"kind": "http", "url": agent.url, "headers": {"Authorization": "Bearer ${TOK}"}}
        )
        with pytest.raises(AgentFailure) as failure:
            _run(HttpTarget(spec, environ={"TOK": "s3cr3t-T0KEN"}))
    assert "s3cr3t" not in str(failure.value)
    assert "invalid token Bearer *** for /agent" in str(failure.value)


def test_without_aiohttp_the_target_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "aiohttp", None)
    spec = HttpTargetSpec.model_validate({"kind": "http", "url": "http://127.0.0.1:9/a"})
    with pytest.raises(TargetError, match=r"pip install 'checkweigh\[http\]'"):
        build_target(spec, Path.cwd())


def test_concurrent_cases_share_one_keep_alive_pool() -> None:
    cases = [Case.model_validate({"id": f"c{n}", "input": {"time": "09:00"}}) for n in range(20)]
    with http_agent({f"c{n}": [Reply(delay_s=0.2)] for n in range(20)}) as agent:
        target = _target(agent.url, concurrency=20)

        async def go() -> list[AgentRun]:
            try:
                return await asyncio.gather(*(target.run(TargetRequest(c)) for c in cases))
            finally:
                await target.aclose()

        began = time.monotonic()
        runs = asyncio.run(go())
    assert all(r.final_state["time"] == "09:00" for r in runs)
    assert time.monotonic() - began < 1.5  # 20 x 0.2 s at once, not one after another


def test_a_reply_with_an_escaped_lone_surrogate_is_read_and_made_storable() -> None:
    # valid JSON (RFC 8259 allows the escape) that orjson refuses; what the engine keeps is
    # the visible escape, and a real pair stays its character
    raw = json.dumps(
        {
            "trace": [{"kind": "assistant", "content": "booked \ud800 \U0001f600"}],
            "final_state": {"note\udc80": "x"},
        }
    ).encode()
    with http_agent({"book-1": [Reply(raw=raw)]}) as agent:
        target = _target(agent.url)

        async def go() -> AgentRun:
            try:
                return (await timed(target, TargetRequest(CASE), 5))[0]
            finally:
                await target.aclose()

        ran = asyncio.run(go())
    assert ran.trace[0].content == "booked \\ud800 \U0001f600"
    assert ran.final_state == {"note\\udc80": "x"}


def test_a_reply_bad_for_another_reason_still_says_it_is_not_json() -> None:
    bad = Reply(raw=b'{"trace": [], "note": "\\ud800",}')  # and a trailing comma
    with http_agent({"book-1": [bad]}) as agent, pytest.raises(AgentFailure, match="not JSON"):
        _run(_target(agent.url))
