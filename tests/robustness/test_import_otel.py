"""A catalogue of malformed OTLP/JSON input for the ``otel`` importer.

Each row appends one realistic bad line (line 5) to a good four-line export (two traces).
Under ``fail`` the import stops with one line naming the file, line 5 and what was expected;
under ``skip`` the bad record is counted with the same message and nothing else is lost.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkweigh.errors import CaseFileError
from checkweigh.importers import ImportContext, get_format

GOOD = Path(__file__).parents[1] / "importers" / "fixtures" / "otel_airline.jsonl"


def _span(**change: Any) -> dict[str, Any]:
    span: dict[str, Any] = {
        "traceId": "4bf92f3577b34da6a3ce929d0e0e4736",
        "spanId": "00f067aa0ba902b7",
        "parentSpanId": "",
        "name": "chat gpt-4o",
        "kind": 3,
        "startTimeUnixNano": "1763900000000000000",
        "endTimeUnixNano": "1763900001250000000",
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.request.model", "value": {"stringValue": "gpt-4o"}},
            {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "812"}},
        ],
        "status": {},
    }
    for key, value in change.items():
        if value is None:
            span.pop(key)
        else:
            span[key] = value
    return span


def _line(*spans: dict[str, Any]) -> str:
    return json.dumps(
        {
            "resourceSpans": [
                {
                    "resource": {
                        "attributes": [
                            {"key": "service.name", "value": {"stringValue": "support-bot"}}
                        ]
                    },
                    "scopeSpans": [{"scope": {"name": "openai_v2"}, "spans": list(spans)}],
                }
            ]
        }
    )


def _attr(key: str, value: Any) -> list[dict[str, Any]]:
    return [{"key": key, "value": value}]


@dataclass(frozen=True)
class Row:
    id: str
    line: Callable[[], str]
    message: str
    """A fragment of the one-line message."""
    cases_when_skipped: int = 2
    """Cases still made under ``skip`` (2: the good file's; 3 when the bad line's other spans
    still make their trace)."""


ROWS = [
    Row("truncated line", lambda: _line(_span())[:180], "invalid JSON"),
    Row(
        "not a request",
        lambda: json.dumps({"spans": [_span()]}),
        "'resourceSpans' or 'resourceLogs'; got keys",
    ),
    Row(
        "a list, not a request",
        lambda: json.dumps([_span()]),
        "'resourceSpans' or 'resourceLogs'; got list",
    ),
    Row("null", lambda: "null", "'resourceSpans' or 'resourceLogs'; got NoneType"),
    Row("missing traceId", lambda: _line(_span(traceId=None)), "traceId is missing"),
    Row(
        "short traceId",
        lambda: _line(_span(traceId="4bf92f35")),
        "traceId '4bf92f35' is not 32 hex digits",
    ),
    Row("all-zero traceId", lambda: _line(_span(traceId="0" * 32)), "traceId is all zeros"),
    Row("bad spanId", lambda: _line(_span(spanId="xyz!")), "spanId 'xyz!' is not 16 hex"),
    Row("span with no name", lambda: _line(_span(name=None)), "'name' is missing"),
    Row("empty name", lambda: _line(_span(name="")), "'name' is missing"),
    Row(
        "non-numeric start time",
        lambda: _line(_span(startTimeUnixNano="2025-11-23T12:13:20Z")),
        "startTimeUnixNano '2025-11-23T12:13:20Z' is not a whole number of nanoseconds",
    ),
    Row(
        "a time past any date",
        lambda: _line(_span(endTimeUnixNano="9" * 30)),
        "endTimeUnixNano 999999999999999999999999999999 is out of range",
    ),
    Row(
        "a superscript digit",
        lambda: _line(_span(startTimeUnixNano="1763900000000000000²")),
        "startTimeUnixNano '1763900000000000000²' is not a whole number",
    ),
    Row(
        "a negative time",
        lambda: _line(_span(startTimeUnixNano=-1)),
        "startTimeUnixNano -1 is out of range",
    ),
    Row(
        "missing end time",
        lambda: _line(_span(endTimeUnixNano=None)),
        "endTimeUnixNano is missing",
    ),
    Row(
        "intValue that is not an integer",
        lambda: _line(
            _span(attributes=_attr("gen_ai.usage.input_tokens", {"intValue": "812 tokens"}))
        ),
        "attribute 'gen_ai.usage.input_tokens': intValue '812 tokens' is not an integer",
    ),
    Row(
        "untyped attribute value",
        lambda: _line(_span(attributes=_attr("gen_ai.request.model", "gpt-4o"))),
        "attribute 'gen_ai.request.model': attribute value is str; expected an AnyValue",
    ),
    Row(
        "unknown value type",
        lambda: _line(_span(attributes=_attr("x", {"decimalValue": "1.5"}))),
        "attribute 'x': attribute value 'decimalValue' holds str",
    ),
    Row(
        "attributes as an object",
        lambda: _line(_span(attributes={"gen_ai.request.model": "gpt-4o"})),
        "attributes is dict; expected a list of key/value",
    ),
    Row("a span that is text", lambda: _line("chat gpt-4o"), "a span is str"),  # type: ignore[arg-type]
    Row(
        "one bad span beside a good one",
        lambda: _line(
            _span(spanId="1111111111111111", parentSpanId="00f067aa0ba902b7", name=None),
            _span(),
        ),
        "span 1111111111111111: 'name' is missing",
        cases_when_skipped=3,
    ),
]


def _file(tmp_path: Path, row: Row) -> Path:
    path = tmp_path / "spans.jsonl"
    path.write_text(GOOD.read_text() + row.line() + "\n")
    return path


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_a_bad_record_stops_the_import_with_one_line(tmp_path: Path, row: Row) -> None:
    path = _file(tmp_path, row)
    with pytest.raises(CaseFileError) as info:
        list(get_format("otel").cases(path, ImportContext(on_bad_record="fail")))
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}:5: ")
    assert row.message in message


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_a_bad_record_is_skipped_and_counted_and_nothing_else_is_lost(
    tmp_path: Path, row: Row
) -> None:
    path = _file(tmp_path, row)
    ctx = ImportContext(on_bad_record="skip")
    cases = list(get_format("otel").cases(path, ctx))
    assert len(cases) == row.cases_when_skipped == ctx.cases
    assert ctx.records == 5
    assert [(s.line, row.message in s.message) for s in ctx.skipped] == [(5, True)]
    assert [c.id for c in cases[:2]] == [
        "cancel-ZFA04Y-basic-economy",
        "9c1e7f0a4b3d2e1f8a7b6c5d4e3f2a1b",
    ]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)
GENAI_KEYS = [
    "gen_ai.operation.name",
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.prompt",
    "gen_ai.completion",
    "gen_ai.prompt.0.role",
    "gen_ai.prompt.0.content",
    "gen_ai.prompt.0.tool_calls",
    "gen_ai.prompt.0.tool_calls.0.name",
    "gen_ai.completion.0.tool_calls.0.arguments",
    "gen_ai.tool.name",
    "gen_ai.tool.call.id",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "gen_ai.agent.name",
    "gen_ai.usage.input_tokens",
    "checkweigh.case.id",
]
OPERATIONS = ["chat", "execute_tool", "invoke_agent", "text_completion", "embeddings"]


def _typed(value: Any) -> dict[str, Any]:
    """A value as the OTLP AnyValue an exporter would write for it (JSON text for structures,
    as instrumentations write messages), or as itself when it is not one (a bad record)."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": json.dumps(value)}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    attributes=st.dictionaries(st.sampled_from(GENAI_KEYS), json_values, max_size=6),
    operation=st.sampled_from(OPERATIONS),
    events=st.lists(
        st.tuples(
            st.sampled_from(["gen_ai.choice", "gen_ai.user.message", "gen_ai.tool.message"]),
            st.dictionaries(
                st.sampled_from(["content", "message", "tool_calls", "id"]), json_values
            ),
        ),
        max_size=2,
    ),
    raw=st.booleans(),
)
def test_any_genai_attribute_shape_is_a_case_or_one_bad_record(
    tmp_path_factory: pytest.TempPathFactory,
    attributes: dict[str, Any],
    operation: str,
    events: list[tuple[str, dict[str, Any]]],
    raw: bool,
) -> None:
    attrs = [{"key": "gen_ai.operation.name", "value": {"stringValue": operation}}]
    attrs += [{"key": k, "value": v if raw else _typed(v)} for k, v in attributes.items()]
    span = _span(
        attributes=attrs,
        events=[
            {"name": name, "attributes": [{"key": k, "value": _typed(v)} for k, v in body.items()]}
            for name, body in events
        ],
    )
    path = tmp_path_factory.mktemp("fuzz") / "spans.jsonl"
    path.write_text(_line(span) + "\n")
    ctx = ImportContext(on_bad_record="skip")
    cases = list(get_format("otel").cases(path, ctx))
    assert len(cases) + len(ctx.skipped) <= 1
    assert [bad.line for bad in ctx.skipped] in ([], [1])
    strict = get_format("otel").cases(path, ImportContext(on_bad_record="fail"))
    if ctx.skipped:  # under fail, the same record stops the import with the same one line
        with pytest.raises(CaseFileError) as info:
            list(strict)
        assert str(info.value) == ctx.skipped[0].one_line()
    else:  # compared as JSON: a NaN attribute value is never equal to itself
        assert [c.model_dump_json() for c in strict] == [c.model_dump_json() for c in cases]
