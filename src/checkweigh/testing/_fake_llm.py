"""LLM servers on 127.0.0.1 that answer from a script, for driving the real ``openai`` and
``anthropic`` SDKs end to end: answers, latency, 429 with Retry-After (seconds, HTTP date or
``retry-after-ms``), 5xx, malformed bodies, HTML error pages, hangs and connection resets.
``wire`` picks the format: OpenAI chat completions or Anthropic messages. ``structured``
makes the OpenAI server behave like one that supports every ``response_format`` (``all``),
like llama-cpp-python's server (``llama``: ``json_schema`` is refused with a 500 naming
``response_format``, ``json_object`` with a ``schema`` is accepted, and ``GET /v1/models`` lists
a model ``owned_by: me``) or like one that
supports none (``none``: any ``response_format`` is refused with a 400). Both wires also
serve their provider's batch API (:mod:`._fake_batches`, scripted through ``batches``). Usage
reports prompt-cached tokens as each provider does (``_fake_cache``). An OpenAI answer may ask
for function calls (:class:`ToolCall`); :mod:`._fake_agent` scripts a tool-calling conversation
per user request."""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from ._fake_batches import FakeBatches
from ._fake_cache import FakePromptCache
from ._fake_limits import FakeLimits, limit_headers, rate_limit_body, request_tokens

Structured = Literal["all", "llama", "none"]


@dataclass(frozen=True)
class ToolCall:
    """A function call an OpenAI-wire answer asks the client to make."""

    name: str
    """The function's name."""
    arguments: dict[str, Any] = field(default_factory=dict)
    """Its arguments (sent as JSON text, as the API does)."""
    id: str | None = None
    """The call's id (None: ``call_<request>_<index>``, unique per server)."""


@dataclass
class Reply:
    """One scripted response."""

    content: str | None = None
    """The assistant message (status 200)."""
    status: int = 200
    """HTTP status."""
    retry_after: str | None = None
    """A Retry-After header value."""
    raw: str | None = None
    """A raw body sent as is (for malformed responses)."""
    delay_s: float = 0.0
    """Sleep before answering (latency, timeouts)."""
    tool_input: dict[str, Any] | None = None
    """Anthropic: answer with a tool_use block carrying this input instead of text."""
    retry_after_date_s: float | None = None
    """Send Retry-After as an HTTP date this many seconds ahead (computed when sending)."""
    retry_after_ms: str | None = None
    """A ``retry-after-ms`` header value (OpenAI sends it)."""
    content_type: str = "application/json"
    """The response's content type (``text/html`` for a proxy's error page)."""
    hang: bool = False
    """Never answer: hold the connection until the server stops (a hung provider)."""
    reset: bool = False
    """Reset the connection (TCP RST) instead of answering."""
    echo_auth: bool = False
    """An error body that echoes the request's Authorization header (a buggy proxy)."""
    headers: dict[str, str] = field(default_factory=dict)
    """Further response headers (a redirect's ``location``, say)."""
    tool_calls: list[ToolCall] = field(default_factory=list)
    """OpenAI: the function calls the answer asks for (``finish_reason`` ``tool_calls``;
    ``content`` may go with them, as a preamble)."""


