"""Every mistake in a suite file is one SuiteError line: FILE:LINE: FIELD: what was expected."""

from __future__ import annotations

from pathlib import Path

import pytest

from checkweigh.errors import SuiteError
from checkweigh.suites import load_suite

BASE = """\
name: scheduling
cases: cases.jsonl
checks:
  correct_time:
    type: equals
    path: final_state.booking.time
    expected_path: ground_truth.time
  checked_first:
    type: before
    first: check_availability
    then: book_meeting
rubrics:
  completion:
    weights:
      correct_time: 0.6
      checked_first: 0.4
gates:
  - {metric: tcr, rubric: completion, min: 0.7}
"""


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def _load_error(folder: Path, text: str) -> tuple[Path, SuiteError]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cases.jsonl").write_text('{"id": "c1"}\n', encoding="utf-8")
    path = folder / "suite.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    message = str(info.value)
    assert "\n" not in message
    return path, info.value


def test_the_base_suite_is_valid(tmp_path: Path) -> None:
    (tmp_path / "cases.jsonl").write_text('{"id": "c1"}\n', encoding="utf-8")
    (tmp_path / "suite.yaml").write_text(BASE, encoding="utf-8")
    assert [r.name for r in load_suite(tmp_path / "suite.yaml").rubrics] == ["completion"]


# (text replaced, its replacement, a needle on the offending line, the expected message
#  after 'FILE:LINE: ' -- in full, or its start when it ends with '...')
MISTAKES = [
    (
        "    path: final_state.booking.time\n",
        "    path: final_state.booking.time: 10\n",
        "final_state.booking.time: 10",
        "invalid YAML: mapping values are not allowed here",
    ),
    (
        "    expected_path: ground_truth.time\n",
        "    expected_path: ground_truth.time\n    path: output\n",
        "path: output",
        "invalid YAML: duplicate key 'path'",
    ),
    (
        "gates:",
        "gate:",
        "gate:",
        "gate: unknown key 'gate'; did you mean 'gates'?",
    ),
    (
        "name: scheduling\n",
        "name: scheduling\ndescripton: bookings\n",
        "descripton",
        "descripton: unknown key 'descripton'; did you mean 'description'?",
    ),
    (
        "correct_time: 0.6",
        "correct_time: high",
        "correct_time: high",
        "rubrics.completion.weights.correct_time: expected a number >= 0 "
        "(or {weight, required, not_applicable}), got 'high'",
    ),
    (
        "checked_first: 0.4",
        "checked_first: -0.4",
        "checked_first: -0.4",
        "rubrics.completion.weights.checked_first.weight: "
        "input should be greater than or equal to 0, got -0.4",
    ),
    (
        "checked_first: 0.4",
        "checked_first: {weight: -0.4, required: true}",
        "checked_first: {weight",
        "rubrics.completion.weights.checked_first.weight: "
        "input should be greater than or equal to 0, got -0.4",
    ),
    (
        "checked_first: 0.4",
        "checked_first: .nan",
        "checked_first: .nan",
        "rubrics.completion.weights.checked_first.weight: expected a finite number, got nan",
    ),
    (
        "checked_first: 0.4",
        "checked_first: {weight: 0.4, not_applicable: skip}",
        "not_applicable: skip",
        "rubrics.completion.weights.checked_first.not_applicable: "
        "expected 'pass' or 'exclude', got 'skip'",
    ),
    (
        "correct_time: 0.6\n      checked_first: 0.4",
        "correct_time: 0\n      checked_first: 0",
        "    weights:",
        "rubrics.completion.weights: rubric 'completion': weights sum to 0; "
        "give at least one weight > 0",
    ),
    (
        "      checked_first: 0.4",
        "      check_first: 0.4",
        "check_first: 0.4",
        "rubrics.completion.weights.check_first: unknown check 'check_first'; "
        "the suite defines: correct_time, checked_first",
    ),
    (
        "type: before",
        "type: befor",
        "type: befor",
        "checks.checked_first.type: unknown check type 'befor'; "
        "expected one of 'equals', 'one_of', ...",
    ),
    (
        "cases: cases.jsonl",
        "cases: data/cases.jsonl",
        "cases: data/cases.jsonl",
        "cases: cases file not found: ...",
    ),
    (
        "    then: book_meeting\n",
        "    then: book_meeting\n"
        "    when: {path: metadata.scenario, equals: conflict, truthy: true}\n",
        "    when:",
        "checks.checked_first.when: give exactly one of equals, not_equals, in, exists, "
        "truthy, falsy",
    ),
    (
        "    weights:\n",
        "    when: {path: metadata..scenario, equals: conflict}\n    weights:\n",
        "    when:",
        "rubrics.completion.when.path: malformed field path 'metadata..scenario' at position 9: "
        "expected a name",
    ),
    (
        "    weights:\n",
        "    outcomes: {success_min: 1.5}\n    weights:\n",
        "    outcomes:",
        "rubrics.completion.outcomes.success_min: input should be less than or equal to 1, got 1.5",
    ),
    (
        "    weights:\n",
        "    outcome_rules:\n      - {outcome: great, min_score: 0.9}\n    weights:\n",
        "outcome: great",
        "rubrics.completion.outcome_rules[0].outcome: expected 'successful_completion', "
        "'graceful_failure', 'partial_failure' or 'hard_failure', got 'great'",
    ),
    (
        "rubric: completion, min",
        "rubric: complete, min",
        "rubric: complete",
        "gates[0].rubric: unknown rubric 'complete'; the suite defines: completion",
    ),
    (
        "  - {metric: tcr, rubric: completion, min: 0.7}",
        "  - {metric: check_pass_rate, rubric: completion, check: polite, min: 0.7}",
        "check: polite",
        "gates[0].check: rubric 'completion' has no check 'polite'; "
        "it has: correct_time, checked_first",
    ),
    (
        "  - {metric: tcr, rubric: completion, min: 0.7}",
        "  - {metric: tcr, rubric: completion}",
        "metric: tcr",
        "gates[0]: give 'min', 'max' or both",
    ),
    (
        "min: 0.7}",
        "min: lots}",
        "min: lots",
        "gates[0].min: expected a number, got 'lots'",
    ),
    (
        "checks:\n",
        "checks:\n  polite:\n    type: python\n    function: no_such_checks_mod:polite\n",
        "function: no_such",
        "checks.polite.function: cannot import module 'no_such_checks_mod': "
        "No module named 'no_such_checks_mod'",
    ),
]

