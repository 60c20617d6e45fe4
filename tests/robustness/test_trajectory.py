"""Mistakes in trajectory checks, through ``checkweigh run``: a suite's bad option is one line
with exit 2 and nothing stored; a case's bad reference or arguments is that case's failed verdict
with the reason, and the run goes on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from checkweigh.cli import app

SUITE = """\
name: airline
cases: cases.jsonl
checks:
  writes:
    type: trajectory_match
    reference_path: ground_truth.actions
    mode: unordered
    select: {name: ["update_*", cancel_reservation], error: false}
  updated:
    type: tool_called
    step: {name: update_reservation_flights, arguments_path: ground_truth.expected_args}
rubrics:
  reward:
    weights: {writes: 0.5, updated: 0.5}
thresholds: {pass_threshold: 50, metrics_pass_threshold: 0, cases_pass_threshold: 0}
"""

UPDATE = {"reservation_id": "ZFA04Y", "cabin": "economy"}


def _case(case_id: str, arguments: Any, actions: Any, expected_args: Any) -> dict[str, Any]:
    return {
        "id": case_id,
        "trace": [
            {"kind": "user", "content": "Please move me to economy on ZFA04Y"},
            {"kind": "tool_call", "name": "update_reservation_flights", "arguments": arguments},
            {"kind": "assistant", "content": "Done: ZFA04Y is now economy."},
        ],
        "ground_truth": {"actions": actions, "expected_args": expected_args},
    }


GOOD = _case("good", UPDATE, [{"name": "update_reservation_flights", "kwargs": UPDATE}], UPDATE)

# (id, edit of the suite, the one-line message's field and fragment)
BAD_SUITES = [
    (
        "override-compare-and-ignore",
        ("mode: unordered", "mode: unordered\n    overrides: {x: {compare: [a], ignore: [b]}}"),
        "checks.writes.overrides.x: give 'compare' or 'ignore', not both",
    ),
    (
        "override-bad-path",
        ("mode: unordered", "mode: unordered\n    overrides: {x: ['flights[first].date']}"),
        "malformed argument path 'flights[first].date'",
    ),
    (
        "override-bad-mode",
        ("mode: unordered", "mode: unordered\n    overrides: {x: loose}"),
        "checks.writes.overrides.x.mode",
    ),
    ("bad-trajectory-mode", ("mode: unordered", "mode: in_order"), "checks.writes.mode"),
    (
        "bad-arguments-mode",
        ("mode: unordered", "mode: unordered\n    arguments_mode: partial"),
        "checks.writes.arguments_mode",
    ),
    (
        "name-regex-invalid",
        ('{name: ["update_*", cancel_reservation]', '{name_regex: "(update|cancel"'),
        "name_regex: invalid regular expression '(update|cancel'",
    ),
    (
        "name-and-regex",
        ("error: false}", "name_regex: cancel_.*, error: false}"),
        "give 'name' or 'name_regex', not both",
    ),
    (
        "empty-name-list",
        ('{name: ["update_*", cancel_reservation]', "{name: []"),
        "give at least one name",
    ),
    (
        "select-without-criteria",
        ('select: {name: ["update_*", cancel_reservation], error: false}', "select: {}"),
        "a step match needs at least one of",
    ),
    (
        "arguments-and-path",
        ("arguments_path: ground_truth.expected_args}", "arguments_path: a, arguments: {b: 1}}"),
        "give 'arguments' or 'arguments_path', not both",
    ),
    (
        "inline-reference-two-argument-keys",
        (
            "reference_path: ground_truth.actions",
            "reference: [{name: update_reservation_flights, kwargs: {}, arguments: {}}]",
        ),
        "give one of arguments, kwargs",
    ),
    (
        "inline-reference-misspelt-key",
        (
            "reference_path: ground_truth.actions",
            "reference: [{name: update_reservation_flights, argument: {cabin: economy}}]",
        ),
        "checks.writes.reference[0].argument: unknown key 'argument'; did you mean 'arguments'?",
    ),
    (
        "select-misspelt-key",
        ("error: false}", "erorr: false}"),
        "checks.writes.select.erorr: unknown key 'erorr'; did you mean 'error'?",
    ),
]


def _run(folder: Path, suite: str, cases: list[dict[str, Any]]) -> tuple[int, str, Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "suite.yaml").write_text(suite)
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    db, out = folder / "r.db", folder / "out.json"
    args = ["run", str(folder / "suite.yaml"), "--db", f"sqlite:///{db}", "--json", str(out)]
    result = CliRunner().invoke(app, [*args, "-q"])
    return result.exit_code, result.stderr, db, out


@pytest.mark.parametrize(
    ("edit", "message"), [r[1:] for r in BAD_SUITES], ids=[r[0] for r in BAD_SUITES]
)
def test_a_bad_trajectory_option_is_one_line(
    tmp_path: Path, edit: tuple[str, str], message: str
) -> None:
    old, new = edit
    assert old in SUITE
    code, err, db, _ = _run(tmp_path, SUITE.replace(old, new, 1), [GOOD])
    assert code == 2, err
    assert "Traceback" not in err
    (line,) = err.splitlines()
    assert line.startswith(f"error: {tmp_path}/suite.yaml:"), line
    assert message in line, line
    assert not db.exists()


# (case, the writes verdict, the updated verdict)
BAD_CASES = [
    (
        _case("reference-not-a-list", UPDATE, "update_reservation_flights", UPDATE),
        ("failed", "reference is str, expected a list of calls"),
        (
            "passed",
            "update_reservation_flights(arguments from ground_truth.expected_args) at step 2",
        ),
    ),
    (
        _case("reference-item-without-name", UPDATE, [{"kwargs": UPDATE}], UPDATE),
        ("failed", "reference item 0 is not a name or a {name, arguments} object"),
        (
            "passed",
            "update_reservation_flights(arguments from ground_truth.expected_args) at step 2",
        ),
    ),
    (
        _case(
            "reference-arguments-not-json",
            UPDATE,
            [{"name": "update_reservation_flights", "arguments": "cabin=economy"}],
            None,
        ),
        (
            "failed",
            "reference item 0 (update_reservation_flights): arguments are not one JSON object",
        ),
        ("not_applicable", "no expected arguments at ground_truth.expected_args"),
    ),
    (
        _case(
            "expected-arguments-a-list",
            UPDATE,
            [{"name": "update_reservation_flights", "kwargs": UPDATE}],
            ["cabin", "economy"],
        ),
        ("passed", "trajectory ['update_reservation_flights'] matches (unordered)"),
        ("failed", "expected arguments at ground_truth.expected_args are list, expected an object"),
    ),
    (
        _case(
            "truncated-arguments",
            '{"reservation_id": "ZFA04Y", "cab',
            [{"name": "update_reservation_flights", "kwargs": UPDATE}],
            UPDATE,
        ),
        (
            "failed",
            "missing call update_reservation_flights(reservation_id='ZFA04Y', cabin='economy'): "
            'closest call (step 2) has unparsed arguments \'{"reservation_id": "ZFA04Y", '
            "\"cab' (not a JSON object) (unordered: 1 missing, 1 extra)",
        ),
        (
            "failed",
            "update_reservation_flights(arguments from ground_truth.expected_args) never happened; "
            'step 2 update_reservation_flights has unparsed arguments \'{"reservation_id": '
            '"ZFA04Y", "cab\' (not a JSON object)',
        ),
    ),
]


def test_a_bad_reference_or_arguments_in_a_case_is_its_verdict(tmp_path: Path) -> None:
    cases = [GOOD, *(c for c, _, _ in BAD_CASES)]
    code, err, _, out = _run(tmp_path, SUITE, cases)
    assert code == 0, err
    assert "Traceback" not in err
    results = {r["case_id"]: r["verdicts"] for r in json.loads(out.read_text())["results"]}
    assert list(results) == [c["id"] for c in cases], "every case is scored, none is lost"
    assert results["good"]["writes"]["state"] == "passed"
    for case, writes, updated in BAD_CASES:
        verdicts = results[case["id"]]
        assert (verdicts["writes"]["state"], verdicts["writes"]["reason"]) == writes
        assert (verdicts["updated"]["state"], verdicts["updated"]["reason"]) == updated


def test_arguments_nested_hundreds_deep_are_read_and_scored(tmp_path: Path) -> None:
    # deeper than pydantic's JSON parser goes (about 200), within orjson's (1,024): the case is
    # read; a comparison too deep for Python's recursion is that verdict's error, not the run's
    deep: Any = "economy"
    for _ in range(600):
        deep = [deep]
    nested = _case("nested-600", {**UPDATE, "cabin": deep}, GOOD["ground_truth"]["actions"], UPDATE)
    code, err, db, out = _run(tmp_path, SUITE, [GOOD, nested])
    assert code in (0, 1), err
    assert "Traceback" not in err
    results = {r["case_id"]: r["verdicts"] for r in json.loads(out.read_text())["results"]}
    assert list(results) == ["good", "nested-600"]
    writes = results["nested-600"]["writes"]
    assert writes["state"] == "failed"
    assert "differs at cabin: [[[[" in writes["reason"]
    assert db.exists()