@dataclass
class FakeLLM:
    """The server's script and what it received."""

    script: list[Reply] = field(default_factory=list)
    default: Reply | None = None
    """Answers every request once the script is used up (None: answer 500)."""
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    base_url: str = ""
    structured: Structured = "all"
    """Which ``response_format`` types the OpenAI server accepts (see the module)."""
    respond: Callable[[dict[str, Any]], Reply | None] | None = None
    """Picks the reply from the request body (None: the script's next one)."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)
    in_flight: int = 0
    """Requests received and not yet answered."""
    peak_in_flight: int = 0
    """The most requests in flight at once."""
    first_at: float | None = None
    """When the first request arrived (``time.monotonic``)."""
    last_done_at: float | None = None
    """When the last answer was sent."""
    batches: FakeBatches = field(default_factory=FakeBatches)
    """The batch APIs' state and script (see :mod:`._fake_batches`)."""
    prompt_cache: FakePromptCache = field(default_factory=FakePromptCache)
    """The provider's prompt cache (see ``_fake_cache``; ``enabled=False``: caching off)."""
    limits: FakeLimits | None = None
    """Requests- and tokens-per-minute limits answered with 429s (see ``_fake_limits``)."""

    def arrived(self) -> None:
        """Count a request in flight (called as soon as its headers are read)."""
        with self.lock:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            if self.first_at is None:
                self.first_at = time.monotonic()

    def answered(self) -> None:
        """A request is no longer in flight."""
        with self.lock:
            self.in_flight -= 1
            self.last_done_at = time.monotonic()

    def stats(self) -> dict[str, Any]:
        """What the server saw: requests, the peak in flight and the span from the first
        request to the last answer (the judge side of a run)."""
        with self.lock:
            span = None
            if self.first_at is not None and self.last_done_at is not None:
                span = self.last_done_at - self.first_at
            return {
                "requests": len(self.requests),
                "peak_in_flight": self.peak_in_flight,
                "span_s": span,
                "rate_limited": self.limits.refused if self.limits is not None else 0,
                "limited_tokens": self.limits.tokens if self.limits is not None else 0,
            }

    def next_reply(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self.lock:
            self.requests.append(body)
            self.headers.append(headers)
            self.times.append(time.monotonic())
            refusal = _refuse_format(self.structured, body)
            if refusal is not None:
                return refusal
            chosen = self.respond(body) if self.respond is not None else None
            if chosen is not None:
                return chosen
            if self.script:
                return self.script.pop(0)
            if self.default is not None:
                return self.default
            return Reply(status=500, raw='{"error": {"message": "script exhausted"}}')


def _refuse_format(structured: Structured, body: dict[str, Any]) -> Reply | None:
    """The refusal a server without support for the requested ``response_format`` sends
    (the texts are llama-cpp-python's and a generic server's)."""
    kind = (body.get("response_format") or {}).get("type")
    if kind is None or structured == "all":
        return None
    if structured == "llama" and kind == "json_schema":
        message = "response_format type json_schema is not supported; use json_object"
        return Reply(status=500, raw=json.dumps({"error": {"message": message, "code": 500}}))
    if structured == "llama" and kind == "json_object":
        return None
    message = f"Unrecognized request argument supplied: response_format ({kind})"
    return Reply(status=400, raw=json.dumps({"error": {"message": message, "type": "invalid"}}))


def _openai_body(body: dict[str, Any], reply: Reply, n: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.id or f"call_{n}_{i}",
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
            }
            for i, call in enumerate(reply.tool_calls)
        ]
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "test-model"),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
            }
        ],
        "usage": {"prompt_tokens": 120, "completion_tokens": 18, "total_tokens": 138},
    }


def _anthropic_body(body: dict[str, Any], reply: Reply, n: int) -> dict[str, Any]:
    if reply.tool_input is not None:
        name = (body.get("tool_choice") or {}).get("name", "answer")
        content: list[dict[str, Any]] = [
            {"type": "tool_use", "id": f"toolu_{n}", "name": name, "input": reply.tool_input}
        ]
    else:
        content = [{"type": "text", "text": reply.content or ""}]
    return {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "test-model"),
        "content": content,
        "stop_reason": "tool_use" if reply.tool_input is not None else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 150, "output_tokens": 25},
    }


def _error_body(wire: str, status: int, echo: str | None = None) -> dict[str, Any]:
    message = f"scripted {status}" + (f"; you sent Authorization: {echo}" if echo else "")
    if wire == "anthropic":
        kind = "rate_limit_error" if status == 429 else "api_error"
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": "test"}}


def _reset(connection: socket.socket) -> None:
    """Close with SO_LINGER 0: the peer gets a TCP RST, as from a crashed proxy."""
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    connection.close()


def _host(state: FakeLLM) -> str:
    return state.base_url.removesuffix("/v1")


def _batch_answer(
    state: FakeLLM, wire: str, body: dict[str, Any], headers: dict[str, str]
) -> tuple[int, Any]:
    """A batch item's answer: what a synchronous call with ``body`` would get (no latency,
    hang or reset: the provider absorbs those)."""
    reply = state.next_reply(body, headers)
    if reply.raw is not None:
        try:
            return reply.status, json.loads(reply.raw)
        except ValueError:
            return reply.status, reply.raw
    if reply.status != 200:
        return reply.status, _error_body(wire, reply.status)
    render = _anthropic_body if wire == "anthropic" else _openai_body
    answer = render(body, reply, len(state.requests))
    answer["usage"] = state.prompt_cache.usage(wire, body, answer["usage"])
    return 200, answer