IDS = [
    "yaml-syntax",
    "duplicate-key",
    "unknown-top-level-key",
    "unknown-optional-key",
    "non-numeric-weight",
    "negative-weight",
    "negative-weight-in-mapping",
    "nan-weight",
    "bad-na-policy",
    "all-zero-weights",
    "unknown-check-in-rubric",
    "unknown-check-type",
    "missing-cases-file",
    "condition-with-two-ops",
    "bad-path-in-rubric-when",
    "outcome-setting-out-of-range",
    "unknown-outcome-class",
    "gate-on-unknown-rubric",
    "gate-on-unknown-check",
    "gate-without-bounds",
    "gate-bound-not-a-number",
    "python-check-missing-module",
]


@pytest.mark.parametrize(("old", "new", "needle", "expected"), MISTAKES, ids=IDS)
def test_mistakes_give_one_line_with_file_line_and_field(
    tmp_path: Path, old: str, new: str, needle: str, expected: str
) -> None:
    assert old in BASE
    text = BASE.replace(old, new, 1)
    path, error = _load_error(tmp_path, text)
    line = _line_of(text, needle)
    prefix = f"{path}:{line}: "
    message = str(error)
    if expected.endswith("..."):
        assert message.startswith(prefix + expected[:-3]), message
    else:
        assert message == prefix + expected
    assert (error.file, error.line) == (str(path), line)


def test_unknown_key_inside_a_check_points_at_the_key(tmp_path: Path) -> None:
    text = BASE.replace("    expected_path: ground_truth.time", "    expected: ground_truth.time")
    path, error = _load_error(tmp_path, text)
    line = _line_of(text, "expected: ground_truth.time")
    assert str(error) == (
        f"{path}:{line}: checks.correct_time.expected: "
        "unknown key 'expected'; did you mean 'expected_path'?"
    )


def test_bad_field_path_in_a_check_points_at_the_path(tmp_path: Path) -> None:
    text = BASE.replace("path: final_state.booking.time", "path: final_state.booking..time")
    path, error = _load_error(tmp_path, text)
    line = _line_of(text, "booking..time")
    assert str(error) == (
        f"{path}:{line}: checks.correct_time.path: malformed field path "
        "'final_state.booking..time' at position 20: expected a name"
    )


