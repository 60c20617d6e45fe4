"""Single cases evaluated in tests without the fixture: the report a failure shows, rubrics,
recorded cases, inline cases, agent runs, agents that raise, async checks and judges."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from checkweigh.core import CaseState, OutcomeClass, VerdictState
from checkweigh.errors import CheckweighError, InputError
from checkweigh.judges import ScriptedJudge
from checkweigh.store import RunStatus
from checkweigh.suites import load_suite
from checkweigh.testing import NO_JUDGE_HINT, SuiteCache, SuiteTester, assert_case_passes

LATE_REPORT = f"""\
checkweigh: case 'late' failed, score 50.0 (pass threshold 75)
reason: required check failed: correct_time: final_state.booking.time is '11:00', expected '10:00'
rubrics:
  completion: score 0.00, partial failure
  reply: score 1.00, successful completion
failed checks:
  - correct_time: final_state.booking.time is '11:00', expected '10:00'
  - correct_people: final_state.booking.people: unexpected [], missing ['Bob']
  - checked_calendar: check_availability never happened
judge checks skipped: polite ({NO_JUDGE_HINT})"""


def test_a_failing_case_raises_with_the_whole_report(booking: Path) -> None:
    with pytest.raises(AssertionError) as info:
        assert_case_passes(booking, "late")
    assert str(info.value) == LATE_REPORT


def test_a_passing_case_returns_its_result(booking: Path) -> None:
    result = assert_case_passes(booking, "on-time")
    assert result.case_id == "on-time"
    assert result.results["completion"].outcome is OutcomeClass.SUCCESSFUL_COMPLETION
    # without a judge the judge check is skipped and the rubric renormalized over the rest
    assert result.verdicts["polite"].state is VerdictState.NOT_APPLICABLE
    assert result.results["reply"].score == 1.0


def test_one_rubric_decides_alone(booking: Path) -> None:
    tester = SuiteTester(load_suite(booking))
    result = tester.evaluate("late", rubric="reply")
    assert set(result.results) == {"reply"}
    assert "correct_time" not in result.verdicts  # only the rubric's checks run
    assert tester.verdict(result, rubric="reply").passed
    with pytest.raises(AssertionError) as info:
        tester.assert_passes("late", rubric="completion")
    assert str(info.value).splitlines()[:4] == [
        "checkweigh: case 'late' failed, score 0.0 (pass threshold 75)",
        "reason: required check failed: correct_time: final_state.booking.time is '11:00', "
        "expected '10:00'",
        "rubrics:",
        "  completion: score 0.00, partial failure",
    ]


def test_an_errored_check_is_reported_as_errored_never_as_failed(booking: Path) -> None:
    tester = SuiteTester(load_suite(booking))
    result = tester.evaluate("no-reply")
    assert tester.verdict(result).state is CaseState.ERRORED
    assert tester.report(result) == (
        "checkweigh: case 'no-reply' errored, score 100.0 (pass threshold 75)\n"
        "reason: errored: short_reply: KeyError: 'reply'\n"
        "rubrics:\n"
        "  completion: score 1.00, successful completion\n"
        "  reply: not scored (short_reply errored)\n"
        "errored checks (they could not decide; never counted as failed):\n"
        "  - short_reply: KeyError: 'reply'\n"
        f"judge checks skipped: polite ({NO_JUDGE_HINT})"
    )


def test_mistakes_in_the_test_are_one_line_errors(booking: Path) -> None:
    tester = SuiteTester(load_suite(booking))
    with pytest.raises(InputError) as info:
        tester.assert_passes("on-time", rubric="speed")
    assert str(info.value) == (
        f"{booking}: rubric: unknown rubric 'speed'; the suite's rubrics are completion, reply"
    )
    with pytest.raises(InputError) as info:
        tester.evaluate("on-tme")
    assert str(info.value) == f"{booking.parent / 'cases.yaml'}: id: no case with id 'on-tme'"
    with pytest.raises(InputError) as info:
        tester.evaluate({"id": "x", "trace": [{"kind": "robot"}]})
    assert str(info.value).startswith("case.trace[0].kind: ")
    with pytest.raises(InputError) as info:
        tester.evaluate("on-time", run={"trace": [], "final_state": "done"})
    assert str(info.value) == "run.final_state: expected a mapping, got 'done'"
    with pytest.raises(InputError, match="expected PROVIDER:MODEL"):
        SuiteTester(load_suite(booking), judge="gpt-4o")


def test_a_case_in_the_cases_file_format_and_a_run_from_the_test(booking: Path) -> None:
    tester = SuiteTester(load_suite(booking))
    case = {
        "id": "inline",
        "input": "Book Carol at 09:00",
        "ground_truth": {"time": "09:00", "people": ["Carol"]},
    }
    run = {
        "trace": [{"kind": "tool_call", "name": "check_availability"}],
        "final_state": {"booking": {"time": "09:00", "people": ["Carol"]}, "reply": "Done."},
    }
    result = tester.assert_passes(case, rubric="completion", run=run)
    assert result.case_id == "inline"
    missing = "- correct_time: final_state.booking.time is missing"
    with pytest.raises(AssertionError, match=re.escape(missing)):
        tester.assert_passes(case, rubric="completion")  # recorded: nothing was booked


def test_the_suites_agent_runs_on_the_case_and_its_failure_is_an_error(booking: Path) -> None:
    tester = SuiteTester(load_suite(booking.parent / "agent_suite.yaml"))
    assert tester.assert_passes("ten").verdicts["checked_calendar"].passed
    with pytest.raises(AssertionError) as info:
        tester.assert_passes("outage")
    assert str(info.value) == (
        "checkweigh: case 'outage' errored, no score (pass threshold 75)\n"
        "reason: agent error: agent raised RuntimeError: calendar service down"
    )
    # scored as a run scores it (the engine's one per-case path): the failed case keeps the
    # input the agent was given
    failed = tester.evaluate("outage")
    assert failed.agent_error == "agent raised RuntimeError: calendar service down"
    assert failed.case is not None
    assert failed.case.id == "outage"
    # a run given by the test replaces the agent
    run = {"trace": [], "final_state": {"booking": {"time": "10:00"}, "success": True}}
    result = tester.evaluate("outage", run=run)
    assert result.agent_error is None
    assert result.verdicts["checked_calendar"].state is VerdictState.FAILED


def test_each_evaluation_is_a_run_of_the_engine_in_the_testers_store(booking: Path) -> None:
    tester = SuiteTester(load_suite(booking.parent / "agent_suite.yaml"))
    ten = tester.evaluate("ten", rubric="completion")
    outage = tester.evaluate("outage")
    store = tester.store
    runs = store.list_runs()  # one store for the tester, one run per evaluated case
    assert len(runs) == 2
    assert all(r.status is RunStatus.COMPLETE and r.executions == r.repeat == 1 for r in runs)
    stored = {
        result.case_id: (run, result) for run in runs for result in store.iter_results(run.id)
    }
    assert stored.keys() == {"ten", "outage"}
    # each run holds the case's result as the tester returned it
    ten_stored = stored["ten"][1]
    assert ten_stored.results["completion"].score == ten.results["completion"].score == 1.0
    assert ten_stored.verdicts.keys() == ten.verdicts.keys()
    outage_stored = stored["outage"][1]
    assert outage_stored.agent_error == outage.agent_error
    assert outage.agent_error == "agent raised RuntimeError: calendar service down"
    # a named rubric: the run scores that rubric of the suite's two alone
    two = SuiteTester(load_suite(booking))
    assert two.evaluate("late", rubric="reply").results.keys() == {"reply"}
    (run,) = two.store.list_runs()
    assert [r["name"] for r in run.config["rubrics"]] == ["reply"]


def test_async_checks_and_async_tests(booking: Path) -> None:
    tester = SuiteTester(load_suite(booking))

    async def inside_a_loop() -> None:
        result = await tester.aassert_passes("on-time", rubric="reply")
        assert result.verdicts["short_reply"].reason == "6 words"
        with pytest.raises(CheckweighError, match=r"await aevaluate\(\) instead"):
            tester.evaluate("on-time", rubric="reply")

    asyncio.run(inside_a_loop())
    # the sync path (sync checks only) needs no loop at all; async checks get one
    assert tester.evaluate("on-time", rubric="completion").results["completion"].score == 1.0
    assert tester.evaluate("on-time", rubric="reply").verdicts["short_reply"].passed


def test_an_explicit_judge_answers_the_judge_checks(booking: Path) -> None:
    judge = ScriptedJudge(
        [
            '{"verdict": "yes", "reason": "thanks the user"}',
            '{"verdict": "no", "reason": "the reply is curt"}',
        ]
    )
    tester = SuiteTester(load_suite(booking), judge=judge)
    assert tester.assert_passes("on-time", rubric="reply").verdicts["polite"].passed
    with pytest.raises(AssertionError) as info:
        tester.assert_passes("on-time", rubric="reply")
    report = str(info.value)
    assert "  - polite: the reply is curt" in report.splitlines()
    assert "judge checks skipped" not in report
    assert len(judge.requests) == 2
    # rubrics without judge checks never ask it
    tester.assert_passes("on-time", rubric="completion")
    assert len(judge.requests) == 2


def test_the_session_cache_parses_each_file_once_and_again_when_it_changes(booking: Path) -> None:
    cache = SuiteCache()
    suite = cache.suite(booking)
    assert cache.suite(booking) is suite
    assert cache.cases(suite.cases_path) is cache.cases(suite.cases_path)
    booking.write_text(booking.read_text().replace("name: booking", "name: booking-v2"))
    assert cache.suite(booking).name == "booking-v2"


def test_under_all_checks_the_report_names_the_rule_not_a_threshold(booking: Path) -> None:
    suite = booking.read_text() + "thresholds:\n  pass_policy: all_checks\n"
    booking.write_text(suite)
    tester = SuiteTester(load_suite(booking))
    # on-time passes every check it ran (the judge check is skipped: not applicable)
    assert tester.verdict(tester.evaluate("on-time")).reason == (
        "every applicable check passed (4 passed, 1 not applicable)"
    )
    with pytest.raises(AssertionError) as info:
        tester.assert_passes("late", rubric="completion")
    assert str(info.value).splitlines()[:5] == [
        "checkweigh: case 'late' failed, score 0.0 (case pass: every applicable check passes "
        "(rubric completion))",
        "reason: 3 checks failed: correct_time: final_state.booking.time is '11:00', expected "
        "'10:00'; correct_people: final_state.booking.people: unexpected [], missing ['Bob']; "
        "checked_calendar: check_availability never happened",
        "rubrics:",
        "  completion: score 0.00, partial failure",
        "failed checks:",
    ]
