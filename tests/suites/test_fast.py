"""The fast path of reading a JSONL case builds exactly the case that pydantic's full
validation builds (values, their types, the fields set, the field order), and never
vouches for a line that the full validation refuses."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest.mock import patch

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from checkweigh.core import Case, Step
from checkweigh.errors import CaseFileError
from checkweigh.suites import _fast, case_of_line, iter_cases, iter_sourced
from checkweigh.suites._fast import fast_case

PROPS = settings(max_examples=600, deadline=None, database=None)
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

TEXTS = [
    "",
    "x",
    "tool_call",
    '{"city": "Paris"}',
    "[1, 2]",
    "{not json",
    "2024-05-01T10:00:00Z",
    "2024-05-01T10:00:00+02:00",
    "2024-05-01",
    "1714557600",
    "soon",
    "é 日本",
]
STAMPS = [
    "2024-05-01T10:00:00Z",
    "2024-05-01T10:00:00.25+02:00",
    "2024-05-01T10:00:00",
    "2024-05-01",
]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.integers(min_value=-5, max_value=10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(TEXTS),
)
anything = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
texts = st.sampled_from(TEXTS) | st.text(max_size=8)
latencies = st.floats(min_value=0, max_value=1e6) | st.integers(min_value=0, max_value=10**6)
STEP_FIELDS: dict[str, Any] = {
    "content": texts,
    "name": texts,
    "arguments": st.dictionaries(st.text(max_size=4), anything, max_size=2) | texts,
    "result": anything,
    "error": texts,
    "id": texts,
    "parent_id": texts,
    "attributes": st.dictionaries(st.text(max_size=6), anything, max_size=2),
    "timestamp": st.sampled_from(STAMPS),
    "latency_ms": latencies,
}
KINDS = ["user", "assistant", "tool_call", "system", "event"]
good_step = st.fixed_dictionaries(
    {"kind": st.sampled_from(KINDS)},
    # attributes are an object or not given; any other field may be null
    optional={n: v if n == "attributes" else v | st.none() for n, v in STEP_FIELDS.items()},
)
# a step with one thing wrong, or maybe wrong: a field given any JSON value (a timestamp as
# a number or "soon"), a key it does not have, no kind or one that is no kind ("robot")
odd_step = st.one_of(
    st.tuples(good_step, st.sampled_from([*STEP_FIELDS, "bogus"]), anything).map(
        lambda t: {**t[0], t[1]: t[2]}
    ),
    good_step.map(lambda s: {k: v for k, v in s.items() if k != "kind"}),
    st.tuples(good_step, st.sampled_from(["User", "robot"])).map(lambda t: {**t[0], "kind": t[1]}),
    anything,
)
# one step in eight is odd (one_of would make it one in two)
steps = st.integers(0, 7).flatmap(lambda i: odd_step if i == 0 else good_step)
CASE_FIELDS: dict[str, Any] = {
    "input": anything,
    "trace": st.lists(steps, min_size=1, max_size=5) | st.just([]),
    "final_state": st.dictionaries(st.text(max_size=4), anything, max_size=2),
    "ground_truth": anything,
    "metadata": st.dictionaries(st.text(max_size=4), anything, max_size=2),
    "latency_ms": latencies,
    "user": st.sampled_from([{"turns": ["hi"]}, {"goal": "book", "model": "openai:gpt"}]),
}
NULLABLE = {"input", "ground_truth", "latency_ms", "user"}
good_case = st.fixed_dictionaries(
    {"id": st.text(min_size=1, max_size=8)},
    # trace, final_state and metadata are not nullable
    optional={n: v | st.none() if n in NULLABLE else v for n, v in CASE_FIELDS.items()},
)
odd_case = st.one_of(
    st.tuples(good_case, st.sampled_from([*CASE_FIELDS, "id", "extra"]), anything).map(
        lambda t: {**t[0], t[1]: t[2]}
    ),
    st.tuples(good_case, st.floats() | st.integers()).map(lambda t: {**t[0], "latency_ms": t[1]}),
)
cases = st.integers(0, 3).flatmap(lambda i: odd_case if i == 0 else good_case)


def _full(line: bytes) -> Case | None:
    """The case as the full validation reads the line (None when it refuses it)."""
    try:
        return Case.model_validate(msgspec.json.decode(line))
    except (ValidationError, msgspec.DecodeError):
        return None


def _state(model: BaseModel) -> tuple[Any, ...]:
    """All a model is made of, types of values included (``repr`` tells 1 from 1.0)."""
    return (
        type(model),
        repr(model),
        list(model.__dict__),
        model.model_fields_set,
        model.__pydantic_extra__,
        model.__pydantic_private__,
        model.model_dump_json(),
    )


def assert_same_case(fast: Case, full: Case) -> None:
    assert fast == full
    assert _state(fast) == _state(full)
    assert len(fast.trace) == len(full.trace)
    for mine, theirs in zip(fast.trace, full.trace, strict=True):
        assert _state(mine) == _state(theirs)
        assert mine.attributes is not theirs.attributes


@PROPS
@given(cases, st.booleans(), st.sampled_from([0, 10**9]))
def test_the_fast_path_builds_the_case_the_full_validation_builds(
    data: dict[str, Any], ascii_only: bool, lift_from: int
) -> None:
    # the steps' results lifted out before the conversion to dicts (long lines), or not
    line = json.dumps(data, ensure_ascii=ascii_only).encode()
    with patch.object(_fast, "_LIFT_RESULTS_FROM", lift_from):
        fast = fast_case(line)
    full = _full(line)
    if fast is not None:
        assert full is not None, line
        assert_same_case(fast, full)


def test_steps_never_share_their_attributes() -> None:
    line = b'{"id": "c1", "trace": [{"kind": "user"}, {"kind": "assistant"}]}'
    first, second = fast_case(line).trace  # type: ignore[union-attr]
    assert first.attributes == {} == second.attributes
    assert first.attributes is not second.attributes


ORDINARY = {
    "id": "c1",
    "input": {"message": "Book Alice at 10"},
    "trace": [
        {"kind": "user", "content": "Book Alice at 10"},
        {
            "kind": "tool_call",
            "name": "book",
            "arguments": '{"who": "Alice"}',
            "result": {"ok": True, "big": 2**80},
            "attributes": {"input_tokens": 12},
            "latency_ms": 40,
            "id": "call_1",
            "parent_id": None,
        },
        {"kind": "tool_call", "name": "log", "arguments": "not json", "result": None},
        {"kind": "event", "name": "tick", "timestamp": "2024-05-01T10:00:00Z", "error": None},
        {"kind": "assistant", "content": "Booked.", "timestamp": "2024-05-01T10:00:02.5+02:00"},
    ],
    "final_state": {"booked": True},
    "ground_truth": ["Alice"],
    "metadata": {"kind": "booking"},
    "latency_ms": 200,
    "user": None,
}

# lines the fast path builds itself (the bulk of recorded files): identical to the full path
BUILT = [
    ("an ordinary recorded case", ORDINARY),
    ("only an id", {"id": "c2"}),
    ("explicit nulls", {"id": "c3", "input": None, "ground_truth": None, "latency_ms": None}),
    ("empty containers given", {"id": "c4", "trace": [], "final_state": {}, "metadata": {}}),
    ("a step given its defaults", {"id": "c5", "trace": [{"kind": "user", "attributes": {}}]}),
    (
        "negative zero",
        {"id": "c6", "latency_ms": -0.0, "trace": [{"kind": "user", "latency_ms": 0}]},
    ),
    ("a huge integer where any value goes", {"id": "c7", "input": -(10**40)}),
]


@pytest.mark.parametrize("lift_from", [0, 10**9])
@pytest.mark.parametrize("data", [d for _, d in BUILT], ids=[n for n, _ in BUILT])
def test_ordinary_lines_take_the_fast_path(data: dict[str, Any], lift_from: int) -> None:
    line = json.dumps(data).encode()
    with patch.object(_fast, "_LIFT_RESULTS_FROM", lift_from):
        fast = fast_case(line)
    assert fast is not None
    full = _full(line)
    assert full is not None
    assert_same_case(fast, full)


def test_a_repeated_key_reads_as_the_full_validation_reads_it() -> None:
    line = b'{"id": "a", "id": "b", "trace": [{"kind": "user", "kind": "assistant"}]}'
    fast, full = fast_case(line), _full(line)
    assert fast is not None
    assert full is not None
    assert_same_case(fast, full)
    assert fast.id == "b"
    assert fast.trace[0].kind == "assistant"


# valid lines the fast path leaves to the full validation: read all the same
LEFT_TO_FULL = [
    ("a scripted user", {"id": "c1", "user": {"turns": ["Book Alice", "Yes"]}}),
    ("a latency as text", {"id": "c1", "latency_ms": "12.5"}),
    ("a boolean latency", {"id": "c1", "trace": [{"kind": "user", "latency_ms": True}]}),
    ("a timestamp as a number", {"id": "c1", "trace": [{"kind": "user", "timestamp": 1714557600}]}),
]


@pytest.mark.parametrize("data", [d for _, d in LEFT_TO_FULL], ids=[n for n, _ in LEFT_TO_FULL])
def test_valid_lines_left_to_the_full_validation_are_read(
    tmp_path: Path, data: dict[str, Any]
) -> None:
    line = json.dumps(data).encode()
    assert fast_case(line) is None
    full = _full(line)
    assert full is not None
    path = tmp_path / "cases.jsonl"
    path.write_bytes(line + b"\n")
    (case,) = iter_cases(path)
    assert _state(case) == _state(full)
    assert _state(case_of_line(path, 1, line)) == _state(full)


BAD = [
    (
        "a bad timestamp",
        {"id": "c1", "trace": [{"kind": "user", "timestamp": "soon"}]},
        "timestamp",
    ),
    ("an unknown step key", {"id": "c1", "trace": [{"kind": "user", "text": "hi"}]}, "text"),
    ("a negative latency", {"id": "c1", "latency_ms": -1}, "latency_ms"),
    ("an empty id", {"id": ""}, "id"),
]


@pytest.mark.parametrize(("data", "field"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_lines_are_refused_with_the_full_validation_s_message(
    tmp_path: Path, data: dict[str, Any], field: str
) -> None:
    line = json.dumps(data).encode()
    assert fast_case(line) is None
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b'{"id": "ok"}\n' + line + b"\n")
    with pytest.raises(CaseFileError) as read:
        list(iter_cases(path))
    message = str(read.value)
    assert message.startswith(f"{path}:2: ")
    assert field in message
    assert "\n" not in message


@pytest.mark.parametrize("exclude_defaults", [True, False])
@pytest.mark.parametrize("cases_file", sorted(EXAMPLES.glob("*/*scenarios.yaml")), ids=str)
def test_the_examples_read_as_the_full_validation_reads_them(
    tmp_path: Path, cases_file: Path, exclude_defaults: bool
) -> None:
    # the examples' cases as JSONL, written as recorded runs are (defaults left out) and
    # with every field
    examples = list(iter_cases(cases_file))
    lines = [
        json.dumps(c.model_dump(mode="json", exclude_defaults=exclude_defaults)).encode()
        for c in examples
    ]
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    read = list(iter_sourced(path))
    assert [source for _, source in read] == lines
    for (case, _), line in zip(read, lines, strict=True):
        full = _full(line)
        assert full is not None
        assert_same_case(case, full)
    assert sum(c.user is None for c in examples) == sum(
        fast_case(line) is not None for line in lines
    )


@pytest.mark.parametrize("steps", [1, 20])
def test_long_tool_results_are_built_alike(steps: int) -> None:
    # ~650 bytes a step (an airline conversation's flight searches): past the lifting mark
    result = {"flights": [{"number": f"HAT{k:03d}", "seats": {"economy": k}} for k in range(24)]}
    trace = [
        {"kind": "tool_call", "name": "search", "arguments": {"day": k}, "result": result}
        for k in range(steps)
    ]
    line = json.dumps({"id": "c1", "trace": [*trace, {"kind": "assistant", "result": None}]})
    assert len(line) > _fast._LIFT_RESULTS_FROM * (steps + 1)
    fast, full = fast_case(line.encode()), _full(line.encode())
    assert fast is not None
    assert full is not None
    assert_same_case(fast, full)


def test_the_structs_mirror_the_models() -> None:
    # a field added to Case or Step must be added to the fast path's structs (until then,
    # a line giving it is refused by them and validated in full)
    assert _fast._Case.__struct_fields__ == tuple(Case.model_fields)
    assert _fast._Step.__struct_fields__ == tuple(Step.model_fields)


def _from_depth(frames: int, read: Callable[[], Any]) -> Any:
    """``read()`` called ``frames`` Python frames deep."""
    return read() if frames == 0 else _from_depth(frames - 1, read)


@pytest.mark.parametrize("frames", [0, 300, 700])
def test_a_deep_result_reads_alike_from_any_depth_of_the_stack(tmp_path: Path, frames: int) -> None:
    # converting the trace recurses into each result: a result too deep to convert from
    # where the line is read is validated in full instead
    deep = '{"id": "deep", "trace": [{"kind": "tool_call", "result": ' + "[" * 900
    deep += "]" * 900 + "}]}"
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": "ok"}\n' + deep + "\n", encoding="utf-8")
    cases = _from_depth(frames, lambda: list(iter_cases(path)))
    assert [c.id for c in cases] == ["ok", "deep"]
    result, levels = cases[1].trace[0].result, 0
    while isinstance(result, list) and result:
        result, levels = result[0], levels + 1
    assert levels == 899  # down to the innermost, empty list
