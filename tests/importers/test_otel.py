"""The ``otel`` format: OTLP/JSON GenAI spans (as the Collector's file exporter writes them)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from checkweigh.cli import app
from checkweigh.core import Case
from checkweigh.errors import CaseFileError
from checkweigh.importers import ImportContext, get_format

FIXTURES = Path(__file__).parent / "fixtures"
AIRLINE = FIXTURES / "otel_airline.jsonl"
EVENTS = FIXTURES / "otel_events.json"
runner = CliRunner()


def _cases(path: Path, **options: Any) -> tuple[list[Case], ImportContext]:
    ctx = ImportContext(on_bad_record="skip")
    return list(get_format("otel", **options).cases(path, ctx)), ctx


def _shape(case: Case) -> list[tuple[str, str | None]]:
    return [(s.kind, s.name) for s in case.trace]


def test_a_multi_turn_agent_trace_split_and_out_of_order_becomes_one_ordered_case() -> None:
    cases, ctx = _cases(AIRLINE)
    assert (ctx.records, ctx.cases, ctx.skipped) == (4, 2, [])
    case = cases[0]
    # the id comes from the root span's checkweigh.case.id; spans came over lines 1, 3 and 4
    assert case.id == "cancel-ZFA04Y-basic-economy"
    assert case.metadata == {
        "source": "otel",
        "trace_id": "5b8aa5a2d2c872e8321cf37308d69df2",
        "service.name": "airline-support-agent",
        "gen_ai.conversation.id": "conv_5501",
    }
    assert case.input == "Hi, I need to cancel my reservation ZFA04Y. My user id is mia_li_3668."
    # every message once, although each chat span repeats the whole history
    assert _shape(case) == [
        ("event", "airline_agent"),
        ("system", None),
        ("user", None),
        ("assistant", None),  # asked for a tool, no text
        ("tool_call", "get_reservation_details"),
        ("assistant", None),
        ("user", None),
        ("assistant", None),
        ("tool_call", "cancel_reservation"),
        ("event", "refund_policy_agent"),
        ("system", None),  # the sub-agent's own prompt (older indexed attributes)
        ("user", None),
        ("assistant", None),
        ("user", None),
        ("assistant", None),
    ]
    steps = case.trace
    assert [s.content for s in steps if s.kind == "user"][1] == (
        "I changed my plans. Please cancel it anyway, yes I confirm."
    )
    lookup, cancel = steps[4], steps[8]
    assert lookup.arguments == {"reservation_id": "ZFA04Y"}
    assert lookup.result["cabin"] == "basic_economy"
    assert lookup.error is None
    assert (lookup.id, lookup.parent_id, lookup.latency_ms) == (
        "b2c3d4e5f6a70812",
        "051581bf3cb55c13",
        260.0,
    )
    assert lookup.attributes == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.call.id": "call_Qm3x",
    }
    assert cancel.error == (
        "Cancellation not allowed: basic economy booked more than 24 hours ago without insurance"
    )
    # the sub-agent's steps nest under its agent step, the rest under the root agent
    sub = steps[9]
    assert sub.id == "f6a7b8c90a1b2c56"
    assert sub.parent_id == "051581bf3cb55c13"
    assert [s.parent_id for s in steps[10:13]] == [sub.id] * 3
    assert steps[12].content is not None
    assert steps[12].content.startswith("Basic economy fares")
    # model and usage on the answer of each chat span, by their normalised names
    answer = steps[5]
    assert answer.content is not None
    assert answer.content.startswith("Your reservation ZFA04Y")
    assert answer.id == "c3d4e5f6a7b80923"
    assert answer.latency_ms == 1350.0
    assert {k: answer.attributes[k] for k in ("model", "input_tokens", "output_tokens")} == {
        "model": "gpt-4o-2024-08-06",
        "input_tokens": 1702,
        "output_tokens": 61,
    }
    assert not any(k.startswith("gen_ai.input") for k in answer.attributes)
    assert steps[12].attributes["input_tokens"] == 310  # from gen_ai.usage.prompt_tokens
    # the agent span's own (repeated) totals are kept as given, not counted again
    assert "input_tokens" not in steps[0].attributes
    assert steps[0].attributes["gen_ai.usage.input_tokens"] == 9050
    # the case took as long as its root span, not the sum of the nested spans
    assert case.latency_ms == 9200.0
    assert case.total_latency_ms() == 9200.0
    assert steps == sorted(steps, key=lambda s: s.timestamp or 0)


def test_older_indexed_attributes_without_tool_spans_give_paired_tool_calls() -> None:
    case = _cases(AIRLINE)[0][1]
    assert case.id == "9c1e7f0a4b3d2e1f8a7b6c5d4e3f2a1b"  # no case id attribute: the trace id
    assert _shape(case) == [
        ("system", None),
        ("user", None),
        ("assistant", None),
        ("tool_call", "get_user_details"),
        ("assistant", None),
        ("tool_call", "update_reservation_baggages"),
        ("assistant", None),
    ]
    bags = case.trace[5]
    assert bags.id == "call_u2"
    assert bags.parent_id == "5555eeee6666ffff"
    assert bags.arguments == {
        "reservation_id": "SDZQKO",
        "total_baggages": 2,
        "nonfree_baggages": 0,
        "payment_id": "credit_card_7815826",
    }
    assert bags.result == {"reservation_id": "SDZQKO", "total_baggages": 2, "nonfree_baggages": 0}
    # assistant text that came with a tool call stays assistant content
    assert case.trace[4].content == "Let me add the bag now."
    assert case.output.startswith("Done: reservation SDZQKO now has 2 checked bags")
    assert case.latency_ms == 4100.0  # the workflow span (which makes no step) is the root


def test_message_events_base64_ids_and_numeric_times_in_one_json_document() -> None:
    (case,), ctx = _cases(EVENTS)
    assert ctx.records == 1
    assert case.id == "0af7651916cd43dd8448eb211c80319c"
    assert _shape(case) == [
        ("system", None),
        ("user", None),
        ("assistant", None),
        ("tool_call", "get_flight_status"),
        ("assistant", None),
    ]
    tool = case.trace[3]
    # the tool span lacked arguments and result: taken from the choice and the tool message
    assert tool.arguments == {"flight_number": "HAT170", "date": "2024-05-16"}
    assert tool.result == "delayed"
    assert tool.id == "3c1d2e3f4a5b6c7d"
    assert case.output == "Flight HAT170 on 2024-05-16 is delayed."
    assert case.trace[2].attributes["cost_usd"] == 0.0041
    assert case.latency_ms == 2100.0


def test_the_cases_do_not_depend_on_the_order_of_lines_or_spans(tmp_path: Path) -> None:
    expected = {c.id: c for c in _cases(AIRLINE)[0]}
    lines = AIRLINE.read_text().splitlines()
    rng = random.Random(7)
    for attempt in range(5):
        shuffled = []
        for line in rng.sample(lines, len(lines)):
            request = json.loads(line)
            for rs in request["resourceSpans"]:
                for ss in rs["scopeSpans"]:
                    rng.shuffle(ss["spans"])
            shuffled.append(json.dumps(request))
        path = tmp_path / f"shuffled-{attempt}.jsonl"
        path.write_text("\n".join(shuffled) + "\n")
        assert {c.id: c for c in _cases(path)[0]} == expected


def _request(trace: int, span: int, parent: int | None, start_ms: int) -> str:
    return json.dumps(
        {
            "resourceSpans": [
                {
                    "scopeSpans": [
                        {
                            "spans": [
                                {
                                    "traceId": f"{trace:032x}",
                                    "spanId": f"{span:016x}",
                                    "parentSpanId": f"{parent:016x}" if parent else "",
                                    "name": "chat gpt-4o",
                                    "startTimeUnixNano": str(start_ms * 10**6),
                                    "endTimeUnixNano": str((start_ms + 5) * 10**6),
                                    "attributes": [
                                        {
                                            "key": "gen_ai.operation.name",
                                            "value": {"stringValue": "chat"},
                                        },
                                        {
                                            "key": "gen_ai.usage.output_tokens",
                                            "value": {"intValue": "7"},
                                        },
                                    ],
                                }
                            ]
                        }
                    ]
                }
            ]
        }
    )


def test_a_finished_trace_is_emitted_before_the_file_ends(tmp_path: Path) -> None:
    # 50 traces one after another, each a root and a child on consecutive lines
    path = tmp_path / "many.jsonl"
    lines = []
    for t in range(1, 51):
        lines += [_request(t, 2 * t, None, t * 100), _request(t, 2 * t + 1, 2 * t, t * 100 + 1)]
    path.write_text("\n".join(lines) + "\n")
    ctx = ImportContext()
    reader = get_format("otel", flush_after_lines=3).cases(path, ctx)
    first = next(reader)
    assert first.id == f"{1:032x}"
    assert len(first.trace) == 2
    assert ctx.records < 10  # emitted while most of the file is still unread
    rest = list(reader)
    assert [c.id for c in rest] == [f"{t:032x}" for t in range(2, 51)]
    assert ctx.cases == 50


def test_a_span_arriving_after_its_trace_was_emitted_is_reported(tmp_path: Path) -> None:
    lines = [_request(1, 2, None, 0)] + [_request(t, 2 * t, None, t) for t in range(2, 6)]
    lines.append(_request(1, 3, 2, 1))  # a late child of trace 1, five lines on
    path = tmp_path / "late.jsonl"
    path.write_text("\n".join(lines) + "\n")
    cases, ctx = _cases(path, flush_after_lines=2)
    assert len(cases) == 5
    assert [(b.line, b.message[:40]) for b in ctx.skipped] == [
        (6, "span 0000000000000003 of trace 000000000")
    ]
    with pytest.raises(CaseFileError, match=r"late\.jsonl:6: span 0000000000000003"):
        list(get_format("otel", flush_after_lines=2).cases(path, ImportContext()))


def test_the_case_id_attribute_is_a_choice() -> None:
    cases, _ = _cases(AIRLINE, case_id_attribute="gen_ai.conversation.id")
    assert [c.id for c in cases] == ["conv_5501", "9c1e7f0a4b3d2e1f8a7b6c5d4e3f2a1b"]


SUITE = """\
name: airline-otel
cases: cases.jsonl
checks:
  looked_up_first:
    type: before
    first: get_reservation_details
    then: cancel_reservation
  cancelled:
    type: tool_called
    step: {name: cancel_reservation, arguments: {reservation_id: ZFA04Y}}
  explains_policy:
    type: contains
    path: output
    values: ["24 hours", "insurance"]
    mode: all
