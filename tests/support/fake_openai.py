"""A chat-completions server on 127.0.0.1 that answers from a script, for driving the real
``openai`` SDK end to end: answers, latency, 429 with Retry-After, 5xx, malformed bodies."""

from __future__ import annotations

import json
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


@dataclass
class FakeOpenAI:
    """The server's script and what it received."""

    script: list[Reply] = field(default_factory=list)
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
            if not self.script:
                return Reply(status=500, raw='{"error": {"message": "script exhausted"}}')
            return self.script.pop(0)


def _handler(state: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
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
                payload = json.dumps(
                    {
                        "id": f"chatcmpl-{len(state.requests)}",
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
                        "usage": {
                            "prompt_tokens": 120,
                            "completion_tokens": 18,
                            "total_tokens": 138,
                        },
                    }
                )
            else:
                payload = json.dumps(
                    {"error": {"message": f"scripted {reply.status}", "type": "test"}}
                )
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


@contextmanager
def fake_openai_server(script: list[Reply]) -> Iterator[FakeOpenAI]:
    """Serve ``script`` on a free port of 127.0.0.1 until the block ends."""
    state = FakeOpenAI(script=list(script))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
