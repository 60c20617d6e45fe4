"""The scheduling suite as ordinary pytest tests, through checkweigh's pytest plugin.

    pytest examples/scheduling/test_scheduling_eval.py
    pytest examples/scheduling/test_scheduling_eval.py --checkweigh-judge ollama:llama3.1

Each test names a case of ``scenarios.yaml`` (or writes one inline); the suite's agent runs on
its input and the case must pass the suite's policy. A failing case fails its test with the
case id, each rubric's score and outcome, and one line per failed check. Without
``--checkweigh-judge`` the judge check (``appropriate_tone``) is skipped, as with
``checkweigh run`` without ``--judge``.
"""

from __future__ import annotations

import pytest

from checkweigh.core import OutcomeClass
from checkweigh.testing import CheckweighFixture, SuiteTester

BOOKINGS = ["s01-simple-booking", "s03-weekday-and-pm", "s07-two-hour-workshop"]
CONFLICTS = ["s15-rebook-next-free", "s17-conflict-propose"]
BAD_INPUT = ["s33-unknown-person", "s37-after-hours", "s40-unparseable"]
# The agent misreads these on purpose (see scenarios.yaml): known failures, kept in view by a
# strict xfail that turns into an error the day the agent gets them right.
KNOWN_MISTAKES = ["s28-half-past-two", "s30-corrected-date"]


@pytest.fixture
def suite(checkweigh: CheckweighFixture) -> SuiteTester:
    return checkweigh.suite("suite.yaml")  # relative to this file's folder


@pytest.mark.parametrize("case_id", BOOKINGS)
def test_books_what_was_asked(suite: SuiteTester, case_id: str) -> None:
    result = suite.assert_passes(case_id, rubric="completion")
    assert result.results["completion"].outcome is OutcomeClass.SUCCESSFUL_COMPLETION


@pytest.mark.parametrize("case_id", CONFLICTS)
def test_handles_conflicts(suite: SuiteTester, case_id: str) -> None:
    suite.assert_passes(case_id, rubric="completion")
    suite.assert_passes(case_id, rubric="process")


@pytest.mark.parametrize("case_id", BAD_INPUT)
def test_recovers_from_bad_input(suite: SuiteTester, case_id: str) -> None:
    suite.assert_passes(case_id, rubric="error_recovery")


@pytest.mark.parametrize("case_id", KNOWN_MISTAKES)
@pytest.mark.xfail(reason="a deliberate parser mistake of the example agent", strict=True)
def test_known_mistakes(suite: SuiteTester, case_id: str) -> None:
    suite.assert_passes(case_id)


def test_a_case_written_in_the_test(suite: SuiteTester) -> None:
    suite.assert_passes(
        {
            "id": "standup",
            "input": {"message": "Book 15 minutes with Bob on 2025-03-07 at 09:30"},
            "ground_truth": {
                "expect_booking": True,
                "expect_conflict": False,
                "expect_error": False,
                "participants": ["Bob"],
                "date": "2025-03-07",
                "time": "09:30",
                "duration": 15,
            },
        }
    )
