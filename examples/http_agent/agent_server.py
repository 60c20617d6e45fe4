"""A tiny scheduling agent served over HTTP (standard library only), as a team's agent
behind an endpoint would be.

It answers ``POST /agent`` with the scheduling example's agent: the request is checkweigh's
``{"id", "input", "metadata"}``, the reply ``{"trace", "final_state"}``. Any language could
serve this; the agent's logic is reused from ``examples/scheduling`` so the two examples score
the same behaviour.

    python examples/http_agent/agent_server.py 8765
"""

from __future__ import annotations

import dataclasses
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scheduling"))

from scheduling_agent.agent import run  # found through the path set above


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as checkweigh's client expects

    def log_message(self, format: str, *args: Any) -> None:
        return  # quiet: the run's report is the output

    def do_POST(self) -> None:
        if self.path != "/agent":
            self._send(404, {"error": f"no such endpoint {self.path}"})
            return
        try:
            request = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
            reply = run(request["input"])
        except (ValueError, KeyError, TypeError) as exc:
            self._send(400, {"error": f"bad request: {exc}"})
            return
        self._send(200, reply)

    def _send(self, status: int, body: Any) -> None:
        data = json.dumps(body, default=_jsonable).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _jsonable(value: Any) -> Any:
    """The agent's tool results hold dataclasses (a calendar's busy blocks): as objects."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def main() -> None:
    """Serve on 127.0.0.1 at the port given (0: a free one), printing the port once ready."""
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