def _handler(state: FakeLLM, wire: str, keep_alive: bool) -> type[BaseHTTPRequestHandler]:
    def answer(body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
        return _batch_answer(state, wire, body, headers)

    class Handler(BaseHTTPRequestHandler):
        # HTTP/1.1 keeps connections open, as real providers do; 1.0 closes each one, which
        # keeps clients that outlive their event loop from holding sockets in tests
        protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"

        def setup(self) -> None:
            super().setup()
            # headers and body go out as separate writes: without this, Nagle's algorithm
            # and delayed ACKs stall every keep-alive response by ~40 ms
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            return

        def do_GET(self) -> None:
            if state.batches.serve(self, wire, _host(state), answer):
                return
            # the model listing: llama-cpp-python's (``owned_by: me``) for ``structured="llama"``,
            # so a judge recognises a single-request local server; nothing for the others
            listing = {"object": "list", "data": [{"id": "scripted", "owned_by": "me"}]}
            found = state.structured == "llama" and self.path.rstrip("/").endswith("/models")
            data = json.dumps(listing if found else {"error": "not found"}).encode()
            self.send_response(200 if found else 404)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            if state.batches.serve(self, wire, _host(state), answer):
                return
            state.arrived()
            try:
                self._post()
            finally:
                state.answered()

        def _post(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            headers = {k.lower(): v for k, v in self.headers.items()}
            limited: dict[str, str] = {}
            if state.limits is not None:
                admission = state.limits.admit(request_tokens(body))
                limited = limit_headers(wire, admission)
                if not admission.allowed:
                    refusal = json.dumps(rate_limit_body(wire, admission)).encode()
                    self._send(429, "application/json", refusal, limited)
                    return
            reply = state.next_reply(body, headers)
            if reply.delay_s:
                time.sleep(reply.delay_s)
            if reply.hang:
                state.stopping.wait()
                self.close_connection = True
                return
            if reply.reset:
                _reset(self.connection)
                self.close_connection = True
                return
            if reply.raw is not None:
                payload = reply.raw
            elif reply.status == 200:
                render = _anthropic_body if wire == "anthropic" else _openai_body
                answer = render(body, reply, len(state.requests))
                answer["usage"] = state.prompt_cache.usage(wire, body, answer["usage"])
                payload = json.dumps(answer)
            else:
                auth = headers.get("authorization") or headers.get("x-api-key")
                payload = json.dumps(
                    _error_body(wire, reply.status, auth if reply.echo_auth else None)
                )
            data = payload.encode()
            try:
                self.send_response(reply.status)
                self.send_header("content-type", reply.content_type)
                self.send_header("content-length", str(len(data)))
                if reply.retry_after is not None:
                    self.send_header("retry-after", reply.retry_after)
                if reply.retry_after_date_s is not None:
                    when = time.time() + reply.retry_after_date_s
                    self.send_header("retry-after", formatdate(when, usegmt=True))
                if reply.retry_after_ms is not None:
                    self.send_header("retry-after-ms", reply.retry_after_ms)
                for name, value in {**limited, **reply.headers}.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                return

        def _send(self, status: int, kind: str, data: bytes, headers: dict[str, str]) -> None:
            try:
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                return

    return Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512  # the listen backlog: many clients connect at once in benchmarks


@contextmanager
def fake_llm_server(
    script: list[Reply],
    wire: str = "openai",
    default: Reply | None = None,
    keep_alive: bool = False,
    structured: Structured = "all",
    respond: Callable[[dict[str, Any]], Reply | None] | None = None,
    prompt_cache: bool = True,
    rpm: int | None = None,
    tpm: int | None = None,
) -> Iterator[FakeLLM]:
    """Serve ``script`` on a free port of 127.0.0.1 until the block ends.

    ``rpm`` and ``tpm`` limit the requests and tokens per minute as the providers do: past
    them a request is answered 429 (see ``_fake_limits``), and every answer carries the
    provider's rate-limit headers.

    ``base_url`` is what the SDK wants: with ``/v1`` for openai, the bare host for anthropic.
    ``prompt_cache=False`` turns the simulated provider prompt cache off.
    """
    state = FakeLLM(
        script=list(script),
        default=default,
        structured=structured,
        respond=respond,
        prompt_cache=FakePromptCache(enabled=prompt_cache),
    )
    if rpm is not None or tpm is not None:
        state.limits = FakeLimits(rpm=rpm, tpm=tpm)
    server = _Server(("127.0.0.1", 0), _handler(state, wire, keep_alive))
    host = f"http://127.0.0.1:{server.server_address[1]}"
    state.base_url = host if wire == "anthropic" else f"{host}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.stopping.set()  # hung replies give up their connections
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def schema_name(body: dict[str, Any]) -> str | None:
    """The name of the answer schema a request asks for: OpenAI's ``response_format``
    ``json_schema.name`` or Anthropic's forced ``tool_choice`` name (None: neither)."""
    response_format = body.get("response_format")
    if isinstance(response_format, dict):
        schema = response_format.get("json_schema")
        if isinstance(schema, dict) and isinstance(schema.get("name"), str):
            return str(schema["name"])
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and isinstance(choice.get("name"), str):
        return str(choice["name"])
    return None


def by_schema(
    answers: dict[str, Reply],
) -> Callable[[dict[str, Any]], Reply | None]:
    """A ``respond`` that answers each request with ``answers[its schema name]`` (None for a
    name not listed: the script's next reply or the default)."""

    def respond(body: dict[str, Any]) -> Reply | None:
        name = schema_name(body)
        return answers.get(name) if name is not None else None

    return respond
