"""Trajectory predicates over the ordered steps of a recorded scheduling run.

The conflict run's steps: 1 user, 2 check_availability, 3 conflict_detected, 4 assistant,
5 user, 6 user_confirmed, 7 book_meeting, 8 assistant.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from checkweigh.checks import (
    Before,
    BuiltinCheck,
    Count,
    NeverAfter,
    StepMatch,
    ToolCalled,
    TrajectoryMatch,
    WithinFirst,
)
from checkweigh.core import Case, VerdictState

P, F, NA = VerdictState.PASSED, VerdictState.FAILED, VerdictState.NOT_APPLICABLE


def judge(check: BuiltinCheck, case: Case) -> tuple[VerdictState, str]:
    verdict = check.evaluate(case)
    return verdict.state, verdict.reason


def tool(name: str, **arguments: Any) -> dict[str, Any]:
    return {"kind": "tool_call", "name": name, "arguments": arguments}


def event(name: str) -> dict[str, Any]:
    return {"kind": "event", "name": name}


def say(text: str) -> dict[str, Any]:
    return {"kind": "assistant", "content": text}


def test_tool_called_with_an_argument_subset(conflict_case: Case) -> None:
    assert judge(ToolCalled(step="book_meeting"), conflict_case) == (
        P,
        "book_meeting at step 7",
    )
    assert judge(
        ToolCalled(step={"name": "book_meeting", "arguments": {"time": "14:00", "duration": 30}}),
        conflict_case,
    ) == (P, "book_meeting(time='14:00', duration=30) at step 7")
    assert (
        judge(
            ToolCalled(
                step={"name": "book_meeting", "arguments": {"participants": ["Alice", "Bob"]}}
            ),
            conflict_case,
        )[0]
        is P
    )
    assert judge(
        ToolCalled(step={"name": "book_meeting", "arguments": {"time": "10:00"}}), conflict_case
    ) == (F, "book_meeting(time='10:00') never happened")
    # an argument the call never had does not match
    assert (
        judge(
            ToolCalled(step={"name": "book_meeting", "arguments": {"room": None}}), conflict_case
        )[0]
        is F
    )
    assert judge(ToolCalled(step="cancel_meeting"), conflict_case) == (
        F,
        "cancel_meeting never happened",
    )


def test_step_match_by_kind_and_content(conflict_case: Case) -> None:
    offered = StepMatch(kind="assistant", content=r"Would \d{2}:\d{2}")
    assert offered.indices(conflict_case.trace) == [3]
    assert offered.describe() == r"assistant ~/Would \d{2}:\d{2}/"
    assert judge(ToolCalled(step=offered), conflict_case) == (
        P,
        r"assistant ~/Would \d{2}:\d{2}/ at step 4",
    )
    assert StepMatch(kind="tool_call").indices(conflict_case.trace) == [1, 6]
    assert StepMatch(kind="user", content="go ahead").indices(conflict_case.trace) == [4]
    assert StepMatch(name="book_meeting", kind="event").indices(conflict_case.trace) == []
    assert StepMatch.model_validate("user_confirmed") == StepMatch(name="user_confirmed")


def test_before(conflict_case: Case, case_with: Callable[..., Case]) -> None:
    checked_first = Before(first="check_availability", then="book_meeting")
    assert judge(checked_first, conflict_case) == (
        P,
        "check_availability (step 2) before book_meeting (step 7)",
    )
    hasty = case_with(trace=[tool("book_meeting"), tool("check_availability"), say("Done")])
    assert judge(checked_first, hasty) == (
        F,
        "book_meeting at step 1 came before check_availability at step 2",
    )
    blind = case_with(trace=[tool("book_meeting"), say("Done")])
    assert judge(checked_first, blind) == (
        F,
        "book_meeting at step 1 without any check_availability",
    )
    # nothing was booked: the ordering question does not arise...
    gave_up = case_with(trace=[tool("check_availability"), say("Nobody is free on Tuesday")])
    assert judge(checked_first, gave_up) == (NA, "book_meeting never happened")
    # ...unless the booking was required
    required = Before(first="check_availability", then="book_meeting", then_required=True)
    assert judge(required, gave_up) == (F, "book_meeting never happened")
    # only first occurrences count
    rebooked = case_with(
        trace=[tool("book_meeting"), tool("check_availability"), tool("book_meeting")]
    )
    assert judge(checked_first, rebooked)[0] is F


def test_within_first(conflict_case: Case) -> None:
    assert judge(WithinFirst(step="check_availability", n=2), conflict_case) == (
        P,
        "check_availability at step 2 <= 2",
    )
    assert judge(WithinFirst(step="check_availability", n=1), conflict_case) == (
        F,
        "check_availability first at step 2, after 1",
    )
    assert judge(WithinFirst(step={"kind": "tool_call"}, n=3), conflict_case)[0] is P
    assert judge(WithinFirst(step="send_invite", n=8), conflict_case) == (
        F,
        "send_invite never happened",
    )


def test_never_after_with_unless(conflict_case: Case, case_with: Callable[..., Case]) -> None:
    guarded = NeverAfter(step="book_meeting", after="conflict_detected", unless="user_confirmed")
    assert judge(guarded, conflict_case) == (P, "user_confirmed at step 6 lifted the ban")
    strict = NeverAfter(step="book_meeting", after="conflict_detected")
    assert judge(strict, conflict_case) == (
        F,
        "book_meeting at step 7 after conflict_detected at step 3",
    )
    steamrolled = case_with(
        trace=[
            tool("check_availability"),
            event("conflict_detected"),
            tool("book_meeting", time="10:00"),
            event("user_confirmed"),
        ]
    )
    assert judge(guarded, steamrolled) == (
        F,
        "book_meeting at step 3 after conflict_detected at step 2",
    )
    # a second conflict after the confirmation puts the ban back
    second = case_with(
        trace=[
            event("conflict_detected"),
            event("user_confirmed"),
            tool("book_meeting", time="14:00"),
            event("conflict_detected"),
            tool("book_meeting", time="16:30"),
        ]
    )
    assert judge(guarded, second) == (
        F,
        "book_meeting at step 5 after conflict_detected at step 4",
    )
    # ...and a second confirmation lifts it again
    reconfirmed = case_with(
        trace=[
            event("conflict_detected"),
            event("user_confirmed"),
            event("conflict_detected"),
            event("user_confirmed"),
            tool("book_meeting"),
        ]
    )
    assert judge(guarded, reconfirmed) == (P, "user_confirmed at step 4 lifted the ban")
    # bookings before the conflict are fine
    early = case_with(trace=[tool("book_meeting"), event("conflict_detected"), say("Heads up")])
    assert judge(strict, early) == (P, "no book_meeting after conflict_detected")
    calm = case_with(trace=[tool("check_availability"), tool("book_meeting")])
    assert judge(strict, calm) == (NA, "conflict_detected never happened")


def test_count(conflict_case: Case, case_with: Callable[..., Case]) -> None:
    once = Count(step="book_meeting", min=1, max=1)
    assert judge(once, conflict_case) == (P, "book_meeting happened 1 time(s)")
    double = case_with(trace=[tool("book_meeting"), tool("book_meeting"), say("Booked twice")])
    assert judge(once, double) == (F, "book_meeting happened 2 time(s), more than 1")
    assert judge(Count(step={"kind": "tool_call"}, min=3), conflict_case) == (
        F,
        "tool_call happened 2 time(s), fewer than 3",
    )
    assert judge(Count(step="cancel_meeting", max=0), conflict_case) == (
        P,
        "cancel_meeting happened 0 time(s)",
    )


@pytest.mark.parametrize(
    ("spec", "state"),
    [
        ({"reference": ["check_availability", "book_meeting"]}, P),
        ({"reference": ["book_meeting", "check_availability"]}, F),
        ({"reference": ["book_meeting", "check_availability"], "mode": "unordered"}, P),
        (
            {
                "reference": ["check_availability", "book_meeting", "book_meeting"],
                "mode": "unordered",
            },
            F,
        ),
        ({"reference": ["check_availability", "book_meeting", "send_invite"], "mode": "subset"}, P),
        ({"reference": ["book_meeting"], "mode": "subset"}, F),
        ({"reference": ["book_meeting"], "mode": "superset"}, P),
        ({"reference": ["book_meeting", "send_invite"], "mode": "superset"}, F),
        ({"reference_path": "ground_truth.tools"}, P),
        ({"reference_path": "ground_truth.tools", "mode": "superset"}, P),
        (
            {
                "reference": [
                    "check_availability",
                    "conflict_detected",
                    "user_confirmed",
                    "book_meeting",
                ],
                "kinds": ["tool_call", "event"],
            },
            P,
        ),
        (
            {
                "reference": ["user", "assistant", "user", "assistant"],
                "kinds": ["user", "assistant"],
            },
            P,
        ),
    ],
)
def test_trajectory_match(conflict_case: Case, spec: dict[str, Any], state: VerdictState) -> None:
    assert judge(TrajectoryMatch(**spec), conflict_case)[0] is state


def test_trajectory_match_reasons(conflict_case: Case, case_with: Callable[..., Case]) -> None:
    assert judge(
        TrajectoryMatch(reference=["check_availability", "book_meeting"]), conflict_case
    ) == (
        P,
        "trajectory ['check_availability', 'book_meeting'] matches (strict)",
    )
    assert judge(TrajectoryMatch(reference=["book_meeting"]), conflict_case) == (
        F,
        # the first call that differs, with its arguments (the old reason listed both names)
        "call 1 (step 2) is check_availability(participants=['Alice', 'Bob'], day='Tuesday'), "
        "expected book_meeting (strict)",
    )
    by_path = TrajectoryMatch(reference_path="ground_truth.tools")
    no_truth = case_with(ground_truth={"time": "14:00"})
    assert judge(by_path, no_truth) == (NA, "no reference at ground_truth.tools")
    bad_truth = case_with(ground_truth={"tools": "check_availability,book_meeting"})
    assert judge(by_path, bad_truth) == (F, "reference is str, expected a list of calls")


@pytest.mark.parametrize(
    ("model", "spec", "message"),
    [
        (ToolCalled, {"step": {}}, "a step match needs at least one of name, kind"),
        (ToolCalled, {"step": {"name": "book_meeting", "tool": "x"}}, "Extra inputs"),
        (ToolCalled, {"step": {"kind": "tool"}}, "'user', 'assistant', 'tool_call'"),
        (ToolCalled, {"step": {"content": "(unclosed"}}, "invalid regular expression '(unclosed'"),
        (Before, {"first": "check_availability"}, "then\n  Field required"),
        (WithinFirst, {"step": "check_availability", "n": 0}, "greater than or equal to 1"),
        (Count, {"step": "book_meeting"}, "give 'min', 'max' or both"),
        (Count, {"step": "book_meeting", "min": 2, "max": 1}, "min (2) is greater than max (1)"),
        (
            TrajectoryMatch,
            {"reference": ["a"], "reference_path": "ground_truth.tools"},
            "give exactly one of 'reference' or 'reference_path'",
        ),
        (TrajectoryMatch, {}, "give exactly one of 'reference' or 'reference_path'"),
        (TrajectoryMatch, {"reference_path": "ground_truth..tools"}, "malformed field path"),
        (TrajectoryMatch, {"reference": ["a"], "mode": "fuzzy"}, "'strict', 'unordered'"),
    ],
)
def test_bad_specs_are_rejected(
    model: type[BuiltinCheck], spec: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError) as info:
        model(**spec)
    assert message in str(info.value)


def test_step_checks_read_a_trace_appended_to_in_place_afresh() -> None:
    # the name index is shared by a case's checks; a conversation grows its trace turn by turn
    case = Case.model_validate({"id": "c", "trace": [tool("search"), say("Found two.")]})
    count = Count(step="book_*", max=1)
    first = WithinFirst(step="book_*", n=3)
    before = Before(first="search", then="book_flight", then_required=True)
    assert judge(count, case) == (P, "book_* happened 0 time(s)")
    assert judge(first, case)[0] is F
    assert judge(before, case) == (F, "book_flight never happened")
    case.trace.append(case.trace[0].model_validate(tool("book_flight", seat="4A")))
    assert judge(count, case) == (P, "book_* happened 1 time(s)")
    assert judge(first, case) == (P, "book_* at step 3 <= 3")
    assert judge(before, case) == (P, "search (step 1) before book_flight (step 3)")
    case.trace.append(case.trace[2])
    assert judge(count, case) == (F, "book_* happened 2 time(s), more than 1")
    other = Case.model_validate({"id": "d", "trace": [tool("book_hotel")]})
    assert judge(count, other) == (P, "book_* happened 1 time(s)")
    assert judge(first, other) == (P, "book_* at step 1 <= 3")
