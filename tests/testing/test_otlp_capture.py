"""The OTLP/HTTP capture server: what the real OpenTelemetry exporters send (protobuf, gzip,
a bearer token) is kept as OTLP/JSON that the importer's span reader decodes to the same ids,
names and attributes; JSON is kept as sent; what a collector refuses is refused and noted."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import httpx
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Status, StatusCode

from checkweigh.importers._otlp import Span, request_spans
from checkweigh.testing import otlp_capture_server

SPANS = {
    "resourceSpans": [
        {
            "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "b"}}]},
            "scopeSpans": [
                {
                    "spans": [
                        {
                            "traceId": "5b8efff798038103d269b633813fc60c",
                            "spanId": "eee19b7ec3c1b174",
                            "name": "invoke_agent booking",
                            "startTimeUnixNano": "1700000000000000000",
                            "endTimeUnixNano": "1700000001000000000",
                        }
                    ]
                }
            ],
        }
    ]
}


def test_the_real_exporter_posts_protobuf_with_gzip_and_a_token_kept_as_otlp_json(
    tmp_path: Path,
) -> None:
    with otlp_capture_server(token="s3cret") as capture:
        exporter = OTLPSpanExporter(
            endpoint=f"{capture.endpoint}/v1/traces",
            headers={"Authorization": "Bearer s3cret"},
            compression=Compression.Gzip,
        )
        provider = TracerProvider(resource=Resource.create({"service.name": "booking-agent"}))
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        tracer = provider.get_tracer("test")
        with tracer.start_as_current_span("invoke_agent booking") as root:
            root.set_attribute("gen_ai.operation.name", "invoke_agent")
            with tracer.start_as_current_span("execute_tool book_meeting") as tool:
                tool.set_attribute("gen_ai.tool.name", "book_meeting")
                tool.set_status(Status(StatusCode.ERROR, "slot taken"))
        provider.shutdown()
        lines = capture.write_jsonl(tmp_path / "spans.jsonl")
        exports = capture.received("traces")
    assert capture.refused == []
    assert lines == 2  # a simple processor exports each span as it ends
    assert {(e.encoding, e.compression) for e in exports} == {("protobuf", "gzip")}
    assert capture.count("traces") == 2
    records = [json.loads(line) for line in (tmp_path / "spans.jsonl").read_text().splitlines()]
    spans = [s for r in records for s in request_spans(r, None)]
    assert all(isinstance(s, Span) for s in spans)
    tool_span, root_span = spans
    assert isinstance(tool_span, Span)
    assert isinstance(root_span, Span)
    trace_id = f"{root.get_span_context().trace_id:032x}"
    assert (root_span.trace_id, root_span.span_id) == (
        trace_id,
        f"{root.get_span_context().span_id:016x}",
    )
    assert tool_span.parent_id == root_span.span_id
    assert tool_span.attributes == {"gen_ai.tool.name": "book_meeting"}
    assert tool_span.error == "slot taken"
    assert root_span.resource["service.name"] == "booking-agent"
    assert root_span.attributes == {"gen_ai.operation.name": "invoke_agent"}


def test_json_is_kept_as_sent_and_answered_in_json() -> None:
    with otlp_capture_server() as capture:
        sent = json.dumps(SPANS).encode()
        answer = httpx.post(
            f"{capture.endpoint}/v1/traces",
            content=gzip.compress(sent),
            headers={"content-type": "application/json", "content-encoding": "gzip"},
        )
        logs = httpx.post(
            f"{capture.endpoint}/v1/logs/",
            json={"resourceLogs": []},
        )
    assert (answer.status_code, answer.headers["content-type"], answer.json()) == (
        200,
        "application/json",
        {},
    )
    assert logs.status_code == 200
    (traces,) = capture.received("traces")
    assert (traces.encoding, traces.compression, traces.body) == ("json", "gzip", SPANS)
    assert [e.signal for e in capture.received()] == ["traces", "logs"]
    assert capture.count("traces") == 1
    assert capture.count("logs") == 0


def test_what_a_collector_refuses_is_refused_and_noted_without_the_token() -> None:
    with otlp_capture_server(token="s3cret", max_bytes=1000) as capture:
        url = capture.endpoint
        auth = {"authorization": "Bearer s3cret", "content-type": "application/json"}
        answers = [
            httpx.post(f"{url}/v1/traces", json=SPANS),  # no token
            httpx.post(f"{url}/v1/traces", json=SPANS, headers={"authorization": "Bearer no"}),
            httpx.post(f"{url}/v1/metrics", json={}, headers=auth),
            httpx.post(
                f"{url}/v1/traces", content=b"x", headers={**auth, "content-type": "text/plain"}
            ),
            httpx.post(f"{url}/v1/traces", content=b"{", headers=auth),
            httpx.post(f"{url}/v1/traces", content=b"[]", headers=auth),
            httpx.post(
                f"{url}/v1/traces",
                content=b"not gzip",
                headers={**auth, "content-encoding": "gzip"},
            ),
            httpx.post(
                f"{url}/v1/traces",
                content=b"{}",
                headers={**auth, "content-encoding": "br"},
            ),
            httpx.post(
                f"{url}/v1/traces",
                content=gzip.compress(b" " * 5000 + b"{}"),
                headers={**auth, "content-encoding": "gzip"},
            ),
            httpx.post(
                f"{url}/v1/traces",
                content=b"\xff\xff\xff",
                headers={**auth, "content-type": "application/x-protobuf"},
            ),
            httpx.get(f"{url}/v1/traces"),
        ]
    assert [a.status_code for a in answers] == [
        401,
        401,
        404,
        415,
        400,
        400,
        400,
        415,
        413,
        400,
        405,
    ]
    assert [status for status, _ in capture.refused] == [a.status_code for a in answers]
    assert capture.received() == []
    reasons = " ".join(reason for _, reason in capture.refused)
    assert "s3cret" not in reasons
    assert "no OTLP endpoint at '/v1/metrics'" in reasons
    assert "body is over 1000 bytes decompressed" in reasons
    assert "not an OTLP traces request" in reasons
