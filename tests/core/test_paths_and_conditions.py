"""Field paths resolve into cases and plain data; conditions compare what they find."""

from __future__ import annotations

import re

import pytest

from checkweigh.core import Case, Condition, ConditionOp, FieldPath, PathSyntaxError


def test_parse_splits_names_and_indices() -> None:
    assert FieldPath.parse("final_state.booking.participants[0]").parts == (
        "final_state",
        "booking",
        "participants",
        0,
    )
    assert FieldPath.parse("trace[-1].arguments.time").parts == ("trace", -1, "arguments", "time")
    assert FieldPath.parse("matrix[0][1]").parts == ("matrix", 0, 1)
    path = FieldPath.parse("ground_truth.time")
    assert str(path) == "ground_truth.time"
    assert path == FieldPath.parse("ground_truth.time")


@pytest.mark.parametrize(
    "text",
    [
        "",
        " final_state",
        "final_state ",
        "final_state..booking",
        ".final_state",
        "final_state.",
        "[0]",
        "trace[x]",
        "trace[]",
        "trace[0",
        "trace]",
        "trace[1.5]",
    ],
)
def test_parse_rejects_malformed_paths(text: str) -> None:
    with pytest.raises(PathSyntaxError, match="field path"):
        FieldPath.parse(text)


def test_parse_rejects_a_name_glued_to_an_index() -> None:
    # 'trace[0]content' is a typo for 'trace[0].content'; it must not be read as if dotted
    with pytest.raises(PathSyntaxError, match="malformed field path"):
        FieldPath.parse("trace[0]content")


def test_get_walks_models_dicts_and_lists(booked_case: Case) -> None:
    assert FieldPath.parse("final_state.booking.participants").get(booked_case) == [
        "Alice",
        "Bob",
    ]
    assert FieldPath.parse("final_state.booking.participants[1]").get(booked_case) == "Bob"
    assert FieldPath.parse("trace[1].name").get(booked_case) == "check_availability"
    assert FieldPath.parse("trace[-1].kind").get(booked_case) == "assistant"
    assert FieldPath.parse("trace[-2].arguments.duration").get(booked_case) == 30
    assert FieldPath.parse("trace[1].result.free[-1]").get(booked_case) == "14:00"
    # a property of the case is a field like any other
    assert FieldPath.parse("output").get(booked_case) == (
        "Booked Alice and Bob on Tuesday at 10:00 for 30 minutes."
    )
    # plain data works too
    assert FieldPath.parse("a.b[0]").get({"a": {"b": [7, 8]}}) == 7


@pytest.mark.parametrize(
    "text",
    [
        "final_state.booking.room",  # absent key
        "final_state.booking.time.hour",  # into a string
        "trace[4]",  # past the end (4 steps)
        "trace[-5]",  # before the start
        "final_state[0]",  # index into a dict
        "final_state.booking.participants.first",  # name into a list
        "ground_truth.duration.minutes",  # into an int
        "trace[0].content.upper",  # never a method
        "total_latency_ms",  # a method of the case is not a field
    ],
)
def test_get_missing_paths(booked_case: Case, text: str) -> None:
    path = FieldPath.parse(text)
    assert path.get(booked_case, "MISSING") == "MISSING"
    assert path.exists(booked_case) is False
    with pytest.raises(KeyError, match=re.escape(text)):
        path.get(booked_case)


def test_none_is_a_value_not_a_missing_path() -> None:
    data = {"final_state": {"booking": None}}
    assert FieldPath.parse("final_state.booking").exists(data) is True
    assert FieldPath.parse("final_state.booking").get(data) is None
    assert FieldPath.parse("final_state.booking.time").exists(data) is False


def _cond(path: str, op: ConditionOp, value: object = None) -> Condition:
    return Condition(FieldPath.parse(path), op, value)


def test_conditions_on_a_booked_case(booked_case: Case) -> None:
    holds = {
        "stage == completed": _cond("final_state.stage", ConditionOp.EQUALS, "completed"),
        "stage != failed": _cond("final_state.stage", ConditionOp.NOT_EQUALS, "failed"),
        "scenario in": _cond("metadata.scenario", ConditionOp.IN, ["happy_path", "conflict"]),
        "booking exists": _cond("final_state.booking", ConditionOp.EXISTS, True),
        "room does not exist": _cond("final_state.room", ConditionOp.EXISTS, False),
        "exists defaults to true": _cond("final_state.success", ConditionOp.EXISTS),
        "success truthy": _cond("final_state.success", ConditionOp.TRUTHY),
        "missing is falsy": _cond("final_state.error", ConditionOp.FALSY),
        "missing != anything": _cond("final_state.error", ConditionOp.NOT_EQUALS, "x"),
    }
    fails = {
        "stage == failed": _cond("final_state.stage", ConditionOp.EQUALS, "failed"),
        "stage != completed": _cond("final_state.stage", ConditionOp.NOT_EQUALS, "completed"),
        "scenario not in": _cond("metadata.scenario", ConditionOp.IN, ["conflict"]),
        "room exists": _cond("final_state.room", ConditionOp.EXISTS, True),
        "success falsy": _cond("final_state.success", ConditionOp.FALSY),
        "missing equals None": _cond("final_state.error", ConditionOp.EQUALS, None),
        "missing in": _cond("final_state.error", ConditionOp.IN, [None]),
        "missing truthy": _cond("final_state.error", ConditionOp.TRUTHY),
    }
    assert {k: c.holds(booked_case) for k, c in holds.items()} == dict.fromkeys(holds, True)
    assert {k: c.holds(booked_case) for k, c in fails.items()} == dict.fromkeys(fails, False)


def test_condition_descriptions() -> None:
    assert _cond("final_state.stage", ConditionOp.EQUALS, "failed").describe() == (
        "final_state.stage == 'failed'"
    )
    assert _cond("final_state.stage", ConditionOp.NOT_EQUALS, "done").describe() == (
        "final_state.stage != 'done'"
    )
    assert _cond("metadata.scenario", ConditionOp.IN, ["a", "b"]).describe() == (
        "metadata.scenario in ['a', 'b']"
    )
    assert _cond("final_state.success", ConditionOp.TRUTHY).describe() == (
        "final_state.success is truthy"
    )


def test_case_output_and_latency(booked_case: Case) -> None:
    assert booked_case.output.startswith("Booked Alice and Bob")
    # recorded per step: 120 + 200 + 450
    assert booked_case.total_latency_ms() == 770.0
    assert booked_case.model_copy(update={"latency_ms": 999.0}).total_latency_ms() == 999.0
    stamped = Case.model_validate(
        {
            "id": "s",
            "trace": [
                {"kind": "user", "content": "hi", "timestamp": "2024-05-07T10:00:00Z"},
                {"kind": "assistant", "content": "hello", "timestamp": "2024-05-07T10:00:02.5Z"},
            ],
        }
    )
    assert stamped.total_latency_ms() == 2500.0
    assert Case(id="empty").output == ""
    assert Case(id="empty").total_latency_ms() is None
    assert [s.label for s in booked_case.trace] == [
        "user",
        "check_availability",
        "book_meeting",
        "assistant",
    ]
