"""The OTLP/HTTP receiver: ``POST /v1/traces`` and ``POST /v1/logs``, as an OpenTelemetry SDK's
exporter (or a Collector's ``otlphttp`` exporter) sends them.

Bodies are protobuf (``application/x-protobuf``, needs the ``otlp`` extra) or JSON
(``application/json``), optionally gzip-compressed; the compressed size is bounded by the
server's upload limit and the decompressed size by ``otlp_limit``. Every trace's spans are
stored (see :func:`checkweigh.store.keep_chunks`) before the request is acknowledged: a 200
means the spans are in the database. The answer is the service's response message in the
request's encoding, its ``partialSuccess`` counting the spans (or log records) refused and
why. Failures follow the OTLP/HTTP rules: 400 with a ``google.rpc.Status`` for a body that
cannot be read (not retried), 503 with ``Retry-After`` when the database cannot take the
spans now (the exporter retries). Like an upload, a request needs the server's token.
"""

from __future__ import annotations

import zlib
from typing import Any, Literal

import anyio.to_thread
import orjson
from fastapi import APIRouter, Request
from starlette.responses import Response

from .._text import NOT_JSON, json_with_surrogates
from ..errors import CheckweighError, StoreError
from ..importers import SplitRequest, split_request
from ..store import Chunk, keep_chunks
from ._errors import _log

router = APIRouter(include_in_schema=True, tags=["otlp"])

OTLP_LIMIT = 32 * 1024 * 1024
"""The largest decompressed OTLP body read, in bytes, unless told otherwise (32 MiB: the
SDK's default batch of 512 spans is well under 1 MiB even with message content)."""
_PROTOBUF = "application/x-protobuf"
_JSON = "application/json"
Signal = Literal["traces", "logs"]
_KEY = {"traces": "resourceSpans", "logs": "resourceLogs"}
_REJECTED = {"traces": "rejectedSpans", "logs": "rejectedLogRecords"}


