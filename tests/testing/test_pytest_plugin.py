"""The pytest plugin, run through pytester: registered by its entry point without importing
checkweigh, passing and failing evaluations, errored checks, mistakes in the test, judges
(skipped, explicit, and from --checkweigh-judge against a local server), and the example."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from checkweigh.testing import NO_JUDGE_HINT, Reply, fake_llm_server

pytest_plugins = ["pytester"]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scheduling"

TESTS = """
from checkweigh.judges import ScriptedJudge


def test_on_time(checkweigh):
    result = checkweigh.suite("suite.yaml").assert_passes("on-time")
    assert result.results["completion"].score == 1.0


def test_late(checkweigh):
    checkweigh.suite("suite.yaml").assert_passes("late", rubric="completion")


def test_no_reply(checkweigh):
    checkweigh.suite("suite.yaml").assert_passes("no-reply", rubric="reply")


def test_unknown_rubric(checkweigh):
    checkweigh.suite("suite.yaml").assert_passes("on-time", rubric="speed")


def test_scripted_judge(checkweigh):
    judge = ScriptedJudge(['{"verdict": "no", "reason": "the reply is curt"}'])
    checkweigh.suite("suite.yaml", judge=judge).assert_passes("on-time", rubric="reply")
"""


@pytest.fixture
def booking_tests(pytester: pytest.Pytester, write_suite: Callable[[Path], Path]) -> None:
    write_suite(pytester.path / "evals")
    (pytester.path / "evals" / "test_booking.py").write_text(TESTS, encoding="utf-8")


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    # in process; hypothesis's plugin would re-import hypothesis for every inner run
    options = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-W", "error")
    return pytester.runpytest(*options, *args)


def test_the_plugin_is_registered_by_its_entry_point_and_imports_nothing(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        import sys

        def test_loaded_lazily(pytestconfig):
            plugin = pytestconfig.pluginmanager.get_plugin("checkweigh")
            assert plugin.__name__ == "_checkweigh_pytest"
            assert "checkweigh" not in sys.modules
        """
    )
    # a process of its own: this one has imported checkweigh already
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--trace-config")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*registered*_checkweigh_pytest*"])


def test_a_passing_evaluation_passes(pytester: pytest.Pytester, booking_tests: None) -> None:
    result = run(pytester, "evals/test_booking.py::test_on_time")
    result.assert_outcomes(passed=1)


def test_a_failing_evaluation_fails_with_the_list_of_failed_checks(
    pytester: pytest.Pytester, booking_tests: None
) -> None:
    result = run(pytester, "evals/test_booking.py::test_late")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*_ test_late _*",
            "checkweigh: case 'late' failed, score 0.0 (pass threshold 75)",
            "reason: required check failed: correct_time: final_state.booking.time is '11:00', "
            "expected '10:00'",
            "rubrics:",
            "  completion: score 0.00, partial failure",
            "failed checks:",
            "  - correct_time: final_state.booking.time is '11:00', expected '10:00'",
            "  - correct_people: final_state.booking.people: unexpected [], missing ['Bob']",
            "  - checked_calendar: check_availability never happened",
            "*short test summary*",
        ],
        consecutive=True,
    )
    # pytest.fail(pytrace=False): no traceback, no source of the plugin or the test
    result.stdout.no_fnmatch_line("*assert_passes*")
    result.stdout.no_fnmatch_line("*Traceback*")


def test_an_errored_check_is_reported_as_errored_not_failed(
    pytester: pytest.Pytester, booking_tests: None
) -> None:
    result = run(pytester, "evals/test_booking.py::test_no_reply")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "checkweigh: case 'no-reply' errored, no score (pass threshold 75)",
            "reason: errored: short_reply: KeyError: 'reply'",
            "rubrics:",
            "  reply: not scored (short_reply errored)",
            "errored checks (they could not decide; never counted as failed):",
            "  - short_reply: KeyError: 'reply'",
            f"judge checks skipped: polite ({NO_JUDGE_HINT})",
        ],
        consecutive=True,
    )
    result.stdout.no_fnmatch_line("failed checks:")


def test_an_unknown_rubric_is_a_clear_error(pytester: pytest.Pytester, booking_tests: None) -> None:
    result = run(pytester, "evals/test_booking.py::test_unknown_rubric")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E *checkweigh.errors.InputError: */evals/suite.yaml: rubric: unknown rubric 'speed';"
            " the suite's rubrics are completion, reply"
        ]
    )


def test_an_explicit_judge_answers_the_judge_checks(
    pytester: pytest.Pytester, booking_tests: None
) -> None:
    result = run(pytester, "evals/test_booking.py::test_scripted_judge")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["failed checks:", "  - polite: the reply is curt"])
    result.stdout.no_fnmatch_line("judge checks skipped*")


def test_the_judge_option_builds_a_judge_from_the_environment(
    pytester: pytest.Pytester, booking_tests: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = [
        Reply('{"verdict": "yes", "reason": "thanks the user"}'),
        Reply('{"verdict": "no", "reason": "the reply is curt"}'),
    ]
    pytester.makepyfile(
        test_judged="""
        def test_polite(checkweigh):
            suite = checkweigh.suite("evals/suite.yaml")
            assert suite.assert_passes("on-time", rubric="reply").verdicts["polite"].passed
            # answered from the cache: no second call
            assert suite.assert_passes("on-time", rubric="reply").verdicts["polite"].passed
            suite.assert_passes("late", rubric="reply")
        """
    )
    monkeypatch.setenv("CHECKWEIGH_CACHE_DIR", str(pytester.path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with fake_llm_server(answers) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        result = run(pytester, "test_judged.py", "--checkweigh-judge", "openai:gpt-test")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["checkweigh judge: openai:gpt-test"])
    result.stdout.fnmatch_lines(
        ["checkweigh: case 'late' failed*", "failed checks:", "  - polite: the reply is curt"]
    )
    assert [body["model"] for body in server.requests] == ["gpt-test", "gpt-test"]


def test_a_malformed_judge_option_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_nothing(): pass")
    result = run(pytester, "--checkweigh-judge", "gpt-4o")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--checkweigh-judge: expected PROVIDER:MODEL with PROVIDER one of *, got 'gpt-4o'"]
    )


def test_the_scheduling_example_runs_as_pytest_tests(pytester: pytest.Pytester) -> None:
    result = run(pytester, str(EXAMPLE / "test_scheduling_eval.py"))
    result.assert_outcomes(passed=9, xfailed=2)
