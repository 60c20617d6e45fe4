"""OTLP/HTTP exporters that send JSON, for ``OTEL_EXPORTER_OTLP_PROTOCOL=http/json``.

The OpenTelemetry Python SDK ships OTLP exporters for ``grpc`` and ``http/protobuf`` only.
These two encode a batch with the SDK's own OTLP encoders and send it as OTLP/JSON, as the
specification writes it (and as, say, the JavaScript SDK's ``http/json`` exporter sends it):
camelCase field names, trace and span ids as hex (not protobuf's base64), enums as numbers.
Endpoint, headers, compression and timeout come from the same ``OTEL_EXPORTER_OTLP_*``
variables the protobuf exporters read. No retries: a failed batch is reported and dropped,
which is enough for an example.
"""

from __future__ import annotations

import base64
import gzip
import json
import logging
import os
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk._logs import ReadableLogRecord
from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

_log = logging.getLogger(__name__)
_IDS = {"traceId", "spanId", "parentSpanId"}
"""The bytes fields OTLP/JSON writes as hex."""


def _setting(signal: str, name: str) -> str | None:
    """``OTEL_EXPORTER_OTLP_<SIGNAL>_<NAME>``, else ``OTEL_EXPORTER_OTLP_<NAME>``."""
    return os.environ.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_{name}") or os.environ.get(
        f"OTEL_EXPORTER_OTLP_{name}"
    )


def _headers(text: str | None) -> dict[str, str]:
    """``key=value,key2=value2`` with percent-encoded values (the variables' format)."""
    headers = {}
    for item in (text or "").split(","):
        key, sep, value = item.partition("=")
        if sep and key.strip():
            headers[key.strip().lower()] = unquote(value.strip())
    return headers


def _hex_ids(node: Any) -> Any:
    """Protobuf's JSON mapping with the ids turned from base64 into hex, as OTLP/JSON has them."""
    if isinstance(node, list):
        return [_hex_ids(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key in _IDS and isinstance(value, str):
            out[key] = base64.b64decode(value).hex()
        else:
            out[key] = _hex_ids(value)
    return out


class _JsonSender:
    """POSTs one signal's OTLP/JSON to its endpoint."""

    def __init__(self, signal: str) -> None:
        specific = os.environ.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT")
        base = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:4318")
        self.url = specific or f"{base.rstrip('/')}/v1/{signal}"
        self.headers = _headers(_setting(signal, "HEADERS"))
        self.gzip = (_setting(signal, "COMPRESSION") or "").lower() == "gzip"
        self.timeout = float(_setting(signal, "TIMEOUT") or 10)
        self.stopped = False

    def send(self, message: Any) -> bool:
        if self.stopped:
            return False
        doc = _hex_ids(MessageToDict(message, use_integers_for_enums=True))
        data = json.dumps(doc, separators=(",", ":")).encode()
        headers = {**self.headers, "content-type": "application/json"}
        if self.gzip:
            data = gzip.compress(data)
            headers["content-encoding"] = "gzip"
        request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                answer.read()
        except (urllib.error.URLError, OSError) as exc:
            _log.warning("OTLP/JSON export to %s failed: %s", self.url, exc)
            return False
        return True


class JsonSpanExporter(SpanExporter):
    """Spans as OTLP/JSON to ``<endpoint>/v1/traces``."""

    def __init__(self) -> None:
        self._sender = _JsonSender("traces")

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        ok = self._sender.send(encode_spans(spans))
        return SpanExportResult.SUCCESS if ok else SpanExportResult.FAILURE

    def shutdown(self) -> None:
        self._sender.stopped = True


class JsonLogExporter(LogRecordExporter):
    """Log records as OTLP/JSON to ``<endpoint>/v1/logs``."""

    def __init__(self) -> None:
        self._sender = _JsonSender("logs")

    def export(self, batch: Sequence[ReadableLogRecord]) -> LogRecordExportResult:
        ok = self._sender.send(encode_logs(batch))
        return LogRecordExportResult.SUCCESS if ok else LogRecordExportResult.FAILURE

    def shutdown(self) -> None:
        self._sender.stopped = True

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True
