"""``import_lines``: what ``checkweigh import`` writes, most of it without building each case.

Every line must hold the keys and values ``case.model_dump_json(exclude_defaults=True)``
wrote before (the slow way, still taken by any case the fast way cannot vouch for), and must
read back as the same case: long integers, NaN, text to parse, defaults given, deep nesting.
"""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_core import from_json

from checkweigh.core import Case, Step
from checkweigh.importers import ImportContext, get_format, import_cases, import_lines
from checkweigh.importers._wire import _CASE_DEFAULTS, CaseWire, StepWire, case_line
from support.importing import FIXTURES

MAPPING = yaml.safe_load((FIXTURES / "mapping_tau.yaml").read_text())


def _same(a: Any, b: Any) -> bool:
    """JSON values equal, NaN equal to NaN."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _both(fmt: str, *paths: Path, **options: Any) -> tuple[list[bytes], list[Case]]:
    lines = list(import_lines(get_format(fmt, **options), paths, ImportContext()))
    cases = list(import_cases(get_format(fmt, **options), paths, ImportContext()))
    return lines, cases


def _assert_as_before(lines: list[bytes], cases: list[Case]) -> None:
    assert len(lines) == len(cases)
    for line, case in zip(lines, cases, strict=True):
        assert line.count(b"\n") == 1
        assert line.endswith(b"\n")
        before = case.model_dump_json(exclude_defaults=True)
        assert _same(from_json(line), from_json(before)), (line, before)
        assert Case.model_validate_json(line) == Case.model_validate_json(before)


@pytest.mark.parametrize(
    ("fmt", "files", "options"),
    [
        ("openai", ["openai_airline.jsonl"], {}),
        ("anthropic", ["anthropic_helpdesk.jsonl"], {}),
        ("openai-responses", ["responses_shop.jsonl"], {}),
        ("mapping", ["tau_runs.json"], {"mapping": MAPPING}),
        ("otel", ["otel_airline.jsonl", "otel_events.json"], {}),
    ],
)
def test_every_format_writes_what_it_wrote_before(
    fmt: str, files: list[str], options: dict[str, Any]
) -> None:
    lines, cases = _both(fmt, *(FIXTURES / f for f in files), **options)
    assert cases
    _assert_as_before(lines, cases)


def _msgs(*extra: dict[str, Any]) -> list[dict[str, Any]]:
    call = {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    return [
        {"role": "user", "content": "Where is order 12?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        *extra,
    ]


BIG = 123456789012345678901234567890
# raw JSONL lines: what orjson cannot read exactly, what the schema cannot vouch for, and
# the shapes the fast way writes
TRICKY = {
    "integer beyond 64 bits": (
        f'{{"id": "a", "metadata": {{"n": {BIG}, "m": -9999999999999999999}}, '
        '"messages": [{"role": "user", "content": "hi"}]}'
    ),
    "integer beyond 64 bits in a tool result": json.dumps(
        _msgs({"role": "tool", "tool_call_id": "c1", "content": f'{{"n": {BIG}}}'})
    ),
    "integer beyond 64 bits in the arguments": json.dumps(
        [
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "c", "function": {"name": "f", "arguments": f'{{"n": {BIG}}}'}}
                ],
            }
        ]
    ),
    "NaN and Infinity": (
        '{"id": "a", "usage": {"prompt_tokens": NaN, "completion_tokens": Infinity}, '
        '"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}]}'
    ),
    "NaN in a tool result": json.dumps(
        _msgs({"role": "tool", "tool_call_id": "c1", "content": '{"total": NaN}'})
    ),
    "an emoji as an escaped surrogate pair": (
        '{"id": "a\\ud83d\\ude00", "messages": [{"role": "user", "content": "x\\ud83d\\ude00"}]}'
    ),
    "timestamps to parse": json.dumps(
        {
            "id": "a",
            "messages": [
                {"role": "user", "content": "hi", "timestamp": "2024-05-01T10:00:00Z"},
                {"role": "assistant", "content": "ok", "timestamp": 1714557600},
            ],
        }
    ),
    "arguments that are not a JSON object": json.dumps(
        [
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "a", "function": {"name": "f", "arguments": "not json"}},
                    {"id": "b", "function": {"name": "f", "arguments": "[1, 2]"}},
                    {"id": "c", "function": {"name": "f", "arguments": 5}},
                    {"id": "d", "function": {"name": "f", "arguments": ""}},
                ],
            }
        ]
    ),
    "a tool result of null, and one of {}": json.dumps(
        _msgs(
            {"role": "tool", "tool_call_id": "c1", "content": None},
            {"role": "tool", "tool_call_id": "zz", "name": "other", "content": "{}"},
        )
    ),
    "defaults given": json.dumps(
        {
            "id": "a",
            "input": None,
            "final_state": {},
            "ground_truth": None,
            "metadata": {},
            "messages": [{"role": "user", "content": "hi"}],
        }
    ),
    "everything given": json.dumps(
        {
            "id": 7,
            "input": {"q": [1, 2.5, None]},
            "final_state": {"orders": {"12": "shipped"}},
            "ground_truth": False,
            "metadata": {"domain": "retail"},
            "source": "prod",
            "model": "gpt-4o",
            "usage": {"prompt_tokens": 10, "completion_tokens": 2},
            "cost": 0.01,
            "messages": [
                {"role": "developer", "content": [{"type": "text", "text": "Be brief."}]},
                *_msgs({"role": "tool", "tool_call_id": "c1", "content": "Error: not found"}),
                {"role": "assistant", "reasoning_content": "think", "refusal": "no", "content": ""},
            ],
        }
    ),
    "floats": (
        '{"id": "a", "metadata": {"f": [0.1, 1e16, 1e-7, -0.0, 5e-324, 1.7976931348623157e308, '
        '1e400]}, "messages": [{"role": "user", "content": "hi"}]}'
    ),
    "nesting 150 deep, and brackets in text": (
        '{"id": "a", "metadata": {"d": ' + "[" * 150 + "]" * 150 + "}, "
        '"messages": [{"role": "user", "content": "' + "{" * 100 + '"}]}'
    ),
}


@pytest.mark.parametrize("line", TRICKY.values(), ids=TRICKY.keys())
def test_tricky_records_are_written_as_before(tmp_path: Path, line: str) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(line + "\n", encoding="utf-8")
    lines, cases = _both("openai", log)
    _assert_as_before(lines, cases)


def test_long_integers_stay_exact(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(TRICKY["integer beyond 64 bits"] + "\n", encoding="utf-8")
    (line,) = list(import_lines(get_format("openai"), [log], ImportContext()))
    assert from_json(line)["metadata"] == {"n": BIG, "m": -9999999999999999999}
    log.write_text(TRICKY["integer beyond 64 bits in the arguments"] + "\n", encoding="utf-8")
    (line,) = list(import_lines(get_format("openai"), [log], ImportContext()))
    assert from_json(line)["trace"][0]["arguments"] == {"n": BIG}


def test_nan_is_written_as_null_as_before(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(TRICKY["NaN in a tool result"] + "\n", encoding="utf-8")
    (line,) = list(import_lines(get_format("openai"), [log], ImportContext()))
    assert from_json(line)["trace"][1]["result"] == {"total": None}


def test_the_fast_schema_accepts_only_what_the_case_keeps_as_given() -> None:
    """A tripwire for changes to Case or Step: the fields written without building a case
    must be fields of the model, with the defaults the writer leaves out, and no validator
    but the one that parses arguments (the schema refuses text arguments)."""
    assert set(CaseWire.__annotations__) <= set(Case.model_fields)
    assert set(StepWire.__annotations__) <= set(Step.model_fields)
    for name, default in _CASE_DEFAULTS.items():
        assert Case.model_fields[name].get_default(call_default_factory=True) == default
    for name in StepWire.__annotations__:
        if name != "kind":
            default = Step.model_fields[name].get_default(call_default_factory=True)
            assert default == ({} if name == "attributes" else None), name
    assert not Case.__pydantic_decorators__.model_validators
    assert not Case.__pydantic_decorators__.field_validators
    assert not Step.__pydantic_decorators__.model_validators
    assert not Step.__pydantic_decorators__.field_validators
    # the one validator: text arguments parsed (in the annotation, so objects skip it)
    assert "parsed_arguments" in repr(Step.model_fields["arguments"].annotation)
    assert Case.model_config.get("ser_json_inf_nan", "null") == "null"


@pytest.mark.parametrize(
    "data",
    [
        {"id": "", "trace": []},
        {"id": "a", "trace": [{"kind": "robot"}]},
        {"id": "a", "trace": [{"kind": "user", "content": 3}]},
        {"id": "a", "trace": [{"kind": "tool_call", "name": "f", "arguments": "{}"}]},
        {"id": "a", "trace": [{"kind": "user", "timestamp": "2024-05-01"}]},
        {"id": "a", "trace": [{"kind": "user", "latency_ms": 3}]},
        {"id": "a", "final_state": [1]},
        {"id": "a", "latency_ms": 1},
        {"id": "a", "metadata": {"n": 2**70}},  # orjson cannot write it
        {"id": "a", "input": "x\ud800"},  # nor this
    ],
)
def test_what_the_fast_way_leaves_to_the_case(data: dict[str, Any]) -> None:
    assert case_line(data) is None


def test_the_fast_way_leaves_out_defaults_and_keeps_the_rest() -> None:
    data = {
        "id": "a",
        "input": None,
        "trace": [
            {"kind": "tool_call", "name": "f", "arguments": {}, "result": None, "attributes": {}},
            {"kind": "event", "name": "tool_result", "result": {}, "error": "boom"},
        ],
        "final_state": {},
        "ground_truth": 0,
        "metadata": {},
    }
    line = case_line(data)
    assert line is not None
    assert json.loads(line) == {
        "id": "a",
        "trace": [
            {"kind": "tool_call", "name": "f", "arguments": {}},
            {"kind": "event", "name": "tool_result", "result": {}, "error": "boom"},
        ],
        "ground_truth": 0,
    }
    assert data["trace"][0] == {  # the caller's fields are not changed
        "kind": "tool_call",
        "name": "f",
        "arguments": {},
        "result": None,
        "attributes": {},
    }


_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8)
)
_json = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
_text_or_any = st.text(max_size=12) | _json
_part = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "image_url"])}, optional={"text": _text_or_any}
)
_arguments = (
    st.dictionaries(st.text(max_size=4), _json, max_size=3).map(json.dumps)
    | st.sampled_from(["", "not json", "[1, 2]", '{"a": 1'])
    | _json
)
_call = st.fixed_dictionaries(
    {"type": st.just("function")},
    optional={
        "id": st.sampled_from(["c1", "c2", ""]) | _json,
        "function": st.fixed_dictionaries(
            {},
            optional={
                "name": st.sampled_from(["lookup", "refund", " "]) | _json,
                "arguments": _arguments,
            },
        )
        | _json,
    },
)
_message = st.fixed_dictionaries(
    {
        "role": st.sampled_from(
            ["system", "developer", "user", "assistant", "tool", "function", "bot"]
        )
        | _json
    },
    optional={
        "content": _text_or_any | st.lists(_part | _json, max_size=3),
        "tool_calls": st.lists(_call, max_size=3) | _json,
        "tool_call_id": st.sampled_from(["c1", "c2", "zz"]) | _json,
        "name": st.sampled_from(["lookup", "refund"]) | _json,
        "timestamp": st.sampled_from(["2024-05-01T10:00:00Z", "yesterday"]) | _json,
        "model": _text_or_any,
        "usage": st.dictionaries(
            st.sampled_from(["prompt_tokens", "completion_tokens", "x"]), _json, max_size=3
        )
        | _json,
        "reasoning_content": _text_or_any,
        "refusal": _text_or_any,
        "is_error": _json,
    },
)
_record = st.lists(_message, max_size=5) | st.fixed_dictionaries(
    {"messages": st.lists(_message, max_size=5) | _json},
    optional={
        "id": st.sampled_from(["a", "b", ""]) | _json,
        "input": _json,
        "final_state": _json | st.dictionaries(st.text(max_size=3), _json, max_size=2),
        "ground_truth": _json,
        "metadata": _json | st.dictionaries(st.text(max_size=3), _json, max_size=2),
        "model": _text_or_any,
        "usage": _json,
        "cost": _json,
        "source": _json,
    },
)


@settings(max_examples=300, deadline=None)
@given(records=st.lists(_record, min_size=1, max_size=4))
def test_any_openai_log_is_written_and_refused_as_before(records: list[Any]) -> None:
    """The openai format's steps skip the schema (steps_checked): whatever a log holds, the
    lines, the bad records and their messages are those of building each case."""
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "log.jsonl"
        log.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        new, old = ImportContext(on_bad_record="skip"), ImportContext(on_bad_record="skip")
        lines = list(import_lines(get_format("openai"), [log], new))
        cases = list(import_cases(get_format("openai"), [log], old))
    assert (new.records, new.cases, new.skipped) == (old.records, old.cases, old.skipped)
    assert len(lines) == len(cases)
    for line, case in zip(lines, cases, strict=True):
        assert _same(from_json(line), from_json(case.model_dump_json(exclude_defaults=True)))


@pytest.mark.parametrize("lines", [1, 2], ids=["one record", "JSON Lines"])
def test_a_log_with_an_escaped_lone_surrogate_imports_with_a_visible_escape(
    tmp_path: Path, lines: int
) -> None:
    # valid JSON that jiter refuses, on the first line (before jiter can tell more follow)
    record = {"id": "a", "messages": [{"role": "user", "content": "x\ud800"}]}
    log = tmp_path / "log.jsonl"
    log.write_text(
        "".join(json.dumps({**record, "id": f"a{n}"}) + "\n" for n in range(lines)),
        encoding="utf-8",
    )
    ctx = ImportContext()
    written = list(import_lines(get_format("openai"), [log], ctx))
    assert len(written) == lines
    assert from_json(written[0])["trace"][0]["content"] == "x\\ud800"
