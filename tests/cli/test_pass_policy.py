"""`checkweigh run` on imported logs that carry no success flag: ``pass_policy: all_checks``,
outcome classes by score with the reason said, and TCR beside the case pass rate in the
console, Markdown and JSON reports."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from checkweigh.cli import app
from checkweigh.store import Store
from support.airline_logs import recorded_cases, write_airline_suite

runner = CliRunner()
# wide enough that no line of the report wraps
WIDE = {"COLUMNS": "400"}
BY_SCORE = (
    "classed by score, since no case has a success flag at final_state.success: "
    "successful completion at score 1, hard failure at 0 with final_state.stage == 'failed', "
    "graceful failure from 0.5, else partial failure"
)
# under all_checks no case passes or fails by its score: what is classed by score says so
INFORMATIONAL = (
    " (informational: under pass_policy all_checks outcome classes follow the score, not "
    "whether a case passes; a case passes when every applicable check passes)"
)


def _run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args), env=WIDE)
    return result.exit_code, result.stdout, result.stderr


def _report_lines(out: str) -> list[str]:
    """The report's lines of text: panel borders dropped, tables (whose layout is rich's) and
    the run id (which changes) left out."""
    lines = []
    for raw in out.splitlines():
        line = raw.strip()
        if line.startswith(("╭", "╰")):
            continue
        if line.startswith("│") and line.endswith("│"):
            line = line[1:-1].strip()
        if not line or line[0] in "┏┃┡│└":
            continue
        lines.append(line)
    return lines


def test_all_checks_on_imported_logs_without_a_success_flag(tmp_path: Path) -> None:
    suite = write_airline_suite(tmp_path / "airline")
    db = f"sqlite:///{tmp_path / 'r.db'}"
    md, js = tmp_path / "summary.md", tmp_path / "results.json"
    code, out, err = _run(
        "run", str(suite), "--db", db, "-q", "--markdown", str(md), "--json", str(js)
    )
    assert code == 0, err
    (info,) = Store(db).list_runs()
    lines = _report_lines(out)
    assert lines[0] == f"airline-cancellations   run {info.id}"
    # scores: 1, 1, 1 (the three solved), 0.8, 0.9, 0.6, 0.3: mean 5.6 / 7 = 0.8
    assert lines[1:] == [
        "7 execution(s) of 7 case(s); 0 errored",
        "TCR (mean case score) 80.0% (95% CI 55.5-100.0) · cases passed 3 of 7 (42.9%)",
        "TCR 0.800  95% CI [0.555, 1.000]  needs improvement   scored 7 of 7",
        # the three perfect conversations are successes, not "graceful failures"
        "successful completion       3   42.9%",
        "graceful failure            3   42.9%",
        "partial failure             1   14.3%",
        "hard failure                0    0.0%",
        f"outcomes: {BY_SCORE}{INFORMATIONAL}",
        "checks",
        "top failing: right_final_status, looked_up_first, told_the_user, one_cancellation, "
        "no_handoff",
        "lowest scores (informational: no case passes or fails by score)",
        "task-07-run-1#0: task: score 0.30, partial failure. failed: right_final_status "
        "(final_state.reservation.status is 'confirmed', expected 'cancelled'); told_the_user "
        "(output lacks ['cancel']); no_handoff (transfer_to_human_agents happened 1 time(s), "
        "more than 0)",
        "task-11-run-1#0: task: score 0.60, graceful failure. failed: right_final_status "
        "(final_state.reservation.status is 'cancelled', expected 'confirmed')",
        "task-03-run-2#0: task: score 0.80, graceful failure. failed: looked_up_first "
        "(cancel_reservation at step 3 without any get_reservation_details)",
        # the logs' token usage, summed per case
        "agent: 31,421 input + 494 output tokens over 7 cases",
        "cases 3 passed, 4 failed, 0 errored of 7   (case pass: every applicable check passes)",
        # 80 and 90 would pass on score; under all_checks one failed check fails the case
        "failed task-03-run-2#0: 1 check failed: looked_up_first: cancel_reservation at step 3 "
        "without any get_reservation_details (score 80.0, informational)",
        "failed task-07-run-0#0: 1 check failed: one_cancellation: cancel_reservation happened "
        "2 time(s), more than 1 (score 90.0, informational)",
        "failed task-11-run-1#0: 1 check failed: right_final_status: "
        "final_state.reservation.status is 'cancelled', expected 'confirmed' "
        "(score 60.0, informational)",
        "failed task-07-run-1#0: 3 checks failed: right_final_status: "
        "final_state.reservation.status is 'confirmed', expected 'cancelled'; told_the_user: "
        "output lacks ['cancel']; no_handoff: transfer_to_human_agents happened 1 time(s), "
        "more than 0 (score 30.0, informational)",
        "gate PASS  metrics: mean case score 80.0% >= 80%",
        "gate PASS  cases: pass rate 42.9% >= 40%",
        "gate PASS  errored_executions <= 0  (actual 0)",
        "gates passed",
        f"stored in {db}",
        f"wrote 7 result(s) to {js}",
        f"wrote the Markdown summary to {md}",
    ]

    text = md.read_text(encoding="utf-8")
    assert text.splitlines()[4] == (
        "**TCR (mean case score) 80.0% (95% CI 55.5-100.0) · cases passed 3 of 7 (42.9%)**; "
        "case pass: every applicable check passes."
    )
    assert (
        "| rubric | TCR (mean score) | 95% CI | band | scored | errored | top failing checks |"
        in text
    )
    assert (
        "- task outcomes: 3 successful completion, 3 graceful failure, 1 partial failure "
        "(classed by score, since no case has a success flag at final\\_state&#46;success: "
        "successful completion at score 1, hard failure at 0 with final\\_state&#46;stage == "
        "'failed', graceful failure from 0.5, else partial failure (informational: under "
        "pass\\_policy all\\_checks outcome classes follow the score, not whether a case "
        "passes; a case passes when every applicable check passes))"
    ) in text
    assert "| case | state | score (informational) | why |" in text

    data = json.loads(js.read_text())
    gates = data["summary"]["case_gates"]
    assert (gates["pass_policy"], gates["case_pass_rule"]) == (
        "all_checks",
        "every applicable check passes",
    )
    assert (gates["weighted_metrics_score_pct"], gates["cases_pass_rate_pct"]) == (
        80.0,
        300 / 7,
    )
    task = data["summary"]["rubrics"][0]
    assert task["outcome_basis"] == {"score": 7}
    assert task["outcome_note"] == BY_SCORE + INFORMATIONAL
    assert task["outcomes"]["successful_completion"] == 3
    perfect = data["results"][0]
    assert perfect["scores"]["task"]["outcome"] == "successful_completion"
    assert perfect["case"] == {
        "state": "passed",
        "score_pct": 100.0,
        "reason": "every applicable check passed (5 passed)",
    }
    # the correct refusal: nothing was cancelled, so the ordering check did not apply
    assert data["results"][2]["case"]["reason"] == (
        "every applicable check passed (4 passed, 1 not applicable)"
    )
    assert info.config["thresholds"]["pass_policy"] == "all_checks"

    # `show` reads the stored summary: the same policy and the same reason line
    code, shown, _ = _run("show", info.id, "--db", db)
    assert code == 0
    assert _report_lines(shown)[1:8] == lines[1:8]
    assert (
        "cases 3 passed, 4 failed, 0 errored of 7   (case pass: every applicable check passes)"
        in shown
    )


def test_the_threshold_policy_on_the_same_logs_passes_on_score(tmp_path: Path) -> None:
    suite = write_airline_suite(
        tmp_path / "airline", thresholds="thresholds:\n  cases_pass_threshold: 40\n"
    )
    code, out, _ = _run("run", str(suite), "--db", f"sqlite:///{tmp_path / 'r.db'}", "-q")
    assert code == 0, out
    lines = _report_lines(out)
    assert "TCR (mean case score) 80.0% (95% CI 55.5-100.0) · cases passed 5 of 7 (71.4%)" in lines
    assert (
        "cases 5 passed, 2 failed, 0 errored of 7   "
        "(case pass: score >= 75 and no required check failed)"
    ) in lines
    assert "failed task-11-run-1#0: score 60.0 < pass threshold 75" in lines
    # the outcome classes do not depend on the pass policy
    assert "successful completion       3   42.9%" in lines
    assert f"outcomes: {BY_SCORE}" in lines


def test_cases_with_and_without_the_flag_are_each_classed_their_way(tmp_path: Path) -> None:
    cases = recorded_cases()
    # two conversations came from a harness that records the benchmark's own verdict
    cases[0]["final_state"]["success"] = True  # perfect, flagged a success
    cases[4]["final_state"]["success"] = False  # 0.9, flagged a failure: graceful
    suite = write_airline_suite(tmp_path / "airline", cases)
    db = f"sqlite:///{tmp_path / 'r.db'}"
    js = tmp_path / "results.json"
    code, out, _ = _run("run", str(suite), "--db", db, "-q", "--json", str(js))
    assert code == 0, out
    note = (
        "classed by the success flag at final_state.success in 2 case(s), and by score in the "
        "5 without one: successful completion at score 1, hard failure at 0 with "
        "final_state.stage == 'failed', graceful failure from 0.5, else partial failure"
    )
    lines = _report_lines(out)
    assert f"outcomes: {note}{INFORMATIONAL}" in " ".join(lines)  # longer than a line
    assert "successful completion       3   42.9%" in lines
    data = json.loads(js.read_text())
    assert data["summary"]["rubrics"][0]["outcome_basis"] == {"success_flag": 2, "score": 5}
    by_id = {r["case_id"]: r["scores"]["task"]["outcome"] for r in data["results"]}
    assert by_id["task-03-run-0"] == "successful_completion"  # by its flag
    assert by_id["task-07-run-0"] == "graceful_failure"  # its flag says it failed
    assert by_id["task-03-run-1"] == "successful_completion"  # by score: every check passed


def test_a_suite_with_its_own_outcome_rules_says_so(tmp_path: Path) -> None:
    suite = write_airline_suite(tmp_path / "airline")
    suite.write_text(
        suite.read_text().replace(
            "      no_handoff: 0.1\n",
            "      no_handoff: 0.1\n"
            "    outcome_rules:\n"
            "      - {outcome: successful_completion, min_score: 0.9}\n"
            "      - {outcome: hard_failure, max_score: 0.3}\n",
        )
    )
    code, out, _ = _run("run", str(suite), "--db", f"sqlite:///{tmp_path / 'r.db'}", "-q")
    assert code == 0, out
    lines = _report_lines(out)
    assert f"outcomes: classed by the suite's outcome_rules{INFORMATIONAL}" in lines
    assert "successful completion       4   57.1%" in lines  # 1, 1, 1 and 0.9
    assert "hard failure                1   14.3%" in lines  # 0.3
    assert "partial failure             2   28.6%" in lines  # no rule matched 0.8, 0.6


def test_under_all_checks_weight_sums_are_said_to_shape_the_score_only(tmp_path: Path) -> None:
    """Weights that sum to 2.0 are normalized, which changes the score and nothing else: no
    report may present them as deciding a case."""
    suite = write_airline_suite(tmp_path / "airline")
    suite.write_text(
        suite.read_text()
        .replace("right_final_status: 0.4", "right_final_status: 0.8")
        .replace("told_the_user: 0.2", "told_the_user: 0.4")
        .replace("one_cancellation: 0.1", "one_cancellation: 0.2")
        .replace("no_handoff: 0.1", "no_handoff: 0.2")
        .replace("weight: 0.2, not_applicable", "weight: 0.4, not_applicable")
    )
    md, js = tmp_path / "summary.md", tmp_path / "results.json"
    db = f"sqlite:///{tmp_path / 'r.db'}"
    code, out, err = _run(
        "run", str(suite), "--db", db, "-q", "--markdown", str(md), "--json", str(js)
    )
    assert code == 0, err
    note = (
        "weights of rubric 'task' sum to 2, not 1.0; they were normalized (informational: under "
        "pass_policy all_checks the weights shape the score only, not whether a case passes; "
        "a case passes when every applicable check passes)"
    )
    text = " ".join(_report_lines(out))
    assert f"note: {note}" in text
    assert "score weight" in out  # the checks table's weight column
    assert "cases 3 passed, 4 failed, 0 errored of 7" in text  # as with weights summing to 1
    data = json.loads(js.read_text())
    assert data["summary"]["rubrics"][0]["normalization_note"] == note
    assert note in data["summary"]["notes"]
    assert data["summary"]["case_gates"]["case_pass_rule"] == "every applicable check passes"
    assert "informational: under pass\\_policy all\\_checks the weights shape the score" in (
        md.read_text()
    )


def test_under_the_threshold_policy_weights_and_outcomes_are_not_called_informational(
    tmp_path: Path,
) -> None:
    suite = write_airline_suite(
        tmp_path / "airline", thresholds="thresholds:\n  cases_pass_threshold: 40\n"
    )
    js = tmp_path / "results.json"
    code, out, _ = _run(
        "run", str(suite), "--db", f"sqlite:///{tmp_path / 'r.db'}", "-q", "--json", str(js)
    )
    assert code == 0, out
    assert "informational" not in out
    assert "score weight" not in out
    assert json.loads(js.read_text())["summary"]["rubrics"][0]["outcome_note"] == BY_SCORE
