"""A scripted HTTP agent on 127.0.0.1 for tests of the http target: each case id gets its
own list of replies (a 429 with Retry-After, a 500, a hang, malformed JSON, ...), answered
in order; past its list (or for an id not scripted) it books the meeting the input asks."""

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


@dataclass(frozen=True)
class Reply:
    """One scripted answer."""

    status: int = 200
    body: Any = None
    """JSON to send; None: the default booking for the request."""
    raw: bytes | None = None
    """Bytes to send as they are (malformed JSON)."""
    delay_s: float = 0.0
    hang: bool = False
    """Never answer (until the server stops)."""
    retry_after: str | None = None
    headers: dict[str, str] = field(default_factory=dict)


def booking(request: dict[str, Any]) -> dict[str, Any]:
    """What the well-behaved agent answers: it books the slot the input names."""
    slot = str(request.get("input", {}).get("time", "10:00"))
    return {
        "trace": [
            {"kind": "user", "content": f"Book {slot}"},
            {"kind": "tool_call", "name": "book_meeting", "arguments": {"time": slot}},
            {"kind": "assistant", "content": f"Booked at {slot}."},
        ],
        "final_state": {"booked": True, "time": slot},
    }


@dataclass
class Agent:
    """The server's script and what it received."""

    script: dict[str, list[Reply]] = field(default_factory=dict)
    url: str = ""
    requests: list[tuple[float, dict[str, Any], dict[str, str]]] = field(default_factory=list)
    """Each request: when it came (monotonic), its JSON body and its headers (lower case)."""
    stopping: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next_reply(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self.lock:
            self.requests.append((time.monotonic(), body, headers))
            queue = self.script.get(str(body.get("id")))
            return queue.pop(0) if queue else Reply()

    def calls(self, case_id: str) -> list[float]:
        """When the requests for ``case_id`` came."""
        return [t for t, body, _ in self.requests if body.get("id") == case_id]


def _handler(state: Agent) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            headers = {k.lower(): v for k, v in self.headers.items()}
            reply = state.next_reply(body, headers)
            if reply.delay_s:
                time.sleep(reply.delay_s)
            if reply.hang:
                state.stopping.wait()
                self.close_connection = True
                return
            if reply.raw is not None:
                data = reply.raw
            else:
                data = json.dumps(booking(body) if reply.body is None else reply.body).encode()
            try:
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                if reply.retry_after is not None:
                    self.send_header("retry-after", reply.retry_after)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up
                return

    return Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256


@contextmanager
def http_agent(script: dict[str, list[Reply]] | None = None) -> Iterator[Agent]:
    """Serve the scripted agent on a free port of 127.0.0.1 until the block ends."""
    state = Agent(script={k: list(v) for k, v in (script or {}).items()})
    server = _Server(("127.0.0.1", 0), _handler(state))
    state.url = f"http://127.0.0.1:{server.server_address[1]}/agent"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.stopping.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def closed_port() -> int:
    """A port of 127.0.0.1 nothing listens on (connections to it are refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