def test_missing_field_of_a_check_names_the_field(tmp_path: Path) -> None:
    text = BASE.replace("    then: book_meeting\n", "")
    path, error = _load_error(tmp_path, text)
    line = _line_of(text, "  checked_first:")
    assert str(error) == f"{path}:{line}: checks.checked_first.then: required field is missing"


def test_misspelled_required_key_suggests_the_right_one(tmp_path: Path) -> None:
    # 'rubric:' for 'rubrics:' is the likely typo: point at it, not at line 1
    text = BASE.replace("rubrics:", "rubric:")
    path, error = _load_error(tmp_path, text)
    line = _line_of(text, "rubric:")
    assert str(error) == f"{path}:{line}: rubric: unknown key 'rubric'; did you mean 'rubrics'?"


def test_missing_suite_file(tmp_path: Path) -> None:
    path = tmp_path / "suites" / "nightly.yaml"
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    assert str(info.value) == f"{path}: suite file not found"
    assert info.value.line is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "expected a mapping with name, cases, checks and rubrics"),
        ("- name: scheduling\n", "expected a mapping with name, cases, checks and rubrics"),
    ],
    ids=["empty", "list"],
)
def test_not_a_mapping(tmp_path: Path, text: str, expected: str) -> None:
    path, error = _load_error(tmp_path, text)
    assert str(error).startswith(f"{path}")
    assert str(error).endswith(expected)


def test_python_check_module_that_fails_to_import(tmp_path: Path, fresh_modules: None) -> None:
    (tmp_path / "broken_sched_checks.py").write_text(
        "def polite(case:\n    return True\n", encoding="utf-8"
    )
    text = BASE.replace(
        "checks:\n",
        "checks:\n  polite:\n    type: python\n    function: broken_sched_checks:polite\n",
    )
    path, error = _load_error(tmp_path, text)
    line = _line_of(text, "function: broken")
    assert str(error).startswith(f"{path}:{line}: checks.polite.function: ")
    assert "broken_sched_checks" in str(error)


def test_python_check_with_bad_args(tmp_path: Path, fresh_modules: None) -> None:
    (tmp_path / "args_sched_checks.py").write_text(
        "from checkweigh.checks import check\n\n"
        "@check\ndef polite(case, threshold=0.5):\n    return True\n",
        encoding="utf-8",
    )
    text = BASE.replace(
        "checks:\n",
        "checks:\n  polite:\n    type: python\n    function: args_sched_checks:polite\n"
        "    args: {treshold: 0.9}\n",
    )
    path, error = _load_error(tmp_path, text)
    line = _line_of(text, "function: args_sched")
    assert str(error).startswith(
        f"{path}:{line}: checks.polite.function: args_sched_checks:polite does not accept args "
        "{'treshold': 0.9}"
    )


def test_target_agent_without_a_module(tmp_path: Path) -> None:
    text = BASE + "target:\n  agent: scheduling_agent\n"
    path, error = _load_error(tmp_path, text)
    line = _line_of(text, "agent: scheduling_agent")
    assert str(error).startswith(f"{path}:{line}: target.agent: ")


def test_values_path_is_expected_path_by_the_name_contains_uses(tmp_path: Path) -> None:
    text = BASE.replace("expected_path: ground_truth.time", "values_path: ground_truth.time")
    path = tmp_path / "suite.yaml"
    path.write_text(text)
    (tmp_path / "cases.jsonl").write_text("")
    check = load_suite(path).checks["correct_time"]
    assert check.check.expected_path == "ground_truth.time"

    both = BASE.replace(
        "    expected_path: ground_truth.time",
        "    expected_path: ground_truth.time\n    values_path: ground_truth.time",
    )
    path, error = _load_error(tmp_path, both)
    assert str(error) == (
        f"{path}:{_line_of(both, '  correct_time:')}: checks.correct_time: "
        "give 'expected_path' or 'values_path', not both"
    )

    bad = BASE.replace("expected_path: ground_truth.time", "values_path: ground_truth..time")
    path, error = _load_error(tmp_path, bad)
    assert str(error).startswith(
        f"{path}:{_line_of(bad, 'ground_truth..time')}: checks.correct_time.values_path: "
        "malformed field path"
    ), error
