"""The http target against a real HTTP agent on 127.0.0.1: the request it sends, the reply
formats it reads, retries (backoff timing, Retry-After in seconds and as a date), timeouts,
refused connections, secrets, and what happens without aiohttp."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
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
    assert body == {
        "id": "book-1",
        "input": {"time": "10:00"},
        "metadata": {"team": "sales"},
        "repeat": 0,
    }
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


def test_each_try_of_a_case_says_which_it_is_and_a_body_template_can_use_it() -> None:
    template = {"session": "eval-{{id}}-{{repeat}}", "try": "{{repeat}}", "q": "{{input.time}}"}
    with http_agent() as agent:
        for repeat in (0, 1, 2):
            _run(_target(agent.url, body=template), TargetRequest(CASE, repeat=repeat))
        _run(_target(agent.url), TargetRequest(CASE, repeat=1))
    sent = [body for _, body, _ in agent.requests]
    assert [b["session"] for b in sent[:3]] == ["eval-book-1-0", "eval-book-1-1", "eval-book-1-2"]
    assert [b["try"] for b in sent[:3]] == [0, 1, 2]  # a whole reference keeps the number
    assert sent[3]["repeat"] == 1  # the default request carries it too


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
        '{"error": "overloaded"} (after 3 tries; earlier: 503 x2)'
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
    assert str(failure.value) == (
        f"connection refused: {url} (after 2 tries; earlier: connection refused)"
    )
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


def test_an_empty_chat_completion_is_the_cases_error_not_an_answer() -> None:
    script = {"book-1": [Reply(body={"choices": [], "usage": {}})]}
    with http_agent(script) as agent, pytest.raises(AgentFailure) as failure:
        _run(_target(agent.url, reply={"format": "openai"}))
    assert str(failure.value) == "http reply holds no message (format openai): choices is empty"


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
    assert str(err.value) == (
        "target.url: ${AGENT_URL} from the environment gives '127.0.0.1:8080': expected an "
        "http:// or https:// URL, got '127.0.0.1:8080'"
    )


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


# redirects: the headers (a token) go only where they were sent -------------------------


def _secret_target(url: str, **fields: Any) -> HttpTarget:
    spec = HttpTargetSpec.model_validate(
        {"kind": "http", "url": url, "headers": {"X-Api-Key": "${AGENT_TOKEN}"}, **fields}
    )
    return HttpTarget(spec, environ={"AGENT_TOKEN": "tok-s3cr3t-42"})


def test_a_redirect_to_another_host_is_the_cases_error_and_the_key_never_goes_there() -> None:
    with http_agent() as elsewhere:
        moved = f"{elsewhere.url}?key=leaky-query"
        script = {"book-1": [Reply(status=307, headers={"location": moved})]}
        with http_agent(script) as agent:
            for mode in ("never", "same_host"):
                with pytest.raises(AgentFailure) as failure:
                    _run(_secret_target(agent.url, follow_redirects=mode))
                text = str(failure.value)
                other = elsewhere.url.rsplit("/", 1)[0]  # http://127.0.0.1:PORT
                assert text.startswith(
                    f"http agent answered 307 Temporary Redirect ({agent.url}): "
                )
                assert other in text
                assert "tok-s3cr3t" not in text
                assert "leaky-query" not in text
                assert "/agent?" not in text  # only the other place's origin is named
                agent.script["book-1"] = [Reply(status=307, headers={"location": moved})]
    assert elsewhere.requests == []  # nothing, and so no key, reached the other host
    assert "follow_redirects: never" in _refusal(moved, "never")
    assert "another host" in _refusal(moved, "same_host")


def _refusal(location: str, mode: str) -> str:
    script = {"book-1": [Reply(status=308, headers={"location": location})]}
    with http_agent(script) as agent, pytest.raises(AgentFailure) as failure:
        _run(_secret_target(agent.url, follow_redirects=mode))
    return str(failure.value)


def test_same_host_follows_a_redirect_on_the_same_origin_with_the_body_and_headers() -> None:
    with http_agent() as agent:
        agent.script["book-1"] = [Reply(status=307, headers={"location": "/v2/agent"})]
        ran = _run(_secret_target(agent.url, follow_redirects="same_host"))
        assert ran.final_state == {"booked": True, "time": "10:00"}
        first, second = agent.requests
        assert second[1] == first[1]  # the case was POSTed again
        assert second[2]["x-api-key"] == "tok-s3cr3t-42"  # to where it was sent before
        # by default the same redirect is refused
        agent.script["book-1"] = [Reply(status=307, headers={"location": "/v2/agent"})]
        with pytest.raises(AgentFailure, match=r"answered 307 .*follow_redirects: never"):
            _run(_secret_target(agent.url))
    assert len(agent.requests) == 3


def test_a_redirect_loop_on_the_same_host_ends() -> None:
    loop = [Reply(status=307, headers={"location": "/agent"})] * 10
    with http_agent({"book-1": loop}) as agent, pytest.raises(AgentFailure) as failure:
        _run(_target(agent.url, follow_redirects="same_host"))
    assert str(failure.value) == f"http agent redirected more than 5 times ({agent.url})"
    assert len(agent.requests) == 6


# the reply's size ----------------------------------------------------------------------


class _Streamer(BaseHTTPRequestHandler):
    """Answers 200 with ``server.total`` bytes of a JSON string, 64 KiB at a time, chunked
    (or with a Content-Length when ``server.declare``); counts what it could send."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        server: Any = self.server
        self.send_response(200)
        self.send_header("content-type", "application/json")
        if server.declare:
            self.send_header("content-length", str(server.total))
        else:
            self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        piece = b'"' + b"x" * (2**16 - 2) + b'"'
        try:
            while server.sent < server.total:
                data = piece if server.declare else b"%x\r\n%s\r\n" % (len(piece), piece)
                self.wfile.write(data)
                server.sent += len(piece)
            if not server.declare:
                self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            server.dropped = True


