"""An OTLP/HTTP collector on 127.0.0.1 that keeps what it receives, for tests and docs.

:func:`otlp_capture_server` accepts ``POST /v1/traces`` and ``POST /v1/logs`` as a collector
does: the body in protobuf (``application/x-protobuf``, decoded with ``opentelemetry-proto``,
the ``checkweigh[otlp]`` extra) or OTLP/JSON (``application/json``), plain or with
``Content-Encoding: gzip`` (or ``deflate``), answered 200 with an empty
``Export*ServiceResponse`` in the request's encoding. Each request is kept as OTLP/JSON
(protobuf through ``google.protobuf.json_format.MessageToDict``: camelCase keys, base64 ids,
enum names; JSON as sent), so a test can write them out as the ``.jsonl`` file that
``checkweigh import otel`` reads. With a ``token``, a request without
``Authorization: Bearer <token>`` is refused 401; what was refused is kept (status and reason,
never the header).
"""

from __future__ import annotations

import json
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal, NamedTuple

Signal = Literal["traces", "logs"]
Encoding = Literal["protobuf", "json"]

_PATHS: dict[str, Signal] = {"/v1/traces": "traces", "/v1/logs": "logs"}
_TYPES: dict[str, Encoding] = {"application/x-protobuf": "protobuf", "application/json": "json"}
DEFAULT_MAX_BYTES = 32 * 1024 * 1024
"""The largest body accepted, decompressed (a collector's default is of this order)."""


@dataclass(frozen=True)
class Export:
    """One export request the server accepted."""

    signal: Signal
    """``traces`` or ``logs``: the path it came to."""
    encoding: Encoding
    """How its body was encoded."""
    compression: str | None
    """Its ``Content-Encoding`` (None: sent plain)."""
    body: dict[str, Any]
    """The request as OTLP/JSON (``{"resourceSpans": [...]}`` or ``{"resourceLogs": [...]}``)."""

    def items(self) -> int:
        """How many spans (or log records) the request holds."""
        outer, inner, leaf = (
            ("resourceSpans", "scopeSpans", "spans")
            if self.signal == "traces"
            else ("resourceLogs", "scopeLogs", "logRecords")
        )
        return sum(
            len(scope.get(leaf) or ())
            for resource in self.body.get(outer) or ()
            for scope in resource.get(inner) or ()
        )


