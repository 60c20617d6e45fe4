"""The screen that counts a JSONL cases file before a run: it never vouches for a line that
the full validation would refuse, and counting gives the errors that reading gives."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from checkweigh.core import Case
from checkweigh.errors import CaseFileError
from checkweigh.suites import count_cases, iter_cases
from checkweigh.suites._screen import screened_id

PROPS = settings(max_examples=400, deadline=None, database=None)

anything = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        st.sampled_from(["", "x", "2024-05-01T10:00:00Z", '{"a": 1}', "[1]", "tool_call"]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
STEP_KEYS = [
    "kind",
    "content",
    "name",
    "arguments",
    "result",
    "error",
    "id",
    "parent_id",
    "attributes",
    "timestamp",
    "latency_ms",
    "bogus",
]
CASE_KEYS = [
    "id",
    "input",
    "trace",
    "final_state",
    "ground_truth",
    "metadata",
    "latency_ms",
    "user",
    "extra",
]
KINDS = ["user", "assistant", "tool_call", "system", "event"]
good_step = st.fixed_dictionaries(
    # "robot" and "User" are no step kinds
    {
        "kind": st.sampled_from(
            ["user", "assistant", "tool_call", "system", "event", "robot", "User"]
        )
    },
    optional={
        "content": st.none() | st.text(max_size=8),
        "name": st.none() | st.text(max_size=8),
        "arguments": st.none() | st.dictionaries(st.text(max_size=4), anything, max_size=2),
        "result": anything,
        "latency_ms": st.none() | st.floats(min_value=0, max_value=1e6),
    },
)
# a step or a case with one field given any JSON value at all (or a key it does not have)
steps = st.one_of(
    good_step,
    st.tuples(good_step, st.sampled_from(STEP_KEYS), anything).map(lambda t: {**t[0], t[1]: t[2]}),
)
good_case = st.fixed_dictionaries(
    {"id": st.text(min_size=1, max_size=8)},
    optional={
        "input": anything,
        "trace": st.lists(steps, max_size=3),
        "final_state": st.dictionaries(st.text(max_size=4), anything, max_size=2),
        "metadata": st.dictionaries(st.text(max_size=4), anything, max_size=2),
        "latency_ms": st.none() | st.integers(min_value=-5, max_value=10**6) | st.floats(),
    },
)
cases = st.one_of(
    good_case,
    st.tuples(good_case, st.sampled_from(CASE_KEYS), anything).map(lambda t: {**t[0], t[1]: t[2]}),
)


def _full(line: bytes) -> Case | None:
    """The case as a run reads the line (None when it refuses it)."""
    try:
        return Case.model_validate(msgspec.json.decode(line))
    except (ValidationError, msgspec.DecodeError):
        return None


@PROPS
@given(cases, st.booleans())
def test_the_screen_vouches_only_for_valid_cases(data: dict[str, Any], ascii_only: bool) -> None:
    # an ASCII line is skimmed, any other decoded: both ways are tried
    line = json.dumps(data, ensure_ascii=ascii_only).encode()
    vouched = screened_id(line)
    if vouched is not None:
        case = _full(line)
        assert case is not None, line
        assert case.id == vouched


def test_the_screen_vouches_for_ordinary_cases() -> None:
    line = json.dumps(
        {
            "id": "c1",
            "input": {"message": "Book Alice at 10"},
            "trace": [
                {"kind": "user", "content": "Book Alice at 10"},
                {
                    "kind": "tool_call",
                    "name": "book",
                    "arguments": '{"who": "Alice"}',
                    "result": {"ok": True},
                    "attributes": {"input_tokens": 12},
                    "latency_ms": 40,
                },
            ],
            "final_state": {"booked": True},
            "ground_truth": ["Alice"],
            "metadata": {"kind": "booking"},
            "latency_ms": 200.5,
        }
    ).encode()
    assert screened_id(line) == "c1"


CASE = {"id": "c1", "trace": [{"kind": "user", "content": "hi"}]}

# valid lines the screen leaves to the full validation: counted all the same
VALID_BUT_NOT_SCREENED = [
    ("a timestamp", {**CASE, "trace": [{"kind": "user", "timestamp": "2024-05-01T10:00:00Z"}]}),
    ("a scripted user", {**CASE, "user": {"turns": ["Book Alice", "Yes"]}}),
    ("a simulated user", {**CASE, "user": {"goal": "book a meeting", "model": "openai:gpt"}}),
    ("a latency as text", {**CASE, "latency_ms": "12.5"}),
    ("a boolean latency", {**CASE, "trace": [{"kind": "user", "latency_ms": True}]}),
]


@pytest.mark.parametrize(
    "data", [d for _, d in VALID_BUT_NOT_SCREENED], ids=[n for n, _ in VALID_BUT_NOT_SCREENED]
)
def test_valid_lines_the_screen_refuses_still_count(tmp_path: Path, data: dict[str, Any]) -> None:
    line = json.dumps(data).encode()
    assert screened_id(line) is None
    assert _full(line) is not None
    path = tmp_path / "cases.jsonl"
    path.write_bytes(json.dumps({"id": "first"}).encode() + b"\n" + line + b"\n\n")
    assert count_cases(path) == 2 == len(list(iter_cases(path)))


GOOD = json.dumps({"id": "ok"})
LONG_RESULT = '{"id": "c1", "trace": [{"kind": "tool_call", "result": {"total": DIGITS}}]}'

# bad lines: counting stops at the same line with the same words as reading
BAD_LINES = [
    ("negative latency", json.dumps({**CASE, "latency_ms": -1})),
    ("latency past a float", '{"id": "c1", "latency_ms": 1e400}'),
    ("unknown step kind", json.dumps({"id": "c1", "trace": [{"kind": "robot"}]})),
    ("unknown step key", json.dumps({"id": "c1", "trace": [{"kind": "user", "text": "hi"}]})),
    ("empty id", json.dumps({"id": ""})),
    (
        "arguments a number",
        json.dumps({"id": "c1", "trace": [{"kind": "tool_call", "arguments": 5}]}),
    ),
    ("trace an object", json.dumps({"id": "c1", "trace": {"kind": "user"}})),
    ("metadata a list", json.dumps({"id": "c1", "metadata": []})),
    ("a bad timestamp", json.dumps({"id": "c1", "trace": [{"kind": "user", "timestamp": "soon"}]})),
    ("an empty script", json.dumps({"id": "c1", "user": {"turns": []}})),
    ("attributes a list", json.dumps({"id": "c1", "trace": [{"kind": "user", "attributes": []}]})),
    ("content a number", json.dumps({"id": "c1", "trace": [{"kind": "user", "content": 5}]})),
    ("name a list", json.dumps({"id": "c1", "trace": [{"kind": "event", "name": ["x"]}]})),
    ("error a number", json.dumps({"id": "c1", "trace": [{"kind": "event", "error": 1}]})),
    ("step id a number", json.dumps({"id": "c1", "trace": [{"kind": "event", "id": 7}]})),
    ("parent_id a bool", json.dumps({"id": "c1", "trace": [{"kind": "event", "parent_id": True}]})),
    ("final_state text", json.dumps({"id": "c1", "final_state": "done"})),
    ("user text", json.dumps({"id": "c1", "user": "alice"})),
    ("id a number", json.dumps({"id": 12})),
    ("step latency past a float", '{"id": "c1", "trace": [{"kind": "user", "latency_ms": 2e308}]}'),
    ("an integer of 5,000 digits", '{"id": "c1", "input": ' + "9" * 5000 + "}"),
    ("a negative one in a result", LONG_RESULT.replace("DIGITS", "-" + "7" * 4301)),
    ("one with a fraction", '{"id": "c1", "final_state": {"n": ' + "1" * 4400 + ".5}}"),
    ("one with an exponent", '{"id": "c1", "ground_truth": [' + "3" * 4500 + "e2]}"),
    ("a duplicate id", GOOD),
    ("not JSON", '{"id": "c1",'),
    ("a JSON list", "[1, 2]"),
]


@pytest.mark.parametrize("line", [b for _, b in BAD_LINES], ids=[n for n, _ in BAD_LINES])
def test_counting_fails_like_reading(tmp_path: Path, line: str) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(f"{GOOD}\n\n{line}\n{json.dumps({'id': 'after'})}\n", encoding="utf-8")
    with pytest.raises(CaseFileError) as counted:
        count_cases(path)
    with pytest.raises(CaseFileError) as read:
        list(iter_cases(path))
    assert str(counted.value) == str(read.value)
    assert ":3:" in str(counted.value)


@pytest.mark.parametrize("digits", [1, 4299, 4300])
@pytest.mark.parametrize("at", [0, 1, 2150, 2151, 3000])
def test_integers_as_long_as_python_converts_are_counted(
    tmp_path: Path, digits: int, at: int
) -> None:
    # the run of digits starts anywhere against the sampling stride
    line = '{"id": "c1", "input": "' + "x" * at + '", "ground_truth": ' + "8" * digits + "}"
    assert _full(line.encode()) is not None
    path = tmp_path / "cases.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    assert count_cases(path) == 1


@pytest.mark.parametrize("at", [0, 1, 2149, 2150, 2151, 4300, 7000])
def test_a_run_of_digits_too_long_for_an_integer_is_never_vouched_for(at: int) -> None:
    line = '{"id": "c1", "input": "' + "x" * at + '", "metadata": {"n": ' + "5" * 4301 + "}}"
    assert _full(line.encode()) is None
    assert screened_id(line.encode()) is None


def test_a_number_past_any_float_where_any_value_goes_is_counted(tmp_path: Path) -> None:
    # skimmed, the screen vouches for it; a run reads it with pydantic's parser, as infinity
    line = '{"id": "c1", "input": {"huge": 1e400}}'
    assert screened_id(line.encode()) == "c1"
    path = tmp_path / "cases.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    (case,) = iter_cases(path)
    assert case.input == {"huge": float("inf")}
    assert count_cases(path) == 1


def _from_depth(frames: int, read: Callable[[], Any]) -> Any:
    """``read()`` called ``frames`` Python frames deep (a run reads its cases deeper in the
    stack than the count before it)."""
    return read() if frames == 0 else _from_depth(frames - 1, read)


@pytest.mark.parametrize("frames", [0, 300, 700])
def test_deep_nesting_reads_alike_from_any_depth_of_the_stack(tmp_path: Path, frames: int) -> None:
    # msgspec's nesting limit is the interpreter's recursion headroom; orjson takes the lines
    # past it, with its fixed limit of 1,024 levels
    deep = '{"id": "deep", "input": ' + "[" * 900 + "]" * 900 + "}"
    path = tmp_path / "cases.jsonl"
    path.write_text(f"{GOOD}\n{deep}\n", encoding="utf-8")
    cases = _from_depth(frames, lambda: list(iter_cases(path)))
    assert [c.id for c in cases] == ["ok", "deep"]
    assert _from_depth(frames, lambda: count_cases(path)) == 2
    too_deep = '{"id": "deep", "input": ' + "[" * 1100 + "]" * 1100 + "}"
    path.write_text(f"{GOOD}\n{too_deep}\n", encoding="utf-8")
    with pytest.raises(CaseFileError) as counted:
        _from_depth(frames, lambda: count_cases(path))
    with pytest.raises(CaseFileError) as read:
        _from_depth(frames, lambda: list(iter_cases(path)))
    assert str(counted.value) == str(read.value)
    assert ":2:" in str(read.value)
