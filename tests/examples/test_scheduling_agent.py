"""The scheduling example: the agent's behaviour, its deliberate mistakes, its checks and the
outcome breakdown of the whole suite."""

from __future__ import annotations

import importlib
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from checkweigh.core import Case, CaseResult, VerdictState
from checkweigh.judges import ScriptedJudge
from checkweigh.runs import Evaluator
from checkweigh.suites import iter_cases, load_suite
from support.evaluating import evaluate_all

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scheduling"


@pytest.fixture
def agent(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(EXAMPLE))
    return importlib.import_module("scheduling_agent.agent")


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(EXAMPLE))
    return importlib.import_module("scheduling_agent.checks")


def ask(agent: ModuleType, message: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    out = agent.run({"message": message})
    return out["trace"], out["final_state"]


def names(trace: list[dict[str, Any]]) -> list[str]:
    return [s["name"] for s in trace if s["kind"] in ("tool_call", "event")]


# --- the agent ---------------------------------------------------------------------------------


def test_books_a_free_slot(agent: ModuleType) -> None:
    trace, state = ask(agent, "Book a 45 minute meeting with Alice and Bob on 2025-03-04 at 10:00")
    assert state["success"] is True
    assert state["stage"] == "completed"
    assert state["scheduling_context"] == {
        "booking_confirmed": True,
        "booked_event": {
            "participants": ["Alice", "Bob"],
            "date": "2025-03-04",
            "time": "10:00",
            "duration": 45,
        },
        "conflicts": [],
        "proposed_alternatives": [],
    }
    assert state["error"] is None
    assert state["requested_clarification"] is False
    assert trace[0] == {
        "kind": "user",
        "content": "Book a 45 minute meeting with Alice and Bob on 2025-03-04 at 10:00",
    }
    assert names(trace) == ["lookup_person", "lookup_person", "check_availability", "book_meeting"]
    assert trace[-1]["kind"] == "assistant"
    assert trace[-1]["content"] == (
        "Booked: 45-minute meeting with Alice and Bob on Tuesday 2025-03-04 at 10:00."
    )


def test_runs_are_deterministic_including_latencies(agent: ModuleType) -> None:
    message = "Book 30 minutes with Bob and Carol on 2025-03-05 at 11:00"
    first, second = agent.run({"message": message}), agent.run({"message": message})
    assert first == second
    tools = [s for s in first["trace"] if s["kind"] == "tool_call"]
    assert all(s["latency_ms"] > 0 for s in tools)
    by_name = {s["name"]: s["latency_ms"] for s in tools}
    assert by_name["find_alternatives"] > by_name["check_availability"]


def test_conflict_proposes_alternatives_without_booking(agent: ModuleType) -> None:
    trace, state = ask(agent, "Book 30 minutes with Bob and Carol on 2025-03-05 at 11:00")
    ctx = state["scheduling_context"]
    assert state["stage"] == "needs_input"
    assert state["success"] is False
    assert ctx["booked_event"] is None
    assert ctx["conflicts"] == [
        {
            "person": "Bob",
            "date": "2025-03-05",
            "start": "11:00",
            "end": "12:00",
            "title": "Architecture review",
        }
    ]
    assert [(a["date"], a["time"]) for a in ctx["proposed_alternatives"]] == [
        ("2025-03-05", "12:00"),
        ("2025-03-05", "12:30"),
        ("2025-03-05", "13:00"),
    ]
    assert names(trace) == [
        "lookup_person",
        "lookup_person",
        "check_availability",
        "conflict_detected",
        "find_alternatives",
    ]
    assert "Bob is busy from 11:00 to 12:00" in trace[-1]["content"]
    assert trace[-1]["content"].endswith("Which one should I book?")


def test_books_next_free_slot_when_the_request_allows_it(agent: ModuleType) -> None:
    trace, state = ask(
        agent,
        "Book 30 minutes with Alice and Bob on 2025-03-03 at 10:00 - if anyone is busy, "
        "book the next free slot",
    )
    assert state["scheduling_context"]["booked_event"]["time"] == "11:00"
    assert names(trace)[-3:] == ["conflict_detected", "find_alternatives", "book_meeting"]
    assert "user_confirmed" not in names(trace)
    assert "so I booked the next free slot instead" in trace[-1]["content"]


def test_unknown_person_asks_for_clarification(agent: ModuleType) -> None:
    trace, state = ask(agent, "Book 30 minutes with Alice and Frankie on 2025-03-04 at 11:00")
    assert state["stage"] == "needs_input"
    assert state["error"]["type"] == "unknown_person"
    assert state["requested_clarification"] is True
    assert trace[-1]["content"] == "I couldn't find Frankie on the team. Did you mean Frank?"
    assert "check_availability" not in names(trace)


@pytest.mark.parametrize(
    ("message", "error_type", "reply_part"),
    [
        (
            "Book a 0 minute meeting with Bob on 2025-03-05 at 09:00",
            "invalid_duration",
            "How long should it be?",
        ),
        (
            "Book 30 minutes with Erin on 2025-03-03 at 18:00",
            "outside_working_hours",
            "Could you pick a time that ends by 17:00?",
        ),
        (
            "Book 30 minutes with Carol on 2025-03-12 at 10:00",
            "date_out_of_range",
            "Which day that week works for you?",
        ),
        ("What's the weather like in Barcelona?", "unparseable_request", "Do you want me to"),
        (
            "Book a 30 minute meeting on 2025-03-04 at 10:00",
            "missing_participants",
            "Who should attend the meeting on Tuesday 2025-03-04 at 10:00?",
        ),
    ],
)
def test_bad_input_is_explained_and_questioned(
    agent: ModuleType, message: str, error_type: str, reply_part: str
) -> None:
    trace, state = ask(agent, message)
    assert state["stage"] == "needs_input"
    assert state["error"]["type"] == error_type
    assert state["requested_clarification"] is True
    assert reply_part in trace[-1]["content"]
    assert "book_meeting" not in names(trace)


# --- the deliberate mistakes -------------------------------------------------------------------


def booked(state: dict[str, Any]) -> dict[str, Any] | None:
    event: dict[str, Any] | None = state["scheduling_context"]["booked_event"]
    return event


def test_mistake_lowercase_name_is_dropped(agent: ModuleType) -> None:
    _, state = ask(agent, "Book 30 minutes with alice and Bob on 2025-03-05 at 15:00")
    assert booked(state) == {
        "participants": ["Bob"],
        "date": "2025-03-05",
        "time": "15:00",
        "duration": 30,
    }


def test_mistake_an_hour_and_a_half_is_an_hour(agent: ModuleType) -> None:
    _, state = ask(agent, "Schedule an hour and a half with Dan and Erin on 2025-03-03 at 10:00")
    event = booked(state)
    assert event is not None
    assert event["duration"] == 60


def test_mistake_half_past_two_keeps_only_the_hour(agent: ModuleType) -> None:
    _, state = ask(
        agent, "Book a 30 minute meeting with Frank and Grace on Wednesday at half past two"
    )
    event = booked(state)
    assert event is not None
    assert (event["date"], event["time"]) == ("2025-03-05", "14:00")


def test_mistake_twelve_thirty_pm_becomes_24_30(agent: ModuleType) -> None:
    trace, state = ask(agent, "Book 45 minutes with Carol and Heidi on 2025-03-06 at 12:30pm")
    assert booked(state) is None
    assert state["error"]["type"] == "outside_working_hours"
    assert "at 24:30 falls outside working hours" in trace[-1]["content"]


def test_mistake_bare_clock_time_stays_in_the_morning(agent: ModuleType) -> None:
    trace, state = ask(agent, "Book 30 minutes with Dan on 2025-03-06 at 2:30")
    assert booked(state) is None
    assert "at 02:30 falls outside working hours" in trace[-1]["content"]
    _, afternoon = ask(agent, "Book 30 minutes with Dan on 2025-03-06 at 2")
    event = booked(afternoon)
    assert event is not None
    assert event["time"] == "14:00"  # a bare hour does get the afternoon rule


def test_mistake_corrected_date_is_ignored(agent: ModuleType) -> None:
    _, state = ask(
        agent,
        "Book 30 minutes with Bob and Frank on 2025-03-04 at 16:00 - sorry, I meant 2025-03-05",
    )
    event = booked(state)
    assert event is not None
    assert event["date"] == "2025-03-04"


def test_mistake_capitalized_title_is_taken_for_a_person(agent: ModuleType) -> None:
    trace, state = ask(agent, "Schedule a 30 minute Standup with Erin and Heidi on Monday at 11:00")
    assert state["error"]["type"] == "unknown_person"
    assert trace[-1]["content"].startswith("I couldn't find Standup on the team.")


def test_mistake_put_on_the_calendar_skips_the_availability_check(agent: ModuleType) -> None:
    trace, state = ask(
        agent, "Put a 30 minute sync with Grace and Alice on the calendar on 2025-03-03 at 16:00"
    )
    assert names(trace) == ["lookup_person", "lookup_person", "book_meeting"]
    assert state["scheduling_context"]["booking_confirmed"] is True  # Grace is busy 16:00-17:00


def test_mistake_busy_block_inside_the_meeting_is_missed(agent: ModuleType) -> None:
    _, state = ask(agent, "Book a 2 hour review with Carol and Frank on Wednesday at 13:30")
    assert state["scheduling_context"]["conflicts"] == []  # Carol is busy 14:00-14:15
    assert booked(state) is not None


def test_mistake_if_busy_tell_me_is_read_as_permission_to_rebook(agent: ModuleType) -> None:
    trace, state = ask(
        agent,
        "Book 45 minutes with Dan and Grace on 2025-03-06 at 10:00. If Dan is busy, just let me "
        "know.",
    )
    assert "conflict_detected" in names(trace)
    event = booked(state)
    assert event is not None
    assert event["time"] == "12:00"


def test_mistake_friday_search_crashes_silently(agent: ModuleType) -> None:
    trace, state = ask(agent, "Book 30 minutes with Heidi and Grace on Friday at 15:00")
    assert state["stage"] == "failed"
    assert state["error"] == {"type": "KeyError", "message": "'2025-03-08'"}
    assert trace[-1] == {"kind": "assistant", "content": "", "latency_ms": 180.0}
    search = next(s for s in trace if s.get("name") == "find_alternatives")
    assert search["error"] == "KeyError: '2025-03-08'"
    assert "result" not in search


@pytest.mark.parametrize(
    ("message", "reply"),
    [
        ("Book a meeting with Alice and Bob on Saturday at 10:00", "Date not available."),
        (
            "Schedule a 10 hour meeting with Dan and Grace on Tuesday at 09:00",
            "ERROR: duration 600 min exceeds maximum (240 min).",
        ),
    ],
)
def test_mistake_unhelpful_replies(agent: ModuleType, message: str, reply: str) -> None:
    trace, state = ask(agent, message)
    assert trace[-1]["content"] == reply
    assert state["requested_clarification"] is False


# --- the custom checks -------------------------------------------------------------------------


def make_case(
    reply: str,
    *,
    message: str = "Book 30 minutes with Alice and Bob on 2025-03-04 at 10:00",
    stage: str = "completed",
    event: dict[str, Any] | None = None,
    conflicts: list[dict[str, str]] | None = None,
    alternatives: list[dict[str, Any]] | None = None,
    error: dict[str, str] | None = None,
    asked: bool = False,
    truth: dict[str, Any] | None = None,
) -> Case:
    return Case(
        id="t",
        input={"message": message},
        trace=[
            {"kind": "user", "content": message},
            {"kind": "assistant", "content": reply},
        ],
        final_state={
            "success": event is not None,
            "stage": stage,
            "scheduling_context": {
                "booking_confirmed": event is not None,
                "booked_event": event,
                "conflicts": conflicts or [],
                "proposed_alternatives": alternatives or [],
            },
            "error": error,
            "requested_clarification": asked,
        },
        ground_truth=truth or {},
    )


EVENT = {"participants": ["Alice", "Bob"], "date": "2025-03-04", "time": "10:00", "duration": 30}
BOOKED = "Booked: 30-minute meeting with Alice and Bob on Tuesday 2025-03-04 at 10:00."
ERROR_TRUTH = {"expect_error": True, "expect_booking": False, "error_type": "unknown_person"}
UNKNOWN = {"type": "unknown_person", "message": "..."}


def verdict(checks: ModuleType, name: str, case: Case, **options: Any) -> tuple[str, str]:
    v = getattr(checks, name)(case, **options)
    return v.state.value, v.reason


def test_clear_explanation(checks: ModuleType) -> None:
    assert verdict(checks, "clear_explanation", make_case(BOOKED, event=EVENT))[0] == "passed"
    silent = make_case("", stage="failed", error={"type": "KeyError", "message": "x"})
    assert verdict(checks, "clear_explanation", silent) == (
        "failed",
        "silent crash: stage is failed and the reply has 0 chars",
    )
    claims = make_case("Booked it for you, see you on Tuesday then.")
    assert verdict(checks, "clear_explanation", claims) == (
        "failed",
        "reply claims a booking, but none was confirmed",
    )


def test_addresses_request(checks: ModuleType) -> None:
    state, reason = verdict(checks, "addresses_request", make_case(BOOKED, event=EVENT))
    assert (state, reason) == ("passed", "reply refers to Alice, Bob, 2025-03-04")
    terse = make_case("Date not available.", stage="needs_input")
    assert verdict(checks, "addresses_request", terse)[0] == "failed"


def test_provides_next_step(checks: ModuleType) -> None:
    assert verdict(checks, "provides_next_step", make_case(BOOKED, event=EVENT))[0] == (
        "not_applicable"
    )
    question = make_case("Bob is busy then. Would 11:00 work?", stage="needs_input")
    assert verdict(checks, "provides_next_step", question)[0] == "passed"
    dead_end = make_case("ERROR: duration 600 min exceeds maximum.", stage="needs_input")
    assert verdict(checks, "provides_next_step", dead_end)[0] == "failed"


def test_no_hallucination(checks: ModuleType) -> None:
    assert verdict(checks, "no_hallucination", make_case(BOOKED, event=EVENT))[0] == "passed"
    zoe = make_case("I couldn't find Zoey on the team. Did you mean Zoe?", message="with Zoey")
    assert verdict(checks, "no_hallucination", zoe) == (
        "failed",
        "reply names 'Zoe', who is not on the team or in the request",
    )
    clock = make_case("A meeting at 24:30 falls outside working hours.", message="at 12:30pm")
    assert verdict(checks, "no_hallucination", clock) == (
        "failed",
        "reply mentions 24:30, which is not a time of day",
    )
    invented = make_case("Everyone is free at 10:20.", message="at 10:00")
    assert verdict(checks, "no_hallucination", invented)[0] == "failed"
    assert verdict(checks, "no_hallucination", make_case(""))[0] == "not_applicable"


def test_detected_error(checks: ModuleType) -> None:
    good = make_case("Who?", stage="needs_input", error=UNKNOWN, truth=ERROR_TRUTH)
    assert verdict(checks, "detected_error", good) == ("passed", "recorded 'unknown_person'")
    silent = make_case("Date not available.", stage="needs_input", truth=ERROR_TRUTH)
    assert verdict(checks, "detected_error", silent)[0] == "failed"
    wrong = make_case("?", error={"type": "missing_date", "message": "..."}, truth=ERROR_TRUTH)
    assert verdict(checks, "detected_error", wrong) == (
        "failed",
        "recorded 'missing_date', expected 'unknown_person'",
    )
    assert verdict(checks, "detected_error", make_case(BOOKED, event=EVENT))[0] == (
        "not_applicable"
    )


def test_requested_clarification(checks: ModuleType) -> None:
    asked = make_case("Did you mean Frank?", asked=True, truth=ERROR_TRUTH)
    assert verdict(checks, "requested_clarification", asked)[0] == "passed"
    told = make_case("ERROR: duration too long.", truth=ERROR_TRUTH)
    assert verdict(checks, "requested_clarification", told) == (
        "failed",
        "the agent did not ask the user for anything",
    )


def test_actionable_message(checks: ModuleType) -> None:
    concrete = make_case("I couldn't find Frankie. Did you mean Frank?", stage="needs_input")
    assert verdict(checks, "actionable_message", concrete)[0] == "passed"
    vague = make_case("Something is off. Could you rephrase?", stage="needs_input")
    assert verdict(checks, "actionable_message", vague) == (
        "failed",
        "the reply asks, but offers no concrete option",
    )


def test_no_crash(checks: ModuleType) -> None:
    assert verdict(checks, "no_crash", make_case(BOOKED, event=EVENT))[0] == "passed"
    crash = make_case("", stage="failed", error={"type": "KeyError", "message": "'2025-03-08'"})
    assert verdict(checks, "no_crash", crash) == ("failed", "the run failed (KeyError)")


def test_correct_slot(checks: ModuleType) -> None:
    truth = {"expect_booking": True, "date": "2025-03-04", "time": "10:00"}
    assert verdict(checks, "correct_slot", make_case(BOOKED, event=EVENT, truth=truth)) == (
        "passed",
        "booked 2025-03-04 10:00",
    )
    late = make_case(BOOKED, event={**EVENT, "time": "14:00"}, truth=truth)
    assert verdict(checks, "correct_slot", late) == (
        "failed",
        "booked 2025-03-04 14:00, expected 2025-03-04 10:00",
    )
    unwanted = make_case(BOOKED, event=EVENT, truth={"expect_booking": False})
    assert verdict(checks, "correct_slot", unwanted)[0] == "failed"
    nothing = make_case("Bob is busy. Which slot?", truth={"expect_booking": False})
    assert verdict(checks, "correct_slot", nothing)[0] == "not_applicable"


# --- the whole suite ---------------------------------------------------------------------------

EXPECTED_COMPLETION = {
    "successful_completion": 17,
    "graceful_failure": 15,
    "partial_failure": 9,
    "hard_failure": 2,
}


def test_suite_shows_every_outcome_class(agent: ModuleType) -> None:
    suite = load_suite(EXAMPLE / "suite.yaml")
    evaluator = Evaluator.from_suite(suite)
    outcomes: dict[str, str] = {}
    error_recovery: dict[str, str] = {}
    for case in iter_cases(suite.cases_path):
        ran = Case.model_validate({**case.model_dump(), **agent.run(case.input)})
        result = evaluator.evaluate(ran)
        assert not result.errored, result.case_id
        completion = result.results["completion"]
        assert completion.outcome is not None
        outcomes[case.id] = completion.outcome.value
        recovery = result.results["error_recovery"]
        if recovery.outcome is not None:
            error_recovery[case.id] = recovery.outcome.value
        assert all(v.state is not VerdictState.ERRORED for v in result.verdicts.values())

    assert len(outcomes) >= 32
    assert Counter(outcomes.values()) == EXPECTED_COMPLETION
    assert {k for k, v in outcomes.items() if v == "hard_failure"} == {
        "s24-friday-late-conflict",
        "s25-friday-retro-conflict",
    }
    assert {k for k, v in outcomes.items() if v == "partial_failure"} == {
        "s21-put-on-calendar",
        "s22-contained-busy-block",
        "s23-if-busy-tell-me",
        "s26-lowercase-name",
        "s28-half-past-two",
        "s29-twelve-thirty-pm",
        "s30-corrected-date",
        "s31-title-as-name",
        "s32-bare-clock-time",
    }
    assert outcomes["s27-hour-and-a-half"] == "successful_completion"
    assert outcomes["s17-conflict-propose"] == "graceful_failure"
    assert len(error_recovery) == 11
    assert error_recovery["s38-weekend"] == "partial_failure"
    assert suite.notes() == [
        "weights of rubric 'error_recovery' sum to 0.95, not 1.0; they were normalized"
    ]


def test_tone_is_judged_when_a_judge_is_given(agent: ModuleType) -> None:
    suite = load_suite(EXAMPLE / "suite.yaml")
    case = next(c for c in iter_cases(suite.cases_path) if c.id == "s36-ten-hours")
    ran = Case.model_validate({**case.model_dump(), **agent.run(case.input)})

    unjudged = Evaluator.from_suite(suite).evaluate(ran)
    skipped = unjudged.verdicts["appropriate_tone"]
    assert skipped.state is VerdictState.NOT_APPLICABLE
    assert skipped.reason.startswith("skipped: no judge configured: pass --judge")

    judge = ScriptedJudge(['{"verdict": "no", "reason": "it shouts an error code"}'])
    evaluator = Evaluator.from_suite(suite, judge)
    results: list[CaseResult] = []
    results.extend(evaluate_all(evaluator, [ran]))
    (judged,) = results
    assert judged.verdicts["appropriate_tone"] == (
        VerdictState.FAILED,
        "it shouts an error code",
        None,
    )
    prompt = judge.requests[0].messages[1].content
    assert "ERROR: duration 600 min exceeds maximum" in prompt
    assert "Guidance: Answer no if the reply shouts" in prompt
    # the skipped check was excluded (renormalized); the judged one counts
    assert judged.results["clarity"].score != unjudged.results["clarity"].score