@dataclass
class OtlpCapture:
    """The server's address and what it received."""

    endpoint: str = ""
    """``http://127.0.0.1:<port>``: the value for ``OTEL_EXPORTER_OTLP_ENDPOINT``."""
    token: str | None = None
    """The bearer token a request must carry (None: any request is accepted)."""
    max_bytes: int = DEFAULT_MAX_BYTES
    exports: list[Export] = field(default_factory=list)
    """The accepted requests, in arrival order."""
    refused: list[tuple[int, str]] = field(default_factory=list)
    """The refused requests: the status answered and why."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def received(self, signal: Signal | None = None) -> list[Export]:
        """The accepted requests (of one signal, or all), in arrival order."""
        with self.lock:
            return [e for e in self.exports if signal is None or e.signal == signal]

    def count(self, signal: Signal) -> int:
        """How many spans (``traces``) or log records (``logs``) were accepted."""
        return sum(e.items() for e in self.received(signal))

    def write_jsonl(self, path: Path) -> int:
        """Write every accepted request as one OTLP/JSON line, in arrival order; returns how
        many lines were written."""
        exports = self.received()
        with path.open("w", encoding="utf-8") as out:
            for export in exports:
                out.write(json.dumps(export.body, separators=(",", ":")) + "\n")
        return len(exports)


class _Refusal(NamedTuple):
    """Why a request is refused: the status answered and the reason."""

    status: int
    reason: str


def _decompress(data: bytes, encoding: str, limit: int) -> bytes | _Refusal:
    if encoding in ("", "identity"):
        out = data
    elif encoding in ("gzip", "deflate"):
        # gzip: a gzip member; deflate: a zlib stream, as the OTLP exporters send it
        wbits = 16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS
        try:
            out = zlib.decompressobj(wbits).decompress(data, limit + 1)
        except zlib.error as exc:
            return _Refusal(400, f"body is not valid {encoding}: {exc}")
    else:
        return _Refusal(415, f"Content-Encoding {encoding[:40]!r} is not supported (gzip, deflate)")
    if len(out) > limit:
        return _Refusal(413, f"body is over {limit} bytes decompressed")
    return out


def _decode(signal: Signal, encoding: Encoding, data: bytes) -> dict[str, Any] | _Refusal:
    if encoding == "json":
        try:
            body = json.loads(data)
        except ValueError as exc:
            return _Refusal(400, f"body is not JSON: {exc}")
        if not isinstance(body, dict):
            return _Refusal(400, f"body is a JSON {type(body).__name__}; expected an object")
        return body
    try:
        from google.protobuf.json_format import MessageToDict
        from google.protobuf.message import DecodeError
        from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
            ExportLogsServiceRequest,
        )
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )
    except ImportError:
        return _Refusal(415, "protobuf needs opentelemetry-proto: pip install checkweigh[otlp]")
    message = ExportTraceServiceRequest() if signal == "traces" else ExportLogsServiceRequest()
    try:
        message.ParseFromString(data)
    except DecodeError as exc:
        return _Refusal(400, f"body is not an OTLP {signal} request: {exc}")
    return MessageToDict(message)


def _accept(state: OtlpCapture, path: str, headers: Any, data: bytes) -> Export | _Refusal:
    """The export a POST to ``path`` holds, or why it is refused."""
    signal = _PATHS.get(path)
    if signal is None:
        return _Refusal(404, f"no OTLP endpoint at {path[:100]!r}")
    if state.token is not None and headers.get("authorization") != f"Bearer {state.token}":
        return _Refusal(401, "a bearer token is required")
    kind = (headers.get("content-type") or "").split(";", 1)[0].strip().lower()
    encoding = _TYPES.get(kind)
    if encoding is None:
        return _Refusal(415, f"Content-Type {kind[:100]!r} is not OTLP")
    compression = (headers.get("content-encoding") or "").strip().lower()
    plain = _decompress(data, compression, state.max_bytes)
    if isinstance(plain, _Refusal):
        return plain
    body = _decode(signal, encoding, plain)
    if isinstance(body, _Refusal):
        return body
    return Export(signal, encoding, compression or None, body)


def _handler(state: OtlpCapture) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # exporters keep their connection open

        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            return

        def do_GET(self) -> None:
            self._refuse(405, "only POST is accepted")

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            data = self.rfile.read(length)  # read it all, so the connection stays usable
            found = _accept(state, self.path.split("?", 1)[0].rstrip("/"), self.headers, data)
            if isinstance(found, _Refusal):
                self._refuse(found.status, found.reason)
                return
            with state.lock:
                state.exports.append(found)
            # an empty Export*ServiceResponse: no bytes in protobuf, {} in JSON
            json_answer = found.encoding == "json"
            self._send(200, "application/json" if json_answer else "application/x-protobuf", b"")

        def _refuse(self, status: int, reason: str) -> None:
            with state.lock:
                state.refused.append((status, reason))
            self._send(status, "application/json", json.dumps({"message": reason}).encode())

        def _send(self, status: int, kind: str, data: bytes) -> None:
            if kind == "application/json" and not data:
                data = b"{}"
            try:
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the exporter gave up
                return

    return Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True


@contextmanager
def otlp_capture_server(
    token: str | None = None, max_bytes: int = DEFAULT_MAX_BYTES
) -> Iterator[OtlpCapture]:
    """Receive OTLP/HTTP on a free port of 127.0.0.1 until the block ends.

    Args:
        token: the bearer token a request must carry (None: no token needed).
        max_bytes: the largest body accepted, decompressed (413 past it).
    """
    state = OtlpCapture(token=token, max_bytes=max_bytes)
    server = _Server(("127.0.0.1", 0), _handler(state))
    state.endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
