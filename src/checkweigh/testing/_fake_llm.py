"""LLM servers on 127.0.0.1 that answer from a script, for driving the real ``openai`` and
``anthropic`` SDKs end to end: answers, latency, 429 with Retry-After, 5xx, malformed bodies.
``wire`` picks the format: OpenAI chat completions or Anthropic messages."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


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
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next_reply(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self.lock:
            self.requests.append(body)
            self.headers.append(headers)
            self.times.append(time.monotonic())
            if self.script:
                return self.script.pop(0)
            if self.default is not None:
                return self.default
            return Reply(status=500, raw='{"error": {"message": "script exhausted"}}')


def _openai_body(body: dict[str, Any], reply: Reply, n: int) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "test-model"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.content},
                "finish_reason": "stop",
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


def _error_body(wire: str, status: int) -> dict[str, Any]:
    if wire == "anthropic":
        kind = "rate_limit_error" if status == 429 else "api_error"
        return {"type": "error", "error": {"type": kind, "message": f"scripted {status}"}}
    return {"error": {"message": f"scripted {status}", "type": "test"}}


def _handler(state: FakeLLM, wire: str, keep_alive: bool) -> type[BaseHTTPRequestHandler]:
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

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            reply = state.next_reply(body, {k.lower(): v for k, v in self.headers.items()})
            if reply.delay_s:
                time.sleep(reply.delay_s)
            if reply.raw is not None:
                payload = reply.raw
            elif reply.status == 200:
                render = _anthropic_body if wire == "anthropic" else _openai_body
                payload = json.dumps(render(body, reply, len(state.requests)))
            else:
                payload = json.dumps(_error_body(wire, reply.status))
            data = payload.encode()
            try:
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                if reply.retry_after is not None:
                    self.send_header("retry-after", reply.retry_after)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
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
) -> Iterator[FakeLLM]:
    """Serve ``script`` on a free port of 127.0.0.1 until the block ends.

    ``base_url`` is what the SDK wants: with ``/v1`` for openai, the bare host for anthropic.
    """
    state = FakeLLM(script=list(script), default=default)
    server = _Server(("127.0.0.1", 0), _handler(state, wire, keep_alive))
    host = f"http://127.0.0.1:{server.server_address[1]}"
    state.base_url = host if wire == "anthropic" else f"{host}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