class OtlpRefusal(CheckweighError):
    """A request refused: its status and one line on why."""

    def __init__(self, status: int, message: str, *, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _status_message(code: int, message: str) -> bytes:
    """A ``google.rpc.Status`` (code, message) in protobuf's wire format: two fields, written
    here rather than loading googleapis' protos for them."""
    text = message.encode("utf-8", "replace")
    return b"\x08" + _varint(code) + b"\x12" + _varint(len(text)) + text


def _refused(exc: OtlpRefusal, binary: bool) -> Response:
    code = {400: 3, 401: 16, 403: 7, 413: 8, 415: 3, 503: 14}.get(exc.status, 2)  # rpc codes
    headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after is not None else None
    if binary:
        body, kind = _status_message(code, exc.message), _PROTOBUF
    else:
        body, kind = orjson.dumps({"code": code, "message": exc.message}), _JSON
    return Response(body, status_code=exc.status, media_type=kind, headers=headers)


def _decompressed(body: bytes, encoding: str, limit: int) -> bytes:
    if encoding in ("", "identity"):
        if len(body) > limit:
            raise OtlpRefusal(413, f"body: larger than the OTLP limit of {limit:,} bytes")
        return body
    if encoding not in ("gzip", "deflate"):
        raise OtlpRefusal(415, f"Content-Encoding: expected gzip or none, got {encoding[:40]!r}")
    # wbits 47: a gzip or zlib stream, told apart by its header; max_length stops a bomb
    inflater = zlib.decompressobj(47 if encoding == "gzip" else 15)
    try:
        out = inflater.decompress(body, limit + 1)
    except zlib.error as exc:
        raise OtlpRefusal(400, f"body: not valid {encoding} ({exc})") from None
    if len(out) > limit:
        raise OtlpRefusal(413, f"body: decompresses past the OTLP limit of {limit:,} bytes")
    if not inflater.eof:
        raise OtlpRefusal(400, f"body: the {encoding} stream is truncated")
    return out


def _from_protobuf(signal: Signal, body: bytes) -> dict[str, Any]:
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
        raise OtlpRefusal(
            415,
            "Content-Type: protobuf needs the otlp extra on the server (pip install "
            "'checkweigh[otlp]'); send application/json, or install it",
        ) from None
    message = ExportTraceServiceRequest() if signal == "traces" else ExportLogsServiceRequest()
    try:
        message.ParseFromString(body)
    except DecodeError as exc:
        raise OtlpRefusal(400, f"body: not an OTLP {signal} request in protobuf ({exc})") from None
    decoded: dict[str, Any] = MessageToDict(message)
    return decoded  # protobuf refuses a string that is not UTF-8: no lone surrogate here


def _from_json(signal: Signal, body: bytes) -> Any:
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        found = json_with_surrogates(body)  # valid JSON orjson refuses: a lone "\ud800"
        if found is NOT_JSON:
            raise OtlpRefusal(400, f"body: not JSON ({exc})") from None
        return found


def read_request(signal: Signal, kind: str, encoding: str, body: bytes, limit: int) -> SplitRequest:
    """An export request's items per trace.

    Raises:
        OtlpRefusal: a body that cannot be read, in a kind or encoding not taken, or too large.
    """
    binary = kind == _PROTOBUF
    if not binary and kind != _JSON:
        raise OtlpRefusal(
            415, f"Content-Type: expected {_PROTOBUF} or {_JSON}, got {kind[:60] or 'none'!r}"
        )
    raw = _decompressed(body, encoding, limit)
    doc = _from_protobuf(signal, raw) if binary else _from_json(signal, raw)
    if binary and not doc:  # an empty request is valid protobuf: nothing to keep
        doc = {_KEY[signal]: []}
    if not isinstance(doc, dict) or not isinstance(doc.get(_KEY[signal]), list):
        got = f"keys {sorted(doc)[:4]}" if isinstance(doc, dict) else type(doc).__name__
        raise OtlpRefusal(
            400, f"body: expected an OTLP {signal} request with '{_KEY[signal]}', got {got}"
        )
    other = _KEY["logs" if signal == "traces" else "traces"]
    doc.pop(other, None)  # each endpoint takes its own signal only
    return split_request(doc)


def _chunks(split: SplitRequest) -> list[Chunk]:
    return [
        Chunk(c.trace_id, orjson.dumps(c.request), c.spans + c.logs, c.rooted)
        for c in split.chunks.values()
    ]


def _answer(signal: Signal, split: SplitRequest, binary: bool) -> Response:
    """The service's response: empty, or a partial success counting what was refused."""
    message = "; ".join(split.errors)[:1000]
    partial = (
        {"partialSuccess": {_REJECTED[signal]: str(split.rejected), "errorMessage": message}}
        if split.rejected
        else {}
    )
    if not binary:
        return Response(orjson.dumps(partial), media_type=_JSON)
    if not partial:
        return Response(b"", media_type=_PROTOBUF)
    # field 1 partial_success { field 1 rejected (int64), field 2 error_message }
    text = message.encode("utf-8", "replace")
    inner = b"\x08" + _varint(split.rejected) + b"\x12" + _varint(len(text)) + text
    return Response(b"\x0a" + _varint(len(inner)) + inner, media_type=_PROTOBUF)


async def _receive(signal: Signal, request: Request) -> Response:
    kind = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    binary = kind == _PROTOBUF
    encoding = request.headers.get("content-encoding", "").strip().lower()
    try:
        if not binary and kind != _JSON:  # before the token, as an upload's body is checked
            raise OtlpRefusal(
                415, f"Content-Type: expected {_PROTOBUF} or {_JSON}, got {kind[:60] or 'none'!r}"
            )
        if not request.app.state.token_set:
            raise OtlpRefusal(
                403,
                "traces are refused: this server has no token (start it with CHECKWEIGH_TOKEN "
                "and give the exporter OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20<token>)",
            )
        body = await request.body()
        limit: int = request.app.state.otlp_limit
        split = await anyio.to_thread.run_sync(read_request, signal, kind, encoding, body, limit)
        chunks = _chunks(split)
        try:
            await anyio.to_thread.run_sync(
                keep_chunks, request.app.state.store, chunks, request.app.state.wall_clock()
            )
        except StoreError as exc:
            _log.warning("OTLP spans not kept: %s", exc)
            raise OtlpRefusal(
                503, "the store cannot keep spans now; retry", retry_after=2
            ) from None
    except OtlpRefusal as exc:
        return _refused(exc, binary)
    return _answer(signal, split, binary)


@router.post("/v1/traces", summary="Receive spans (OTLP/HTTP)")
async def receive_traces(request: Request) -> Response:
    """Keep the spans of an OTLP export request (protobuf or JSON, gzip or not); a trace
    becomes a case for the monitors once it is complete."""
    return await _receive("traces", request)


@router.post("/v1/logs", summary="Receive GenAI log events (OTLP/HTTP)")
async def receive_logs(request: Request) -> Response:
    """Keep the GenAI log events (message content) of an OTLP export request with the traces
    they name; other log records are not kept."""
    return await _receive("logs", request)


@router.post("/v1/metrics", include_in_schema=False)
async def refuse_metrics(request: Request) -> Response:
    """An exporter sending metrics here is told where they belong (not silently dropped)."""
    kind = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    refusal = OtlpRefusal(
        404,
        "checkweigh receives traces (/v1/traces) and logs (/v1/logs), not metrics: set "
        "OTEL_METRICS_EXPORTER=none, or send metrics to a collector",
    )
    return _refused(refusal, kind == _PROTOBUF)
