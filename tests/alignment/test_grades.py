"""Human grades in a labels file: read from CSV and JSONL as numbers from 0 to 5, every mistake
one line naming the file, the line and the field; and checked against the run's checks (a grade
belongs to a graded metric, and must agree with its own label at the metric's threshold)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from checkweigh.alignment import (
    LabelFileError,
    check_grades,
    check_roles,
    load_label_file,
    load_labels,
)
from checkweigh.core import CheckKind, CheckRole, HumanLabel


def _csv(tmp_path: Path, *rows: str) -> Path:
    path = tmp_path / "l.csv"
    path.write_text("case,check,label,grade\n" + "".join(r + "\n" for r in rows))
    return path


def _jsonl(tmp_path: Path, *rows: dict[str, Any]) -> Path:
    path = tmp_path / "l.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_grades_read_from_csv_and_jsonl(tmp_path: Path) -> None:
    expected = [
        HumanLabel("a", "q.response_delivery", True, grade=4.0),
        HumanLabel("b", "q.response_delivery", False, grade=0.0),
        HumanLabel("c", "q.response_delivery", True, grade=3.5),
        HumanLabel("d", "q.response_delivery", True, grade=5.0),
        HumanLabel("e", "tone", False),
    ]
    csv_path = _csv(
        tmp_path,
        "a,q.response_delivery,yes,4",
        "b,q.response_delivery,no, 0 ",
        "c,q.response_delivery,yes,3.5",
        "d,q.response_delivery,yes,5.0",
        "e,tone,no,",
    )
    assert load_labels(csv_path) == expected
    jsonl_path = _jsonl(
        tmp_path,
        {"case": "a", "check": "q.response_delivery", "label": "yes", "grade": 4},
        {"case": "b", "check": "q.response_delivery", "label": False, "grade": 0},
        {"case": "c", "check": "q.response_delivery", "label": "yes", "grade": 3.5},
        {"case": "d", "check": "q.response_delivery", "label": "yes", "grade": "5"},
        {"case": "e", "check": "tone", "label": "no", "grade": None},
    )
    assert load_labels(jsonl_path) == expected


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            "a,q.m,yes,6",
            "l.csv:2: grade: expected a grade from 0 to 5 (a number) or nothing, got '6'",
        ),
        ("a,q.m,no,-1", "l.csv:2: grade: expected a grade from 0 to 5 (a number) or nothing"),
        ("a,q.m,yes,good", "l.csv:2: grade: expected a grade from 0 to 5 (a number) or nothing"),
        ("a,q.m,yes,nan", "l.csv:2: grade: expected a grade from 0 to 5"),
        ("a,q.m,yes,inf", "l.csv:2: grade: expected a grade from 0 to 5"),
        (
            "a,q.m,,4",
            "l.csv:2: label: expected yes/no, true/false, 1/0 or pass/fail beside the grade "
            "(it is not derived from it), got ''",
        ),
    ],
)
def test_csv_grade_mistakes(tmp_path: Path, row: str, message: str) -> None:
    with pytest.raises(LabelFileError) as info:
        load_labels(_csv(tmp_path, row))
    line = info.value.one_line()
    assert line.removeprefix(str(tmp_path) + "/").startswith(message), line
    assert "\n" not in line


@pytest.mark.parametrize(
    ("grade", "message"),
    [
        (True, "l.jsonl:1: grade: expected a grade from 0 to 5 (a number) or nothing, got True"),
        ([4], "l.jsonl:1: grade: expected a grade from 0 to 5 (a number) or nothing, got [4]"),
        (5.5, "l.jsonl:1: grade: expected a grade from 0 to 5 (a number) or nothing, got 5.5"),
    ],
)
def test_jsonl_grade_mistakes(tmp_path: Path, grade: object, message: str) -> None:
    path = _jsonl(tmp_path, {"case": "a", "check": "q.m", "label": "yes", "grade": grade})
    with pytest.raises(LabelFileError) as info:
        load_labels(path)
    assert info.value.one_line().removeprefix(str(tmp_path) + "/") == message


def test_the_same_label_with_two_grades_is_refused(tmp_path: Path) -> None:
    path = _csv(tmp_path, "a,q.m,yes,4", "a,q.m,yes,4", "a,q.m,yes,5")
    with pytest.raises(LabelFileError) as info:
        load_labels(path)
    assert info.value.one_line().removeprefix(str(tmp_path) + "/") == (
        "l.csv:4: label: case 'a', check 'q.m' is labelled yes (grade 4) on line 2 and yes "
        "(grade 5) here; expected one label"
    )


CONFIG = {
    "checks": {
        "quality": {"version": "graded-scale/1", "spec": {"type": "graded", "pass_threshold": 70}},
        "plain": {"version": "graded-scale/1", "spec": {"type": "graded"}},
        "tone": {"version": "judge-binary/1", "spec": {"type": "judge", "question": "Polite?"}},
        "booked": {"version": "1", "spec": {"type": "equals", "path": "a", "expected": 1}},
        "mine": {"version": "1", "spec": {"type": "my_plugin_check"}},
    }
}


def test_roles_from_a_run_configuration() -> None:
    names = ["quality", "quality.tool_routing", "plain.response_delivery", "tone", "booked"]
    roles = check_roles(CONFIG, [*names, "nowhere.x", "mine"])
    assert roles == {
        "quality": CheckRole(CheckKind.GRADED),
        "quality.tool_routing": CheckRole(CheckKind.GRADED, 70.0),
        "plain": CheckRole(CheckKind.GRADED),
        "plain.response_delivery": CheckRole(CheckKind.GRADED, 75.0),  # the default threshold
        "tone": CheckRole(CheckKind.BINARY),
        "booked": CheckRole(CheckKind.OTHER),
        "mine": CheckRole(CheckKind.OTHER),  # not a judge this checkweigh knows
    }
    assert roles["quality.tool_routing"].grade_threshold == 3.5
    assert check_roles({}, names) == {}


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            "a,quality.tool_routing,no,3.5",
            "l.csv:3: label: grade 3.5 reaches the pass threshold of quality.tool_routing "
            "(70/100, grade 3.5), so the label should be yes, got no; expected a label and grade "
            "that agree",
        ),
        (
            "a,quality.tool_routing,yes,3",
            "l.csv:3: label: grade 3 is below the pass threshold of quality.tool_routing "
            "(70/100, grade 3.5), so the label should be no, got yes",
        ),
        (
            "a,tone,yes,4",
            "l.csv:3: grade: a grade is for a graded metric (CHECK.METRIC of a graded check), "
            "and 'tone' is a binary check in this run; expected no grade",
        ),
        (
            "a,quality,yes,4",
            "l.csv:3: grade: a grade is for a graded metric (CHECK.METRIC of a graded check), "
            "and 'quality' is a graded check in this run; expected no grade",
        ),
    ],
)
def test_grades_the_run_cannot_compare_are_refused(tmp_path: Path, row: str, message: str) -> None:
    path = _csv(tmp_path, "b,quality.tool_routing,yes,4", row)
    lines = load_label_file(path)
    roles = check_roles(CONFIG, [line.label.check for line in lines])
    with pytest.raises(LabelFileError) as info:
        check_grades(lines, roles, path)
    line = info.value.one_line().removeprefix(str(tmp_path) + "/")
    assert line.startswith(message), line


def test_grades_that_agree_with_their_labels_pass(tmp_path: Path) -> None:
    path = _csv(
        tmp_path,
        "a,quality.tool_routing,yes,3.5",  # exactly at the threshold passes, as for the judge
        "b,quality.tool_routing,no,3.4",
        "c,elsewhere.metric,yes,1",  # not in the run: reported as not compared
        "d,tone,yes,",
    )
    lines = load_label_file(path)
    check_grades(lines, check_roles(CONFIG, [line.label.check for line in lines]), path)