@contextmanager
def _streaming(total: int, *, declare: bool = False) -> Iterator[Any]:
    server: Any = ThreadingHTTPServer(("127.0.0.1", 0), _Streamer)
    server.daemon_threads = True
    server.total, server.declare, server.sent, server.dropped = total, declare, 0, False
    server.url = f"http://127.0.0.1:{server.server_address[1]}/agent"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_a_reply_over_max_reply_bytes_is_read_only_to_the_cap_and_errors_the_case() -> None:
    cap = 2**20
    with _streaming(256 * 2**20) as server:
        tracemalloc.start()
        try:
            with pytest.raises(AgentFailure) as failure:
                _run(_target(server.url, max_reply_bytes=cap, reply={"format": "text"}))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        deadline = time.monotonic() + 5
        while not server.dropped and time.monotonic() < deadline:
            time.sleep(0.02)
    assert str(failure.value) == (
        f"http reply is over 1 MiB (max_reply_bytes; the rest was not read): {server.url}"
    )
    assert server.dropped  # the client hung up: the 256 MiB were never read
    assert server.sent < 64 * 2**20
    assert peak < 8 * cap  # memory stays near the cap, not the reply's size


def test_a_declared_length_over_the_cap_is_refused_before_reading() -> None:
    with _streaming(32 * 2**20, declare=True) as server, pytest.raises(AgentFailure) as failure:
        _run(_target(server.url, max_reply_bytes=2**20))
    assert str(failure.value) == (
        f"http reply is over 1 MiB (max_reply_bytes; its Content-Length is 33554432): {server.url}"
    )


def test_a_reply_within_the_cap_is_read_whole() -> None:
    with _streaming(5 * 2**16) as server:
        ran = _run(_target(server.url, reply={"format": "text"}))
    assert len(ran.trace[0].content or "") == 5 * 2**16


# what earlier tries saw ----------------------------------------------------------------


def test_a_case_timeout_during_429_retries_names_the_429s() -> None:
    script = {"book-1": [Reply(status=429, retry_after="0.1")] * 3 + [Reply(hang=True)]}
    with http_agent(script) as agent:
        target = _target(agent.url, retries=5)

        async def go() -> None:
            try:
                await timed(target, TargetRequest(CASE), 1.0)
            finally:
                await target.aclose()

        with pytest.raises(AgentFailure) as failure:
            asyncio.run(go())
    assert str(failure.value) == ("agent timed out after 1s; earlier: 429 x3 (Retry-After 0.1s)")


def test_a_request_timeout_after_retries_names_the_earlier_tries() -> None:
    script = {"book-1": [Reply(status=503), Reply(status=429, retry_after="0"), Reply(hang=True)]}
    with http_agent(script) as agent, pytest.raises(AgentFailure) as failure:
        _run(_target(agent.url, request_timeout_s=0.3, backoff_s=0.01))
    assert str(failure.value) == (
        f"http agent gave no reply within 0.3s (request_timeout_s): {agent.url} "
        "(after 3 tries; earlier: 503, 429 (Retry-After 0s))"
    )


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
