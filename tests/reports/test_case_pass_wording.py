"""How the reports word the case pass rule, TCR beside the case pass rate, and the outcome
rule set, including for summaries stored before these were recorded."""

from __future__ import annotations

import io

from rich.console import Console

from checkweigh.core import RunSummary
from checkweigh.reports import render_markdown, render_summary

# a summary as runs stored it before the pass policy, the interval and the outcome basis
OLD = {
    "executions": 4,
    "cases": 4,
    "errored_executions": 1,
    "agent_errors": 1,
    "rubrics": [
        {
            "rubric": "completion",
            "executions": 4,
            "scored": 3,
            "errored": 1,
            "not_applicable": 0,
            "tcr": 0.7,
            "tcr_low": 0.4,
            "tcr_high": 1.0,
            "band": "needs improvement",
            "outcomes": {"successful_completion": 1, "graceful_failure": 2},
            "checks": [],
            "top_failing": [],
        }
    ],
    "slowest": [],
    "case_gates": {
        "weighted_metrics_score_pct": 70.0,
        "metrics_pass_threshold": 80.0,
        "metrics_passed": False,
        "cases_pass_rate_pct": 25.0,
        "cases_pass_threshold": 100.0,
        "cases_passed": False,
        "executions": 4,
        "passed": 1,
        "failed": 2,
        "errored": 1,
        "pass_threshold": 75.0,
    },
}


def _console(summary: RunSummary) -> list[str]:
    buffer = io.StringIO()
    render_summary(Console(file=buffer, width=200), summary, title="bookings")
    return [line.strip(" │") for line in buffer.getvalue().splitlines()]


def test_a_summary_stored_before_the_policy_reads_as_the_threshold_policy() -> None:
    summary = RunSummary.model_validate(OLD)
    lines = _console(summary)
    assert "TCR (mean case score) 70.0% · cases passed 1 of 4 (25.0%)" in lines
    assert (
        "cases 1 passed, 2 failed, 1 errored of 4   (case pass: every expected outcome that "
        "applies passes (else score >= 75))"
    ) in lines
    assert not any(line.startswith("outcomes:") for line in lines)  # nothing recorded it
    text = render_markdown("bookings", "run-1", "complete", summary)
    assert (
        "**TCR (mean case score) 70.0% · cases passed 1 of 4 (25.0%)**; case pass: every "
        "expected outcome that applies passes (else score &gt;= 75)."
    ) in text
    assert "- completion outcomes: 1 successful completion, 2 graceful failure\n" in text


def test_a_run_where_nothing_was_scored_says_so() -> None:
    data = {**OLD, "case_gates": {**OLD["case_gates"], "weighted_metrics_score_pct": None}}
    data["case_gates"].update(passed=0, failed=0, errored=4, cases_pass_rate_pct=0.0)
    data["case_gates"].update(
        pass_policy="all_checks", case_pass_rule="every applicable check passes"
    )
    lines = _console(RunSummary.model_validate(data))
    assert "TCR (mean case score) unmeasured · cases passed 0 of 4 (0.0%)" in lines
    assert (
        "cases 0 passed, 0 failed, 4 errored of 4   (case pass: every applicable check passes)"
    ) in lines
