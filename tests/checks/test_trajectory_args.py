"""Trajectory matching with arguments: a table of vectors, the reasons, and properties.

The calls come from an airline customer-service agent (tau-bench's airline domain): reads such
as ``get_user_details``, writes such as ``book_reservation`` and ``update_reservation_flights``.
The semantics follow agentevals/openevals' ``trajectory_match_mode`` and
``tool_args_match_mode`` (subset: the call's arguments are a subset of the reference's;
superset: they hold at least the reference's), made recursive into nested objects and paired by
a maximum matching rather than greedily.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from checkweigh.checks import ArgsOverride, StepMatch, ToolCalled, TrajectoryMatch
from checkweigh.checks._values import count_differences, differences, first_difference, matches
from checkweigh.core import Case, VerdictState

P, F, NA = VerdictState.PASSED, VerdictState.FAILED, VerdictState.NOT_APPLICABLE


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"kind": "tool_call", "name": name, "arguments": arguments}


def errored(name: str, error: str, **arguments: Any) -> dict[str, Any]:
    return {**call(name, **arguments), "error": error}


def raw(name: str, text: str) -> dict[str, Any]:
    """A call whose arguments were logged as text that is not a JSON object."""
    return {"kind": "tool_call", "name": name, "arguments": text}


def ref(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def case_of(trace: list[dict[str, Any]], **ground_truth: Any) -> Case:
    steps = [{"kind": "user", "content": "I need to change my flight"}, *trace]
    steps.append({"kind": "assistant", "content": "Done."})
    return Case.model_validate({"id": "air-1", "trace": steps, "ground_truth": ground_truth})


USER = call("get_user_details", user_id="mia_li_3668")
FLIGHTS = [{"flight_number": "HAT136", "date": "2024-05-20"}]
BOOK = call(
    "book_reservation",
    user_id="mia_li_3668",
    flights=FLIGHTS,
    cabin="economy",
    insurance="no",
)
BOOK_LESS = call("book_reservation", user_id="mia_li_3668", flights=FLIGHTS, cabin="economy")
CANCEL = call("cancel_reservation", reservation_id="ZFA04Y")
R_USER = ref("get_user_details", user_id="mia_li_3668")
R_BOOK = ref(
    "book_reservation", user_id="mia_li_3668", flights=FLIGHTS, cabin="economy", insurance="no"
)
R_BOOK_LESS = ref("book_reservation", user_id="mia_li_3668", flights=FLIGHTS, cabin="economy")
R_CANCEL = ref("cancel_reservation", reservation_id="ZFA04Y")

# (id, options, the trace's calls, the reference, expected verdict)
VECTORS: list[tuple[str, dict[str, Any], list[Any], list[Any], VerdictState]] = [
    # strict: position by position
    ("strict-exact-same", {}, [USER, BOOK], [R_USER, R_BOOK], P),
    ("strict-exact-swapped", {}, [BOOK, USER], [R_USER, R_BOOK], F),
    ("strict-exact-extra-key", {}, [USER, BOOK], [R_USER, R_BOOK_LESS], F),
    ("strict-exact-missing-key", {}, [USER, BOOK_LESS], [R_USER, R_BOOK], F),
    ("strict-ignore", {"arguments_mode": "ignore"}, [USER, BOOK_LESS], [R_USER, R_CANCEL], F),
    (
        "strict-ignore-names-equal",
        {"arguments_mode": "ignore"},
        [call("get_user_details", user_id="x"), BOOK_LESS],
        [R_USER, R_BOOK],
        P,
    ),
    ("strict-subset-fewer-keys", {"arguments_mode": "subset"}, [BOOK_LESS], [R_BOOK], P),
    ("strict-subset-extra-key", {"arguments_mode": "subset"}, [BOOK], [R_BOOK_LESS], F),
    ("strict-superset-extra-key", {"arguments_mode": "superset"}, [BOOK], [R_BOOK_LESS], P),
    ("strict-superset-missing-key", {"arguments_mode": "superset"}, [BOOK_LESS], [R_BOOK], F),
    ("strict-extra-call-at-end", {}, [USER, BOOK, CANCEL], [R_USER, R_BOOK], F),
    ("strict-missing-call-at-end", {}, [USER], [R_USER, R_BOOK], F),
    ("strict-empty-both", {}, [], [], P),
    # unordered: the same multiset of calls
    ("unordered-exact-swapped", {"mode": "unordered"}, [BOOK, USER], [R_USER, R_BOOK], P),
    ("unordered-repeat-extra", {"mode": "unordered"}, [USER, USER, BOOK], [R_USER, R_BOOK], F),
    (
        "unordered-repeats-counted",
        {"mode": "unordered"},
        [USER, BOOK, USER],
        [R_USER, R_USER, R_BOOK],
        P,
    ),
    (
        "unordered-ignore",
        {"mode": "unordered", "arguments_mode": "ignore"},
        [BOOK_LESS, call("get_user_details")],
        [R_USER, R_BOOK],
        P,
    ),
    (
        "unordered-subset-ok",
        {"mode": "unordered", "arguments_mode": "subset"},
        [BOOK_LESS, USER],
        [R_USER, R_BOOK],
        P,
    ),
    (
        "unordered-subset-extra-key",
        {"mode": "unordered", "arguments_mode": "subset"},
        [BOOK],
        [R_BOOK_LESS],
        F,
    ),
    (
        "unordered-superset-ok",
        {"mode": "unordered", "arguments_mode": "superset"},
        [BOOK, USER],
        [R_USER, R_BOOK_LESS],
        P,
    ),
    (
        "unordered-superset-missing-key",
        {"mode": "unordered", "arguments_mode": "superset"},
        [BOOK_LESS],
        [R_BOOK],
        F,
    ),
    # subset: nothing beyond the reference (repeats counted)
    ("subset-fewer-calls", {"mode": "subset"}, [USER], [R_USER, R_BOOK], P),
    ("subset-other-call", {"mode": "subset"}, [USER, CANCEL], [R_USER, R_BOOK], F),
    ("subset-repeat", {"mode": "subset"}, [USER, USER], [R_USER, R_BOOK], F),
    ("subset-no-calls", {"mode": "subset"}, [], [R_USER, R_BOOK], P),
    (
        "subset-ignore",
        {"mode": "subset", "arguments_mode": "ignore"},
        [call("book_reservation", cabin="business")],
        [R_USER, R_BOOK],
        P,
    ),
    (
        "subset-subset",
        {"mode": "subset", "arguments_mode": "subset"},
        [BOOK_LESS],
        [R_USER, R_BOOK],
        P,
    ),
    (
        "subset-superset-missing-key",
        {"mode": "subset", "arguments_mode": "superset"},
        [BOOK_LESS],
        [R_BOOK],
        F,
    ),
    # superset: at least the reference (extra calls allowed)
    ("superset-extra-call", {"mode": "superset"}, [USER, CANCEL, BOOK], [R_USER, R_BOOK], P),
    ("superset-missing-call", {"mode": "superset"}, [USER], [R_USER, R_BOOK], F),
    ("superset-repeat-needed", {"mode": "superset"}, [USER], [R_USER, R_USER], F),
    (
        "superset-ignore",
        {"mode": "superset", "arguments_mode": "ignore"},
        [call("book_reservation"), USER],
        [R_BOOK],
        P,
    ),
    (
        "superset-subset",
        {"mode": "superset", "arguments_mode": "subset"},
        [BOOK_LESS, CANCEL],
        [R_BOOK],
        P,
    ),
    (
        "superset-superset",
        {"mode": "superset", "arguments_mode": "superset"},
        [BOOK],
        [R_BOOK_LESS],
        P,
    ),
    (
        "superset-superset-missing-key",
        {"mode": "superset", "arguments_mode": "superset"},
        [BOOK_LESS],
        [R_BOOK],
        F,
    ),
    # the order of equal calls: a greedy pairing takes the first fit and fails these
    (
        "greedy-trap-superset",
        {"mode": "superset", "arguments_mode": "superset"},
        [
            call("book_reservation", cabin="economy", insurance="no"),
            call("book_reservation", cabin="economy", insurance="yes"),
        ],
        [
            ref("book_reservation", cabin="economy"),
            ref("book_reservation", cabin="economy", insurance="no"),
        ],
        P,
    ),
    (
        "greedy-trap-subset",
        {"mode": "subset", "arguments_mode": "subset"},
        [call("book_reservation", cabin="economy"), call("book_reservation", insurance="no")],
        [
            ref("book_reservation", cabin="economy", insurance="no"),
            ref("book_reservation", cabin="economy"),
        ],
        P,
    ),
    # numbers by value, booleans are not numbers, strings exact, null only null
    (
        "int-equals-float",
        {"mode": "unordered"},
        [call("send_certificate", user_id="mia", amount=30)],
        [ref("send_certificate", user_id="mia", amount=30.0)],
        P,
    ),
    (
        "true-is-not-1",
        {},
        [call("book_reservation", insurance=True)],
        [ref("book_reservation", insurance=1)],
        F,
    ),
    ("string-is-not-number", {}, [call("calculate", x="30")], [ref("calculate", x=30)], F),
    ("case-matters", {}, [call("search", city="sfo")], [ref("search", city="SFO")], F),
    ("null-equals-null", {}, [call("cancel", note=None)], [ref("cancel", note=None)], P),
    ("null-vs-missing-exact", {}, [call("cancel")], [ref("cancel", note=None)], F),
    (
        "null-vs-missing-subset",
        {"arguments_mode": "subset"},
        [call("cancel")],
        [ref("cancel", note=None)],
        P,
    ),
    (
        "null-vs-missing-superset",
        {"arguments_mode": "superset"},
        [call("cancel")],
        [ref("cancel", note=None)],
        F,
    ),
    # nested objects and lists
    (
        "nested-superset",
        {"arguments_mode": "superset"},
        [call("update_passengers", pax={"first": "Mia", "last": "Li", "dob": "1990-04-05"})],
        [ref("update_passengers", pax={"first": "Mia", "last": "Li"})],
        P,
    ),
    (
        "nested-subset-wrong-direction",
        {"arguments_mode": "subset"},
        [call("update_passengers", pax={"first": "Mia", "last": "Li", "dob": "1990-04-05"})],
        [ref("update_passengers", pax={"first": "Mia", "last": "Li"})],
        F,
    ),
    (
        "list-items-superset",
        {"arguments_mode": "superset"},
        [call("update_flights", flights=[{"flight_number": "HAT1", "date": "d", "price": 9}])],
        [ref("update_flights", flights=[{"flight_number": "HAT1", "date": "d"}])],
        P,
    ),
    (
        "list-length-differs",
        {"arguments_mode": "superset"},
        [call("update_flights", flights=[{"flight_number": "HAT1"}, {"flight_number": "HAT2"}])],
        [ref("update_flights", flights=[{"flight_number": "HAT1"}])],
        F,
    ),
    (
        "list-order-matters",
        {},
        [call("update_flights", flights=["HAT2", "HAT1"])],
        [ref("update_flights", flights=["HAT1", "HAT2"])],
        F,
    ),
    # per-tool overrides
    (
        "override-mode",
        {"overrides": {"book_reservation": "superset"}},
        [USER, BOOK],
        [R_USER, R_BOOK_LESS],
        P,
    ),
    (
        "override-mode-only-that-tool",
        {"overrides": {"book_reservation": "superset"}},
        [call("get_user_details", user_id="mia_li_3668", verbose=True), BOOK],
        [R_USER, R_BOOK_LESS],
        F,
    ),
    (
        "override-compare-paths",
        {"overrides": {"book_reservation": ["user_id", "flights[*].flight_number"]}},
        [call("book_reservation", user_id="mia_li_3668", flights=[{"flight_number": "HAT136"}])],
        [R_BOOK],
        P,
    ),
    (
        "override-compare-paths-differ",
        {"overrides": {"book_reservation": ["flights[*].date"]}},
        [call("book_reservation", flights=[{"flight_number": "HAT136", "date": "2024-05-21"}])],
        [R_BOOK],
        F,
    ),
    (
        "override-ignore-paths",
        {"overrides": {"book_reservation": {"ignore": ["insurance", "flights[*].date"]}}},
        [call("book_reservation", user_id="mia_li_3668", flights=[{"flight_number": "HAT136"}])],
        [{"name": "book_reservation", "arguments": {**R_BOOK["arguments"], "cabin": "economy"}}],
        F,  # cabin is still compared: the call has none
    ),
    (
        "override-ignore-paths-ok",
        {"overrides": {"book_reservation": {"ignore": ["insurance", "flights[*].date"]}}},
        [
            call(
                "book_reservation",
                user_id="mia_li_3668",
                flights=[{"flight_number": "HAT136", "date": "2024-06-01"}],
                cabin="economy",
            )
        ],
        [R_BOOK],
        P,
    ),
    # errored calls: counted unless the selection leaves them out
    (
        "errored-counted-by-default",
        {"mode": "unordered"},
        [errored("book_reservation", "Error: payment declined"), BOOK],
        [R_BOOK],
        F,
    ),
    (
        "errored-excluded",
        {"mode": "unordered", "select": {"error": False}},
        [errored("book_reservation", "Error: payment declined", **R_BOOK["arguments"]), BOOK],
        [R_BOOK],
        P,
    ),
    (
        "only-errored",
        {"mode": "unordered", "select": {"error": False}},
        [errored("book_reservation", "Error: payment declined", **R_BOOK["arguments"])],
        [R_BOOK],
        F,
    ),
    (
        "select-writes-filters-reference",
        {"mode": "unordered", "select": {"name": ["book_*", "cancel_*", "update_*"]}},
        [call("get_user_details", user_id="someone_else"), BOOK],
        [R_USER, R_BOOK],
        P,
    ),
    (
        "select-regex",
        {"mode": "unordered", "select": {"name_regex": "(book|cancel)_reservation"}},
        [USER, CANCEL, BOOK],
        [R_BOOK],
        F,  # the cancellation was not expected
    ),
    # references by name only
    ("bare-name-any-arguments", {}, [USER, BOOK], ["get_user_details", "book_reservation"], P),
    ("name-without-arguments", {}, [BOOK], [{"name": "book_reservation"}], P),
    ("empty-arguments-exact", {}, [BOOK], [ref("book_reservation")], F),
    ("no-arguments-call", {}, [call("list_all_airports")], [ref("list_all_airports")], P),
    # arguments that are not a JSON object
    ("unparsed-exact", {}, [raw("cancel_reservation", "ZFA04Y")], [R_CANCEL], F),
    (
        "unparsed-ignore",
        {"arguments_mode": "ignore"},
        [raw("cancel_reservation", "ZFA04Y")],
        [R_CANCEL],
        P,
    ),
    ("unparsed-name-only", {}, [raw("cancel_reservation", "ZFA04Y")], ["cancel_reservation"], P),
    (
        "json-text-parsed",
        {},
        [
            {
                "kind": "tool_call",
                "name": "cancel_reservation",
                "arguments": '{"reservation_id": "ZFA04Y"}',
            }
        ],
        [R_CANCEL],
        P,
    ),
]


@pytest.mark.parametrize(
    ("options", "calls", "reference", "state"),
    [pytest.param(*row[1:], id=row[0]) for row in VECTORS],
)
def test_vectors(
    options: dict[str, Any], calls: list[Any], reference: list[Any], state: VerdictState
) -> None:
    check = TrajectoryMatch(reference=reference, **options)
    verdict = check.evaluate(case_of(calls))
    assert verdict.state is state, verdict.reason
    # the same vector with the reference read from the case
    by_path = TrajectoryMatch(reference_path="ground_truth.actions", **options)
    assert by_path.evaluate(case_of(calls, actions=reference)) == verdict


def test_there_are_enough_vectors() -> None:
    assert len(VECTORS) >= 40
    modes = {(o.get("mode", "strict"), o.get("arguments_mode", "exact")) for _, o, *_ in VECTORS}
    every = set(itertools.product(["strict", "unordered", "subset", "superset"], ["exact"]))
    every |= set(
        itertools.product(
            ["strict", "unordered", "subset", "superset"], ["ignore", "subset", "superset"]
        )
    )
    assert every <= modes


@pytest.mark.parametrize(
    ("actions", "state"),
    [
        ([{"name": "book_reservation", "kwargs": R_BOOK["arguments"]}], P),  # tau-bench
        (
            [
                {
                    "action_id": "a1",
                    "name": "book_reservation",
                    "arguments": R_BOOK["arguments"],
                    "requestor": "assistant",
                    "info": None,
                }
            ],
            P,
        ),  # tau2-bench, extra keys ignored
        (
            [
                {
                    "type": "function",
                    "function": {
                        "name": "book_reservation",
                        "arguments": '{"user_id": "mia_li_3668", "cabin": "economy", '
                        '"insurance": "no", '
                        '"flights": [{"flight_number": "HAT136", "date": "2024-05-20"}]}',
                    },
                }
            ],
            P,
        ),  # OpenAI
        ([{"name": "book_reservation", "args": {**R_BOOK["arguments"], "cabin": "business"}}], F),
        # tau2-bench's compare_args: only those arguments count
        (
            [
                {
                    "name": "book_reservation",
                    "arguments": {"user_id": "mia_li_3668", "cabin": "x"},
                    "compare_args": ["user_id"],
                }
            ],
            P,
        ),
    ],
)
def test_reference_shapes_from_the_case(actions: list[Any], state: VerdictState) -> None:
    check = TrajectoryMatch(reference_path="ground_truth.actions", mode="unordered")
    verdict = check.evaluate(case_of([BOOK], actions=actions))
    assert verdict.state is state, verdict.reason


@pytest.mark.parametrize(
    ("actions", "reason"),
    [
        (None, "no reference at ground_truth.actions"),
        ("book_reservation", "reference is str, expected a list of calls"),
        ([{"kwargs": {}}], "reference item 0 is not a name or a {name, arguments} object"),
        ([{"name": "x", "kwargs": {}, "arguments": {}}], "reference item 0 (x): arguments are"),
        ([{"name": "x", "arguments": "not json"}], "reference item 0 (x): arguments are not one"),
        ([{"name": "x", "compare_args": "user_id"}], "compare_args is not a list of paths"),
        ([{"name": "x", "compare_args": ["a..b"]}], "malformed argument path 'a..b'"),
    ],
)
def test_bad_references_in_the_case(actions: Any, reason: str) -> None:
    check = TrajectoryMatch(reference_path="ground_truth.actions", mode="unordered")
    verdict = check.evaluate(case_of([BOOK], actions=actions))
    assert verdict.state is (NA if actions is None else F)
    assert reason in verdict.reason


def test_reasons_name_the_first_missing_extra_or_mismatched_call() -> None:
    expected = ref(
        "update_reservation_flights",
        reservation_id="ZFA04Y",
        cabin="economy",
        flights=[{"flight_number": "HAT170", "date": "2024-05-18"}],
        payment_id="credit_card_4421486",
    )
    made = call(
        "update_reservation_flights",
        reservation_id="ZFA04Y",
        cabin="economy",
        flights=[{"flight_number": "HAT170", "date": "2024-05-17"}],
        payment_id="credit_card_4421486",
    )
    trace = [USER, made]
    writes = {"name": ["update_*", "book_*", "cancel_*"], "error": False}
    cases = [
        (
            {"mode": "superset"},
            "missing call update_reservation_flights(reservation_id='ZFA04Y', cabin='economy', "
            "...): closest call (step 3) differs at flights[0].date: '2024-05-17' vs expected "
            "'2024-05-18' (superset: 1 missing)",
        ),
        (
            {"mode": "subset"},
            "extra call update_reservation_flights(reservation_id='ZFA04Y', cabin='economy', "
            "...) at step 3: differs at flights[0].date: '2024-05-17' vs expected '2024-05-18' "
            "(subset: 1 extra)",
        ),
        (
            {"mode": "strict"},
            "call 2 (step 3) update_reservation_flights differs at flights[0].date: '2024-05-17' "
            "vs expected '2024-05-18' (strict)",
        ),
        (
            {"mode": "unordered", "select": writes},
            "missing call update_reservation_flights(reservation_id='ZFA04Y', cabin='economy', "
            "...): closest call (step 3) differs at flights[0].date: '2024-05-17' vs expected "
            "'2024-05-18' (unordered: 1 missing, 1 extra)",
        ),
    ]
    for options, reason in cases:
        check = TrajectoryMatch(reference=[R_USER, expected], **options)
        assert check.evaluate(case_of(trace)).reason == reason

    def reason_of(calls: list[Any], reference: list[Any], **options: Any) -> str:
        return TrajectoryMatch(reference=reference, **options).evaluate(case_of(calls)).reason

    # a call the trace never made at all / one the selection left out because it errored
    assert reason_of([USER], [R_USER, R_CANCEL], mode="superset") == (
        "missing call cancel_reservation(reservation_id='ZFA04Y'): no cancel_reservation call "
        "(superset: 1 missing)"
    )
    failed_cancel = errored("cancel_reservation", "Error: reservation already cancelled")
    assert reason_of(
        [USER, failed_cancel],
        [R_CANCEL],
        mode="unordered",
        select={"name": "cancel_*", "error": False},
    ) == (
        "missing call cancel_reservation(reservation_id='ZFA04Y'): cancel_reservation at step 3 "
        "errored ('Error: reservation already cancelled'), not counted (unordered: 1 missing, "
        "0 extra)"
    )
    # a repeat: the one matching call is paired with the other expected call
    assert reason_of([CANCEL], [R_CANCEL, R_CANCEL], mode="superset") == (
        "missing call cancel_reservation(reservation_id='ZFA04Y'): every matching "
        "cancel_reservation call is paired with another expected call (superset: 1 missing)"
    )
    assert reason_of([CANCEL, CANCEL], [R_CANCEL], mode="subset") == (
        "extra call cancel_reservation(reservation_id='ZFA04Y') at step 3: every expected "
        "cancel_reservation call is paired with another call (subset: 1 extra)"
    )
    # unparsed arguments say so
    assert reason_of([raw("cancel_reservation", "ZFA04Y please")], [R_CANCEL]) == (
        "call 1 (step 2) cancel_reservation has unparsed arguments 'ZFA04Y please' (not a JSON "
        "object) (strict)"
    )
    # a missing key, an unexpected key, a wrong type
    assert reason_of([BOOK_LESS], [R_BOOK], mode="unordered").endswith(
        "closest call (step 2) differs at insurance: missing, expected 'no' "
        "(unordered: 1 missing, 1 extra)"
    )
    assert "differs at insurance: 'no' not expected" in reason_of([BOOK], [R_BOOK_LESS])
    assert "differs at insurance: True vs expected 1" in reason_of(
        [call("book_reservation", insurance=True)], [ref("book_reservation", insurance=1)]
    )
    # the passing reason lists the calls compared
    assert TrajectoryMatch(reference=[R_USER, R_BOOK]).evaluate(case_of([USER, BOOK])).reason == (
        "trajectory ['get_user_details', 'book_reservation'] matches (strict)"
    )


# --- step matchers ------------------------------------------------------------------------


AIRLINE_TRACE = [
    call("get_user_details", user_id="mia_li_3668"),
    {
        **call("get_reservation_details", reservation_id="ZFA04Y"),
        "result": '{"reservation_id": "ZFA04Y", "cabin": "economy", "status": "active"}',
    },
    errored("update_reservation_flights", "Error: flight HAT170 not available", cabin="economy"),
    {
        **call(
            "update_reservation_flights",
            reservation_id="ZFA04Y",
            cabin="business",
            flights=[{"flight_number": "HAT170", "date": "2024-05-18"}],
        ),
        "result": {"reservation_id": "ZFA04Y", "cabin": "business", "total": 1250.0},
    },
    raw("cancel_reservation", "ZFA04Y"),
]


@pytest.mark.parametrize(
    ("match", "hits"),
    [
        ("update_reservation_flights", [3, 4]),
        (["get_user_details", "cancel_reservation"], [1, 5]),
        ("update_*", [3, 4]),
        ("get_*", [1, 2]),
        (["get_user_*", "cancel_reservation"], [1, 5]),
        ({"name_regex": "(update|cancel)_reservation.*"}, [3, 4, 5]),
        ({"name_regex": "reservation"}, []),  # the whole name must match
        ({"name": "update_*", "error": False}, [4]),
        ({"name": "update_*", "error": True}, [3]),
        ({"kind": "tool_call", "error": True}, [3]),
        ({"result_contains": '"status": "active"'}, [2]),
        ({"result_contains": "1250"}, [4]),  # a structured result is searched as JSON text
        ({"result": {"status": "active"}}, [2]),  # a JSON text result is parsed
        ({"result": {"cabin": "business", "total": 1250}}, [4]),
        ({"result": {"cabin": "first"}}, []),
        ({"name": "update_*", "arguments": {"cabin": "business"}}, [4]),
        ({"arguments": {"flights": [{"date": "2024-05-18"}]}}, [4]),  # recursive superset
        ({"arguments": {"cabin": "economy"}, "arguments_mode": "exact"}, [3]),
        ({"arguments": {"cabin": "economy", "x": 1}, "arguments_mode": "subset"}, [3]),
        ({"name": "cancel_reservation", "arguments": {"reservation_id": "ZFA04Y"}}, []),
        ({"name": "cancel_reservation", "arguments_mode": "ignore", "arguments": {"a": 1}}, [5]),
    ],
)
def test_step_matcher_selects(match: Any, hits: list[int]) -> None:
    case = case_of(AIRLINE_TRACE)
    found = StepMatch.model_validate(match).find(case)
    assert found == hits


def test_step_matcher_arguments_from_the_case() -> None:
    by_case = {"name": "update_*", "arguments_path": "ground_truth.expected_args"}
    check = ToolCalled(step=by_case)
    good = case_of(AIRLINE_TRACE, expected_args={"reservation_id": "ZFA04Y", "cabin": "business"})
    assert check.evaluate(good).reason == (
        "update_*(arguments from ground_truth.expected_args) at step 5"
    )
    bad = case_of(AIRLINE_TRACE, expected_args={"cabin": "first"})
    assert check.evaluate(bad).state is F
    as_text = case_of(AIRLINE_TRACE, expected_args='{"cabin": "business"}')
    assert check.evaluate(as_text).state is P
    missing = case_of(AIRLINE_TRACE)
    assert check.evaluate(missing)[:2] == (
        NA,
        "no expected arguments at ground_truth.expected_args",
    )
    wrong = case_of(AIRLINE_TRACE, expected_args=["cabin"])
    assert check.evaluate(wrong).reason == (
        "expected arguments at ground_truth.expected_args are list, expected an object"
    )
    with pytest.raises(ValueError, match="takes its arguments from the case"):
        StepMatch.model_validate(by_case).indices(good.trace)


def test_step_checks_take_errors_and_unparsed_arguments_into_account() -> None:
    case = case_of(AIRLINE_TRACE)
    cancel = {"name": "cancel_reservation", "arguments": {"reservation_id": "ZFA04Y"}}
    assert ToolCalled(step=cancel).evaluate(case).reason == (
        "cancel_reservation(reservation_id='ZFA04Y') never happened; step 6 cancel_reservation "
        "has unparsed arguments 'ZFA04Y' (not a JSON object)"
    )
    from checkweigh.checks import Before, Count, NeverAfter, WithinFirst

    ok_update = {"name": "update_*", "error": False}
    assert Count(step=ok_update, max=1).evaluate(case).reason == (
        "update_* (succeeded) happened 1 time(s)"
    )
    assert Count(step="update_*", max=1).evaluate(case).state is F
    assert Before(first="get_reservation_details", then=ok_update).evaluate(case).state is P
    assert WithinFirst(step={"name": "update_*", "error": True}, n=4).evaluate(case).state is P
    no_write_after_failure = NeverAfter(
        step={"name": ["update_*", "cancel_*"], "error": False},
        after={"kind": "tool_call", "error": True},
    )
    assert no_write_after_failure.evaluate(case).reason == (
        "update_*|cancel_* (succeeded) at step 5 after tool_call (errored) at step 4"
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"name": []}, "give at least one name"),
        ({"name": ""}, "a name cannot be empty"),
        ({"name": "a", "name_regex": "b"}, "give 'name' or 'name_regex', not both"),
        ({"name_regex": "(book"}, "name_regex: invalid regular expression '(book'"),
        ({"arguments": {"a": 1}, "arguments_path": "ground_truth.a"}, "not both"),
        ({"arguments_path": "ground_truth..a"}, "malformed field path"),
        ({"name": "a", "arguments_mode": "partial"}, "'exact', 'ignore', 'subset' or 'superset'"),
        ({"error": None}, "a step match needs at least one of"),
    ],
)
def test_bad_step_matchers_are_rejected(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as info:
        StepMatch.model_validate(spec)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"overrides": {"book": {"compare": ["a"], "ignore": ["b"]}}}, "not both"),
        ({"overrides": {"book": {}}}, "give a mode, 'compare', 'ignore' or 'unordered'"),
        ({"overrides": {"book": ["flights[x]"]}}, "malformed argument path 'flights[x]'"),
        ({"overrides": {"book": "fuzzy"}}, "'exact', 'ignore', 'subset' or 'superset'"),
        ({"reference": [{"name": "a", "kwargs": {}, "args": {}}]}, "give one of kwargs, args"),
        ({"reference": [{"name": "a", "argument": {}}]}, "Extra inputs are not permitted"),
        ({"arguments_mode": "loose"}, "'exact', 'ignore', 'subset' or 'superset'"),
    ],
)
def test_bad_trajectory_options_are_rejected(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as info:
        TrajectoryMatch.model_validate({"reference": ["a"], **spec})
    assert message in str(info.value)


def test_settings_decide_equality_and_copies_recompile() -> None:
    assert StepMatch.model_validate("update_*") == StepMatch(name="update_*")
    assert hash(StepMatch(name="a")) == hash(StepMatch.model_validate("a"))
    assert StepMatch(name="a") != StepMatch(name="b")
    copied = StepMatch(name="get_*").model_copy(update={"name": "update_*"})
    assert copied.find(case_of(AIRLINE_TRACE)) == [3, 4]
    assert ArgsOverride.model_validate("subset") == ArgsOverride(mode="subset")


# --- argument comparison ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("actual", "expected", "mode", "path"),
    [
        ({"a": 1}, {"a": 1.0}, "exact", None),
        ({"a": True}, {"a": 1}, "exact", "a"),
        ({"a": 0}, {"a": False}, "superset", "a"),
        ({"a": {"b": [1, {"c": 2}]}}, {"a": {"b": [1, {"c": 3}]}}, "exact", "a.b[1].c"),
        ({"a": {"b": [1, {"c": 2, "d": 1}]}}, {"a": {"b": [1, {"c": 2}]}}, "superset", None),
        ({"a": {"b": [1, {"c": 2}]}}, {"a": {"b": [1, {"c": 2, "d": 1}]}}, "subset", None),
        ({"a": [1, 2]}, {"a": [1, 2, 3]}, "superset", "a"),
        ({"a": "x"}, {"a": {"x": 1}}, "superset", "a"),
        ({}, {"a": None}, "superset", "a"),
        ({"b": 1}, {}, "exact", "b"),
        ({"b": 1}, {}, "ignore", None),
    ],
)
def test_first_difference(actual: Any, expected: Any, mode: Any, path: str | None) -> None:
    diff = first_difference(actual, expected, mode)
    assert (diff.path if diff else None) == path
    assert matches(actual, expected, mode) is (path is None)


ARG_MODES = st.sampled_from(["exact", "ignore", "subset", "superset"])
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from([1.0, 2.5]) | st.text("ab"),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("xyz"), inner),
    max_leaves=8,
)


@given(JSON, JSON)
def test_modes_relate(a: Any, b: Any) -> None:
    assert matches(a, a, "exact")
    assert matches(a, b, "subset") == matches(b, a, "superset")
    assert matches(a, b, "exact") == (matches(a, b, "subset") and matches(a, b, "superset"))
    assert matches(a, b, "ignore")
    assert (first_difference(a, b, "exact") is None) == (not list(differences(a, b, "exact")))


@given(JSON, JSON, ARG_MODES)
def test_counting_differences_counts_the_named_ones(a: Any, b: Any, mode: Any) -> None:
    named = len(list(differences(a, b, mode)))
    assert count_differences(a, b, mode) == named
    assert count_differences(a, b, mode, limit=1) == min(named, 1)


# --- properties of the pairing ------------------------------------------------------------

NAMES = st.sampled_from(["book_reservation", "cancel_reservation"])
ARGS = st.dictionaries(st.sampled_from(["cabin", "insurance"]), st.sampled_from([0, 1, 1.0, True]))
CALLS = st.lists(st.tuples(NAMES, ARGS), max_size=5)
REFS = st.lists(st.tuples(NAMES, ARGS | st.none()), max_size=4)


def _verdict(mode: str, arg_mode: str, calls: Any, refs: Any) -> VerdictState:
    trace = [call(name, **args) for name, args in calls]
    reference = [name if args is None else ref(name, **args) for name, args in refs]
    check = TrajectoryMatch(reference=reference, mode=mode, arguments_mode=arg_mode)
    return check.evaluate(case_of(trace)).state


def _oracle(mode: str, arg_mode: Any, calls: Any, refs: Any) -> bool:
    """Brute force: try every one-to-one assignment."""

    def fits(c: Any, r: Any) -> bool:
        return c[0] == r[0] and (r[1] is None or matches(c[1], r[1], arg_mode))

    def injects(left: Any, right: Any, ok: Any) -> bool:
        return any(
            all(ok(left[i], right[j]) for i, j in enumerate(chosen))
            for chosen in itertools.permutations(range(len(right)), len(left))
        )

    if mode == "strict":
        return len(calls) == len(refs) and all(map(fits, calls, refs))
    if mode == "superset":
        return injects(refs, calls, lambda r, c: fits(c, r))
    if mode == "subset":
        return injects(calls, refs, fits)
    return len(calls) == len(refs) and injects(calls, refs, fits)


@settings(max_examples=300, deadline=None)
@given(CALLS, REFS, ARG_MODES, st.randoms(use_true_random=False))
def test_pairing_is_a_maximum_matching_and_ignores_order(
    calls: Any, refs: Any, arg_mode: str, rnd: Any
) -> None:
    states = {}
    for mode in ("strict", "unordered", "subset", "superset"):
        state = _verdict(mode, arg_mode, calls, refs)
        assert (state is P) == _oracle(mode, arg_mode, calls, refs), mode
        states[mode] = state
        if mode != "strict":
            shuffled = list(calls)
            rnd.shuffle(shuffled)
            assert _verdict(mode, arg_mode, shuffled, refs) is state
    if states["strict"] is P:
        assert states["unordered"] is P
    both = states["subset"] is P and states["superset"] is P
    assert (states["unordered"] is P) == both


def test_thousands_of_calls_of_one_tool_are_paired() -> None:
    # a long log: 3,000 polls of one tool, each compatible with every reference poll; pairing
    # them once made augmenting paths thousands deep (recursion would end the check errored)
    n = 3_000
    polls = [call("get_status", job="nightly-export") for _ in range(n)]
    reference = [ref("get_status", job="nightly-export") for _ in range(n)]
    check = TrajectoryMatch(reference_path="ground_truth.actions", mode="unordered")
    assert check.evaluate(case_of(polls, actions=reference)).state is P
    verdict = check.evaluate(case_of(polls[1:], actions=reference))
    assert verdict.state is F
    assert "missing" in verdict.reason
    # one poll of another job pairs with nothing: the other 2,999 still pair
    odd = [*polls[:-1], call("get_status", job="weekly-export")]
    verdict = check.evaluate(case_of(odd, actions=reference))
    assert verdict.state is F
    assert verdict.reason == (
        "missing call get_status(job='nightly-export'): every matching get_status call is "
        "paired with another expected call (unordered: 1 missing, 1 extra)"
    )