rubrics:
  support:
    weights:
      looked_up_first: 0.3
      cancelled: 0.3
      explains_policy: 0.4
thresholds:
  metrics_pass_threshold: 0
  cases_pass_threshold: 0
"""


def _write_cases(folder: Path, *sources: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "cases.jsonl").open("w") as out:
        for source in sources:
            for case in get_format("otel").cases(source, ImportContext()):
                out.write(case.model_dump_json() + "\n")
    (folder / "suite.yaml").write_text(SUITE)
    return folder / "suite.yaml"


def test_imported_traces_are_scored_end_to_end_by_the_cli(tmp_path: Path) -> None:
    suite = _write_cases(tmp_path / "s", AIRLINE, EVENTS)
    out_json = tmp_path / "report.json"
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    result = runner.invoke(app, ["run", str(suite), "--db", db, "--json", str(out_json)])
    assert result.exit_code == 0, result.output
    report = json.loads(out_json.read_text())
    cases = {c["case_id"]: c for c in report["results"]}
    assert set(cases) == {
        "cancel-ZFA04Y-basic-economy",
        "9c1e7f0a4b3d2e1f8a7b6c5d4e3f2a1b",
        "0af7651916cd43dd8448eb211c80319c",
    }
    airline = cases["cancel-ZFA04Y-basic-economy"]
    assert {n: v["state"] for n, v in airline["verdicts"].items()} == {
        "looked_up_first": "passed",
        "cancelled": "passed",
        "explains_policy": "passed",
    }
    assert airline["latency_ms"] == 9200.0
    bags = cases["9c1e7f0a4b3d2e1f8a7b6c5d4e3f2a1b"]["verdicts"]
    assert bags["cancelled"]["state"] == "failed"
    assert bags["looked_up_first"]["state"] == "not_applicable"


def test_the_minimal_file_of_the_docs_imports_as_described(tmp_path: Path) -> None:
    doc = (Path(__file__).parents[2] / "docs" / "otel.md").read_text()
    block = doc.split("## A minimal file", 1)[1].split("```json\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "spans.jsonl"
    path.write_text(block)
    (case,), ctx = _cases(path)
    assert ctx.skipped == []
    assert case.id == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert _shape(case) == [("user", None), ("assistant", None), ("tool_call", "get_flight_status")]
    answer, tool = case.trace[1], case.trace[2]
    assert answer.content is None
    assert answer.latency_ms == 900.0
    assert answer.attributes == {
        "model": "gpt-4o",
        "input_tokens": 812,
        "output_tokens": 19,
        "gen_ai.operation.name": "chat",
        "tool_calls": 1,
    }
    assert tool.arguments == {"flight": "HAT170"}
    assert tool.result == {"status": "delayed", "minutes": 40}
    assert case.latency_ms == 1100.0


def test_error_text_falls_back_to_the_exception_and_plain_traces_make_no_case(
    tmp_path: Path,
) -> None:
    tool = json.loads(_request(9, 18, None, 0))
    span = tool["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    span["name"] = "execute_tool issue_refund"
    span["attributes"] = [
        {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
        {"key": "gen_ai.tool.name", "value": {"stringValue": "issue_refund"}},
        {"key": "error.type", "value": {"stringValue": "TimeoutError"}},
    ]
    span["status"] = {"code": "STATUS_CODE_ERROR"}
    span["events"] = [
        {
            "name": "exception",
            "timeUnixNano": "3000000",
            "attributes": [
                {"key": "exception.message", "value": {"stringValue": "payments API timed out"}}
            ],
        }
    ]
    health = json.loads(_request(10, 20, None, 0))
    plain = health["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    plain["name"] = "GET /healthz"
    plain["attributes"] = [{"key": "http.route", "value": {"stringValue": "/healthz"}}]
    path = tmp_path / "mixed.jsonl"
    path.write_text(json.dumps(tool) + "\n" + json.dumps(health) + "\n")
    (case,), ctx = _cases(path)
    assert (ctx.records, ctx.cases, ctx.skipped) == (2, 1, [])
    # the health check's trace made no case, and the import says so
    assert ctx.notes() == ["1 trace(s) without a GenAI span: no case made"]
    (step,) = case.trace
    assert (step.kind, step.name, step.error) == (
        "tool_call",
        "issue_refund",
        "payments API timed out",
    )
    span["events"] = []
    path.write_text(json.dumps(tool) + "\n")
    assert _cases(path)[0][0].trace[0].error == "TimeoutError"


def test_a_trace_without_its_root_waits_for_the_end_of_the_file(tmp_path: Path) -> None:
    # trace 1's root is the last line; its child came first, long before
    lines = [_request(1, 3, 2, 1)]
    lines += [_request(t, 2 * t, None, t * 10) for t in range(2, 8)]
    lines.append(_request(1, 2, None, 0))
    path = tmp_path / "rootless.jsonl"
    path.write_text("\n".join(lines) + "\n")
    cases, ctx = _cases(path, flush_after_lines=2)
    assert ctx.skipped == []
    assert [c.id for c in cases] == [f"{t:032x}" for t in (2, 3, 4, 5, 6, 1, 7)]
    whole = cases[5]
    assert [s.id for s in whole.trace] == ["0000000000000002", "0000000000000003"]
    assert whole.trace[1].parent_id == "0000000000000002"


def test_parent_ids_in_a_cycle_do_not_hang_the_import(tmp_path: Path) -> None:
    # two agent spans, each claiming the other as parent, and a chat span inside one of them
    lines = [_request(1, 2, 3, 0), _request(1, 3, 2, 1), _request(1, 4, 2, 2)]
    for i, line in enumerate(lines[:2]):
        request = json.loads(line)
        span = request["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
        span["attributes"] = [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}},
            {"key": "gen_ai.agent.name", "value": {"stringValue": f"agent-{i}"}},
        ]
        lines[i] = json.dumps(request)
    path = tmp_path / "cycle.jsonl"
    path.write_text("\n".join(lines) + "\n")
    (case,), ctx = _cases(path)
    assert ctx.skipped == []
    assert _shape(case) == [("event", "agent-0"), ("event", "agent-1"), ("assistant", None)]
    assert case.trace[2].parent_id == "0000000000000002"
