"""The built-in field checks on a recorded scheduling run, and their spec validation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from checkweigh.checks import (
    BuiltinCheck,
    Contains,
    Equals,
    JsonSchema,
    Length,
    OneOf,
    Regex,
    SetEquals,
    WithinTolerance,
    WordCount,
)
from checkweigh.core import Case, Verdict, VerdictState

P, F, NA = VerdictState.PASSED, VerdictState.FAILED, VerdictState.NOT_APPLICABLE


def judge(check: BuiltinCheck, case: Case) -> tuple[VerdictState, str]:
    verdict = check.evaluate(case)
    assert isinstance(verdict, Verdict)
    return verdict.state, verdict.reason


def test_equals(conflict_case: Case) -> None:
    time = "final_state.booking.time"
    assert judge(Equals(path=time, expected_path="ground_truth.time"), conflict_case) == (
        P,
        "final_state.booking.time == ground_truth.time",
    )
    assert judge(Equals(path=time, value="10:00"), conflict_case) == (
        F,
        "final_state.booking.time is '14:00', expected '10:00'",
    )
    assert judge(Equals(path="final_state.booking.duration", value=30), conflict_case)[0] is P
    assert (
        judge(Equals(path="trace[-2].arguments.title", value="Weekly Sync"), conflict_case)[0] is P
    )
    # case-insensitive only when asked
    title = "final_state.booking.title"
    assert judge(Equals(path=title, value="weekly sync"), conflict_case)[0] is F
    assert (
        judge(Equals(path=title, value="WEEKLY SYNC", case_insensitive=True), conflict_case)[0] is P
    )
    # an explicit null is an expectation like any other
    assert judge(Equals(path="final_state.error", value=None), conflict_case) == (
        F,
        "final_state.error is missing",
    )


def test_equals_missing_paths(conflict_case: Case) -> None:
    # the value under test is missing: the agent did not produce it, so the check fails
    assert judge(
        Equals(path="final_state.booking.room", expected_path="ground_truth.room"), conflict_case
    ) == (F, "final_state.booking.room is missing")
    # the expectation is missing: nothing to compare against, so it does not apply
    assert judge(
        Equals(path="final_state.booking.time", expected_path="ground_truth.room"), conflict_case
    ) == (NA, "no expectation at ground_truth.room")


def test_one_of(conflict_case: Case) -> None:
    duration = "final_state.booking.duration"
    assert judge(OneOf(path=duration, values=[15, 30]), conflict_case) == (
        P,
        "final_state.booking.duration is one of [15, 30]",
    )
    assert judge(OneOf(path=duration, values=[45, 60]), conflict_case) == (
        F,
        "final_state.booking.duration is 30, expected one of [45, 60]",
    )
    assert judge(OneOf(path="final_state.booking.room", values=["A"]), conflict_case) == (
        F,
        "final_state.booking.room is missing",
    )
    assert (
        judge(OneOf(path="final_state.stage", values=["completed", "confirmed"]), conflict_case)[0]
        is P
    )


@pytest.mark.parametrize(
    ("spec", "state", "reason"),
    [
        (
            {"path": "output", "values": ["14:00", "bk-88"], "mode": "all"},
            P,
            "output contains ['14:00', 'bk-88']",
        ),
        (
            {"path": "output", "values": ["14:00", "10:00"], "mode": "all"},
            F,
            "output lacks ['10:00']",
        ),
        (
            {"path": "output", "values": ["10:00", "16:30", "14:00"]},
            P,
            "output contains ['14:00']",
        ),
        (
            {"path": "output", "values": ["Monday", "Friday"]},
            F,
            "output lacks ['Monday', 'Friday']",
        ),
        (
            {"path": "output", "values": ["sorry", "unfortunately"], "mode": "none"},
            P,
            "none found",
        ),
        (
            {"path": "output", "values": ["BOOKED", "cancel"], "mode": "none"},
            P,
            "none found",
        ),
        (
            {
                "path": "output",
                "values": ["BOOKED", "cancel"],
                "mode": "none",
                "case_insensitive": True,
            },
            F,
            "output contains ['BOOKED']",
        ),
        (
            {"path": "output", "values": ["WEEKLY SYNC", "BK-88"], "mode": "all"},
            F,
            "output lacks ['WEEKLY SYNC', 'BK-88']",
        ),
        (
            {
                "path": "output",
                "values": ["WEEKLY SYNC", "BK-88"],
                "mode": "all",
                "case_insensitive": True,
            },
            P,
            "output contains ['WEEKLY SYNC', 'BK-88']",
        ),
        # on a list, items are matched whole
        (
            {"path": "final_state.booking.participants", "values": ["Alice", "Bob"], "mode": "all"},
            P,
            "final_state.booking.participants contains ['Alice', 'Bob']",
        ),
        (
            {"path": "final_state.booking.participants", "values": ["Ali"]},
            F,
            "final_state.booking.participants lacks ['Ali']",
        ),
        (
            {"path": "final_state.booking.participants", "values": ["alice"]},
            F,
            "final_state.booking.participants lacks ['alice']",
        ),
        (
            {
                "path": "final_state.booking.participants",
                "values": ["alice"],
                "case_insensitive": True,
            },
            P,
            "final_state.booking.participants contains ['alice']",
        ),
        (
            {"path": "final_state.booking.participants", "values": ["Carol"], "mode": "none"},
            P,
            "none found",
        ),
        (
            {"path": "final_state.booking.duration", "values": ["30"]},
            F,
            "final_state.booking.duration is int, expected text or a list",
        ),
        (
            {"path": "final_state.summary", "values": ["x"]},
            F,
            "final_state.summary is missing",
        ),
    ],
)
def test_contains(
    conflict_case: Case, spec: dict[str, Any], state: VerdictState, reason: str
) -> None:
    assert judge(Contains(**spec), conflict_case) == (state, reason)


def test_regex(conflict_case: Case) -> None:
    assert judge(Regex(path="output", pattern=r"Confirmation: bk-\d+"), conflict_case) == (
        P,
        r"output matches /Confirmation: bk-\d+/",
    )
    clock = r"\d{2}:\d{2}"
    assert (
        judge(Regex(path="final_state.booking.time", pattern=clock, fullmatch=True), conflict_case)[
            0
        ]
        is P
    )
    # search finds the time inside the reply; fullmatch needs the whole reply to be a time
    assert judge(Regex(path="output", pattern=clock), conflict_case)[0] is P
    assert judge(Regex(path="output", pattern=clock, fullmatch=True), conflict_case) == (
        F,
        r"output does not match /\d{2}:\d{2}/",
    )
    assert judge(Regex(path="output", pattern="weekly sync"), conflict_case)[0] is F
    assert (
        judge(Regex(path="output", pattern="weekly sync", case_insensitive=True), conflict_case)[0]
        is P
    )
    assert judge(Regex(path="final_state.booking.duration", pattern="30"), conflict_case) == (
        F,
        "final_state.booking.duration is int, expected text",
    )
    assert judge(Regex(path="final_state.summary", pattern="x"), conflict_case) == (
        F,
        "final_state.summary is missing",
    )


def test_set_equals(conflict_case: Case, case_with: Callable[..., Case]) -> None:
    people = "final_state.booking.participants"
    assert (
        judge(SetEquals(path=people, expected_path="ground_truth.participants"), conflict_case)[0]
        is P
    )
    assert judge(SetEquals(path=people, value=["Alice", "Carol"]), conflict_case) == (
        F,
        "final_state.booking.participants: unexpected ['Bob'], missing ['Carol']",
    )
    assert judge(SetEquals(path=people, value=["alice", "BOB"]), conflict_case)[0] is F
    assert (
        judge(SetEquals(path=people, value=["alice", "BOB"], case_insensitive=True), conflict_case)[
            0
        ]
        is P
    )
    assert judge(SetEquals(path="final_state.booking.time", value=["14:00"]), conflict_case) == (
        F,
        "final_state.booking.time or the expected value is not a list",
    )
    assert judge(SetEquals(path=people, expected_path="ground_truth.attendees"), conflict_case) == (
        NA,
        "no expectation at ground_truth.attendees",
    )


def test_values_path_names_the_expectation_too(conflict_case: Case) -> None:
    # equals and set_equals read the case's values under the name contains and one_of use
    time = "final_state.booking.time"
    check = Equals(path=time, values_path="ground_truth.time")
    assert check.expected_path == "ground_truth.time"
    assert judge(check, conflict_case) == (P, "final_state.booking.time == ground_truth.time")
    assert judge(Equals(path=time, values_path="ground_truth.room"), conflict_case) == (
        NA,
        "no expectation at ground_truth.room",
    )
    people = "final_state.booking.participants"
    assert (
        judge(SetEquals(path=people, values_path="ground_truth.participants"), conflict_case)[0]
        is P
    )
    with pytest.raises(ValidationError, match="exactly one of 'value' or 'expected_path'"):
        Equals(path=time, values_path="ground_truth.time", value="14:00")
    with pytest.raises(ValidationError, match="'expected_path' or 'values_path', not both"):
        Equals(path=time, values_path="ground_truth.time", expected_path="ground_truth.time")


def test_set_equals_normalizes_text_items(case_with: Callable[..., Case]) -> None:
    case = case_with(
        final_state={"facts": ["Refund of $1,250 issued", "  seat 12A", 3]},
        ground_truth={"facts": ["refund of $1250 issued", "SEAT 12a", 3]},
    )
    check: dict[str, Any] = {"path": "final_state.facts", "expected_path": "ground_truth.facts"}
    assert judge(SetEquals(**check), case)[0] is F
    assert judge(SetEquals(**check, normalize=["case", "whitespace"]), case)[0] is F
    loose = SetEquals(**check, normalize=["case", "whitespace", "thousands_separators"])
    assert judge(loose, case) == (
        P,
        "final_state.facts has the items of ground_truth.facts",
    )
    # normalising does not make different items equal
    other = case_with(final_state={"facts": ["seat 12B"]}, ground_truth={"facts": ["seat 12a"]})
    assert judge(SetEquals(**check, normalize=["case"]), other) == (
        F,
        "final_state.facts: unexpected ['seat 12b'], missing ['seat 12a']",
    )


def test_set_equals_on_lists_of_objects(case_with: Callable[..., Case]) -> None:
    # participants given as objects are a list like any other: same items, any order
    alice = {"name": "Alice", "email": "alice@example.com"}
    bob = {"name": "Bob", "email": "bob@example.com"}
    case = case_with(
        final_state={"booking": {"participants": [alice, bob]}},
        ground_truth={"participants": [bob, alice]},
    )
    check = SetEquals(
        path="final_state.booking.participants", expected_path="ground_truth.participants"
    )
    assert check.evaluate(case).state is P


def test_within_tolerance(conflict_case: Case) -> None:
    price = "final_state.booking.price_eur"
    truth = "ground_truth.price_eur"
    assert judge(WithinTolerance(path=price, expected_path=truth, abs_tol=2), conflict_case) == (
        P,
        "final_state.booking.price_eur = 41.5, within 2 of 40.0",
    )
    assert judge(WithinTolerance(path=price, expected_path=truth, abs_tol=1), conflict_case) == (
        F,
        "final_state.booking.price_eur = 41.5, expected 40.0 within 1",
    )
    # 41.5 is 3.75% off 40
    assert judge(WithinTolerance(path=price, value=40, rel_tol=0.04), conflict_case)[0] is P
    assert judge(WithinTolerance(path=price, value=40, rel_tol=0.03), conflict_case)[0] is F
    # no tolerance: exact
    assert (
        judge(WithinTolerance(path="final_state.booking.duration", value=30), conflict_case)[0] is P
    )
    assert judge(WithinTolerance(path="final_state.booking.time", value=14), conflict_case) == (
        F,
        "final_state.booking.time is '14:00', expected a number",
    )
    # a boolean is not a number
    assert judge(WithinTolerance(path="final_state.success", value=1), conflict_case)[0] is F


def test_within_tolerance_missing_expectation_is_not_applicable(conflict_case: Case) -> None:
    # like equals and set_equals: no expected value to compare against, so it does not apply
    check = WithinTolerance(
        path="final_state.booking.price_eur", expected_path="ground_truth.cost", abs_tol=1
    )
    assert judge(check, conflict_case) == (NA, "no expectation at ground_truth.cost")


def test_within_tolerance_rel_tol_is_a_fraction_of_the_expected_value(
    conflict_case: Case,
) -> None:
    # documented: rel_tol is "a fraction of the expected value". 41.5 is 1.5 off 40, i.e.
    # 3.75% of the expected 40 (but only 3.61% of 41.5): a 3.7% tolerance must not accept it
    check = WithinTolerance(
        path="final_state.booking.price_eur", expected_path="ground_truth.price_eur", rel_tol=0.037
    )
    assert check.evaluate(conflict_case).state is F


def test_length_and_word_count(conflict_case: Case) -> None:
    assert judge(Length(path="final_state.alternatives", min=1, max=3), conflict_case) == (
        P,
        "final_state.alternatives has 2 items",
    )
    assert judge(Length(path="output", max=50), conflict_case) == (
        F,
        "output has 98 chars, more than 50",
    )
    assert judge(Length(path="final_state.booking", min=6), conflict_case) == (
        F,
        "final_state.booking has 5 items, fewer than 6",
    )
    assert judge(Length(path="final_state.booking.duration", min=1), conflict_case) == (
        F,
        "final_state.booking.duration is int, which has no length",
    )
    assert judge(WordCount(path="output", min=5, max=40), conflict_case) == (
        P,
        "output has 17 words",
    )
    assert judge(WordCount(path="output", max=10), conflict_case) == (
        F,
        "output has 17 words, more than 10",
    )
    assert judge(WordCount(path="trace[4].content", min=5), conflict_case) == (
        F,
        "trace[4].content has 4 words, fewer than 5",
    )
    assert judge(WordCount(path="final_state.alternatives", min=1), conflict_case) == (
        F,
        "final_state.alternatives is list, expected text",
    )
    assert judge(WordCount(path="final_state.summary", min=1), conflict_case) == (
        F,
        "final_state.summary is missing",
    )


BOOKING_SCHEMA = {
    "type": "object",
    "required": ["booking_id", "time"],
    "properties": {
        "booking_id": {"type": "string", "pattern": "^bk-"},
        "time": {"type": "string"},
        "duration": {"type": "integer", "minimum": 15},
    },
}


def test_json_schema(conflict_case: Case) -> None:
    # a JSON text is parsed first
    assert judge(
        JsonSchema(path="final_state.raw_response", json_schema=BOOKING_SCHEMA), conflict_case
    ) == (P, "final_state.raw_response is valid against the schema")
    # a structured value is validated as it is
    assert judge(
        JsonSchema(path="trace[-2].result", json_schema=BOOKING_SCHEMA), conflict_case
    ) == (F, "trace[-2].result at (root): 'time' is a required property")
    string_duration = {"type": "object", "properties": {"duration": {"type": "string"}}}
    assert judge(
        JsonSchema(path="final_state.raw_response", json_schema=string_duration), conflict_case
    ) == (F, "final_state.raw_response at duration: 30 is not of type 'string'")
    assert judge(JsonSchema(path="output", json_schema={"type": "object"}), conflict_case) == (
        F,
        "output is not valid JSON: Expecting value at char 0",
    )
    # with parse_text off, text is validated as text
    assert (
        judge(
            JsonSchema(path="output", json_schema={"type": "string"}, parse_text=False),
            conflict_case,
        )[0]
        is P
    )
    assert judge(
        JsonSchema(path="final_state.nothing", json_schema={"type": "object"}), conflict_case
    ) == (F, "final_state.nothing is missing")


@pytest.mark.parametrize(
    ("model", "spec", "message"),
    [
        (
            Equals,
            {
                "path": "final_state.booking.time",
                "value": "10:00",
                "expected_path": "ground_truth.time",
            },
            "give exactly one of 'value' or 'expected_path'",
        ),
        (Equals, {"path": "final_state.booking.time"}, "give exactly one of 'value'"),
        (Equals, {"path": "final_state..time", "value": 1}, "malformed field path"),
        (
            Equals,
            {"path": "final_state.time", "expected_path": "ground_truth[x]"},
            "malformed field path 'ground_truth[x]'",
        ),
        (Equals, {"path": "output", "value": 1, "expected": 2}, "Extra inputs are not permitted"),
        (OneOf, {"path": "final_state.stage", "values": []}, "at least 1 item"),
        (Contains, {"path": "output", "values": ["x"], "mode": "some"}, "'any', 'all' or 'none'"),
        (
            Regex,
            {"path": "output", "pattern": "bk-([0-9]+"},
            "invalid regular expression 'bk-([0-9]+'",
        ),
        (Length, {"path": "output"}, "give 'min', 'max' or both"),
        (Length, {"path": "output", "min": 10, "max": 5}, "min (10) is greater than max (5)"),
        (WordCount, {"path": "output", "min": -1}, "greater than or equal to 0"),
        (WithinTolerance, {"path": "output", "value": 1, "abs_tol": -0.5}, "greater than or equal"),
        (
            JsonSchema,
            {"path": "output", "json_schema": {"type": "strng"}},
            "invalid JSON schema: 'strng' is not valid",
        ),
        (
            JsonSchema,
            {"path": "output", "json_schema": {"type": "object", "required": "time"}},
            "invalid JSON schema",
        ),
    ],
)
def test_bad_specs_are_rejected(
    model: type[BuiltinCheck], spec: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError) as info:
        model(**spec)
    assert message in str(info.value)


def test_a_copy_with_new_settings_judges_by_the_new_settings(conflict_case: Case) -> None:
    check = Equals(path="final_state.booking.time", value="14:00")
    assert check.evaluate(conflict_case).state is P
    stricter = check.model_copy(update={"value": "10:00"})
    assert stricter.value == "10:00"
    assert judge(stricter, conflict_case) == (
        F,
        "final_state.booking.time is '14:00', expected '10:00'",
    )


def test_equal_specs_stay_equal_after_use(conflict_case: Case) -> None:
    used = Equals(path="final_state.booking.time", expected_path="ground_truth.time")
    fresh = Equals(path="final_state.booking.time", expected_path="ground_truth.time")
    assert used == fresh
    used.evaluate(conflict_case)
    assert used == fresh


def test_checks_are_frozen_and_versioned() -> None:
    check = Equals(path="final_state.booking.time", value="10:00")
    with pytest.raises(ValidationError, match="frozen"):
        check.path = "output"  # type: ignore[misc]
    assert check.version == "1"
    assert check.type == "equals"
    assert check.model_dump() == {
        "type": "equals",
        "path": "final_state.booking.time",
        "value": "10:00",
        "expected_path": None,
        "missing": "not_applicable",
        "case_insensitive": False,
        "match": "any",
        "normalize": [],
    }
