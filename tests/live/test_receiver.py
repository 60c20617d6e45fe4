"""The OTLP receiver and the live scorer, in process: spans posted as an exporter posts them
(JSON, protobuf, gzip) are kept per trace before the answer, and each complete trace becomes
the same case ``checkweigh import otel`` makes of the same spans, scored by a monitor."""

from __future__ import annotations

import asyncio
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from google.protobuf.json_format import ParseDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from checkweigh.importers import ImportContext, get_format
from checkweigh.live import LiveScorer, LiveSettings, load_monitor
from checkweigh.server import create_app
from checkweigh.store import Store, queue_state, windows
from support.live_airline import FIXTURE, SUITE, TOKEN, Clock, fixture_lines

AUTH = {"Authorization": f"Bearer {TOKEN}"}
MONITOR = """\
name: airline
suite: suite.yaml
window: 1h
filter:
  service: airline-support-agent
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "suite.yaml").write_text(SUITE)
    (tmp_path / "monitor.yaml").write_text(MONITOR)
    return tmp_path


def _score(store: Store, folder: Path, now: float) -> LiveScorer:
    scorer = LiveScorer(
        store, [load_monitor(folder / "monitor.yaml")], LiveSettings(quiet_s=5), clock=Clock(now)
    )

    async def rounds() -> None:
        while await scorer.step():
            pass

    asyncio.run(rounds())
    return scorer


def _results(store: Store, run_id: str) -> dict[str, dict[str, str]]:
    return {
        r.case_id: {name: v.state.value for name, v in r.verdicts.items()}
        for r in store.iter_results(run_id)
    }


def test_json_spans_become_the_importers_cases_scored_by_a_monitor(folder: Path) -> None:
    store = Store(f"sqlite:///{folder / 'live.db'}")
    client = TestClient(create_app(store, token=TOKEN))
    for line in fixture_lines():
        answer = client.post(
            "/v1/traces", content=line, headers={**AUTH, "Content-Type": "application/json"}
        )
        assert answer.status_code == 200, answer.text
        assert answer.json() == {}
    state = queue_state(store)
    assert (state.open, state.done) == (2, 0)
    assert state.chunks >= 2

    import time

    scorer = _score(store, folder, time.time() + 10)
    assert scorer.stats.scored == 2
    assert queue_state(store).done == 2
    [window] = windows(store, "airline")
    assert window.traces == 2
    live = _results(store, window.run_id)
    # the file importer's cases of the same spans, scored by the same checks
    imported = list(get_format("otel").cases(FIXTURE, ImportContext()))
    monitor = load_monitor(folder / "monitor.yaml")
    expected = {
        c.metadata["trace_id"]: {
            n: v.state.value for n, v in monitor.plain.evaluate(c).verdicts.items()
        }
        for c in imported
    }
    assert live == expected
    assert set(live) == {"5b8aa5a2d2c872e8321cf37308d69df2", "9c1e7f0a4b3d2e1f8a7b6c5d4e3f2a1b"}


def test_protobuf_and_gzip_bodies_and_partial_success(folder: Path) -> None:
    store = Store(f"sqlite:///{folder / 'live.db'}")
    client = TestClient(create_app(store, token=TOKEN))
    doc: dict[str, Any] = json.loads(fixture_lines()[0])
    bad = json.loads(json.dumps(doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]))
    bad["spanId"] = "zz"  # not an id: refused, its neighbours kept
    message = ParseDict(doc, ExportTraceServiceRequest())
    body = gzip.compress(message.SerializeToString())
    answer = client.post(
        "/v1/traces",
        content=body,
        headers={**AUTH, "Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"},
    )
    assert answer.status_code == 200, answer.content
    assert answer.headers["content-type"] == "application/x-protobuf"
    assert ExportTraceServiceResponse.FromString(answer.content).partial_success.rejected_spans == 0
    spans = sum(len(ss["spans"]) for rs in doc["resourceSpans"] for ss in rs["scopeSpans"])
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"].append(bad)
    answer = client.post(
        "/v1/traces",
        content=json.dumps(doc),
        headers={**AUTH, "Content-Type": "application/json"},
    )
    assert answer.status_code == 200
    partial = answer.json()["partialSuccess"]
    assert partial["rejectedSpans"] == "1"
    assert "spanId" in partial["errorMessage"]
    assert queue_state(store).open >= 1
    # the protobuf spans and the JSON ones are the same spans: counted twice, kept twice
    from sqlalchemy import func, select

    from checkweigh.store._tables import LiveTraceRow

    with store.engine.connect() as conn:
        total = conn.execute(select(func.sum(LiveTraceRow.spans))).scalar_one()
    assert total == 2 * spans


@pytest.mark.parametrize(
    ("headers", "body", "status", "says"),
    [
        ({"Content-Type": "text/plain"}, b"x", 415, "Content-Type"),
        ({"Content-Type": "application/json"}, b"{not json", 400, "not JSON"),
        ({"Content-Type": "application/json"}, b'{"resourceLogs": []}', 400, "resourceSpans"),
        (
            {"Content-Type": "application/json", "Content-Encoding": "gzip"},
            b"not gzip",
            400,
            "gzip",
        ),
        ({"Content-Type": "application/json", "Content-Encoding": "br"}, b"{}", 415, "gzip"),
        ({"Content-Type": "application/x-protobuf"}, b"\xff\xff\xff", 400, "protobuf"),
    ],
)
def test_bad_bodies_are_refused_with_a_status(
    folder: Path, headers: dict[str, str], body: bytes, status: int, says: str
) -> None:
    store = Store(f"sqlite:///{folder / 'live.db'}")
    client = TestClient(create_app(store, token=TOKEN))
    answer = client.post("/v1/traces", content=body, headers={**AUTH, **headers})
    assert answer.status_code == status
    text = answer.content.decode("utf-8", "replace")
    assert says in text
    assert queue_state(store).chunks == 0


def test_a_gzip_bomb_stops_at_the_decompressed_limit(folder: Path) -> None:
    store = Store(f"sqlite:///{folder / 'live.db'}")
    client = TestClient(create_app(store, token=TOKEN, otlp_limit=1024 * 1024))
    bomb = gzip.compress(b" " * (50 * 1024 * 1024))
    answer = client.post(
        "/v1/traces",
        content=bomb,
        headers={**AUTH, "Content-Type": "application/json", "Content-Encoding": "gzip"},
    )
    assert answer.status_code == 413
    assert "OTLP limit" in answer.json()["message"]


def test_token_rules_are_the_uploads(folder: Path) -> None:
    store = Store(f"sqlite:///{folder / 'live.db'}")
    line = fixture_lines()[0]
    open_server = TestClient(create_app(store))
    refused = open_server.post(
        "/v1/traces", content=line, headers={"Content-Type": "application/json"}
    )
    assert refused.status_code == 403
    assert "no token" in refused.json()["message"]
    guarded = TestClient(create_app(store, token=TOKEN))
    for headers in ({}, {"Authorization": "Bearer wrong-token-of-some-length"}):
        answer = guarded.post(
            "/v1/traces", content=line, headers={**headers, "Content-Type": "application/json"}
        )
        assert answer.status_code == 401
    assert queue_state(store).chunks == 0


def test_a_lone_surrogate_in_a_span_is_kept_and_scored(folder: Path) -> None:
    store = Store(f"sqlite:///{folder / 'live.db'}")
    client = TestClient(create_app(store, token=TOKEN))
    # the standard library's JSON writer escapes a lone surrogate: valid JSON orjson refuses
    for line in fixture_lines():
        doc = json.loads(line)
        for rs in doc["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for span in ss["spans"]:
                    span["attributes"].append(
                        {"key": "note", "value": {"stringValue": "half \ud800 a pair"}}
                    )
        body = json.dumps(doc)
        assert "\\ud800" in body
        answer = client.post(
            "/v1/traces", content=body, headers={**AUTH, "Content-Type": "application/json"}
        )
        assert answer.status_code == 200, answer.text
    import time

    scorer = _score(store, folder, time.time() + 10)
    assert scorer.stats.scored == 2
    [window] = windows(store, "airline")
    results = list(store.iter_results(window.run_id, with_cases=True))
    assert len(results) == 2
    assert all(b"half \\\\ud800 a pair" in (r.body or b"") for r in results)


def test_metrics_are_refused_with_where_they_belong(folder: Path) -> None:
    store = Store(f"sqlite:///{folder / 'live.db'}")
    client = TestClient(create_app(store, token=TOKEN))
    answer = client.post(
        "/v1/metrics", content=b"{}", headers={**AUTH, "Content-Type": "application/json"}
    )
    assert answer.status_code == 404
    assert "OTEL_METRICS_EXPORTER=none" in answer.json()["message"]
