"""An export request split by trace, as the OTLP receiver keeps it: each trace's spans and
GenAI log records under copies of their resource and scope, what no trace can use counted."""

from __future__ import annotations

from typing import Any

import pytest

from checkweigh.importers import split_request, trace_case, trace_items
from checkweigh.importers._otlp import SpanError

A, B = "0af7651916cd43dd8448eb211c80319c", "6e0c63257de34c926f9efcd03919fb9c"
RESOURCE = {"attributes": [{"key": "service.name", "value": {"stringValue": "bot"}}]}
T = 1_763_900_000_000_000_000


def _span(trace: str, span: str, parent: str | None, name: str, **attrs: str) -> dict[str, Any]:
    return {
        "traceId": trace,
        "spanId": span,
        **({"parentSpanId": parent} if parent else {}),
        "name": name,
        "startTimeUnixNano": str(T),
        "endTimeUnixNano": str(T + 1_000_000),
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()],
    }


def _log(trace: str | None, event: str, body: str) -> dict[str, Any]:
    return {
        **({"traceId": trace, "spanId": "b7ad6b7169203331"} if trace else {}),
        "timeUnixNano": str(T + 500_000),
        "eventName": event,
        "body": {"kvlistValue": {"values": [{"key": "content", "value": {"stringValue": body}}]}},
    }


def test_each_trace_keeps_its_own_items_under_their_resource_and_scope() -> None:
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini"}
    request = {
        "resourceSpans": [
            {
                "resource": RESOURCE,
                # an older exporter's key
                "instrumentationLibrarySpans": [
                    {
                        "scope": {"name": "openai_v2"},
                        "spans": [
                            _span(A, "b7ad6b7169203331", "00f067aa0ba902b7", "chat", **chat),
                            _span(B, "a1b2c3d4e5f60718", None, "chat", **chat),
                            {"traceId": A, "spanId": "zz", "name": "broken"},
                            _span(A, "00f067aa0ba902b7", None, "invoke_agent"),
                        ],
                    }
                ],
            }
        ],
        "resourceLogs": [
            {
                "resource": RESOURCE,
                "scopeLogs": [
                    {
                        "scope": {"name": "openai_v2"},
                        "logRecords": [
                            _log(A, "gen_ai.user.message", "Is HAT170 on time?"),
                            _log(None, "app.started", "hello"),  # not a GenAI event: not kept
                            _log(None, "gen_ai.user.message", "whose?"),  # no trace: refused
                        ],
                    }
                ],
            }
        ],
    }
    split = split_request(request)
    assert sorted(split.chunks) == [A, B]
    a, b = split.chunks[A], split.chunks[B]
    assert (a.spans, a.logs, a.rooted) == (2, 1, True)
    assert (b.spans, b.logs, b.rooted) == (1, 0, True)
    assert split.rejected == 2
    assert "spanId" in split.errors[0]
    assert "traceId is missing" in split.errors[1]
    assert split.ignored_logs == 1
    [rs] = a.request["resourceSpans"]
    assert rs["resource"] == RESOURCE
    assert rs["scopeSpans"][0]["scope"] == {"name": "openai_v2"}
    assert [s["spanId"] for s in rs["scopeSpans"][0]["spans"]] == [
        "b7ad6b7169203331",
        "00f067aa0ba902b7",
    ]
    # read back by the file importer's own functions: one case, the log's message in it
    items = trace_items([a.request])
    assert (len(items.spans), len(items.logs), items.errors) == (2, 1, [])
    case = trace_case(A, items)
    assert not isinstance(case, str)
    assert case.input == "Is HAT170 on time?"


def test_a_trace_without_a_genai_span_makes_no_case() -> None:
    split = split_request(
        {
            "resourceSpans": [
                {
                    "resource": RESOURCE,
                    "scopeSpans": [{"spans": [_span(A, "00f067aa0ba902b7", None, "GET /health")]}],
                }
            ]
        }
    )
    assert trace_case(A, trace_items([split.chunks[A].request])) == (
        "no GenAI span (not an agent's run)"
    )
    assert trace_case(B, trace_items([])) == "GenAI log events but no span"


@pytest.mark.parametrize("doc", [[], {"spans": []}, {"resourceSpans": "x"}])
def test_not_an_export_request(doc: Any) -> None:
    with pytest.raises(SpanError, match="expected an OTLP export request"):
        split_request(doc)
