"""Which comparison two runs get: paired when they share a case, unpaired only for two monitor
windows that share none, refused otherwise; and how an unpaired verdict reads."""

from __future__ import annotations

import pytest
from rich.console import Console

from checkweigh.core import (
    CaseResult,
    CaseVerdict,
    CompareThresholds,
    CompareVerdict,
    Decided,
    EvaluationResult,
    PassPolicy,
    ScoreStatus,
    Verdict,
    decided,
    failed,
    passed,
)
from checkweigh.errors import InputError
from checkweigh.reports import comparison_markdown, explain_comparison, render_comparison
from checkweigh.service import compare_results, compare_rows, is_window

POLICY = PassPolicy()
WINDOW = {"monitor": {"name": "booking-prod", "window_s": 3600, "start": 1_800_000_000.0}}
IDS = ("mon-1b288c5c-20270115T0800", "mon-1b288c5c-20270115T0900")
T = CompareThresholds()


def _trace(trace_id: str, grounded: bool, ms: float = 900.0) -> CaseResult:
    verdicts: dict[str, Verdict] = {
        "answered": passed(),
        "grounded": passed() if grounded else failed("the refund amount is not in the trace"),
    }
    score = 1.0 if grounded else 0.5
    rubric = EvaluationResult("support", ScoreStatus.SCORED, score, None, verdicts)
    return CaseResult(trace_id, 0, verdicts, {"support": rubric}, ms)


def _unused(rows: list[Decided]) -> list[CaseVerdict]:
    raise AssertionError("an unpaired comparison asks for no reasons")


def test_is_window() -> None:
    assert is_window(WINDOW)
    assert not is_window({"thresholds": {}})
    assert not is_window({"monitor": "booking-prod"})  # not a window's snapshot


def test_windows_sharing_no_trace_compare_unpaired_and_runs_do_not() -> None:
    base = [_trace(f"4bf9{i:028x}", True) for i in range(12)]
    cand = [_trace(f"7a01{i:028x}", i % 3 != 0) for i in range(9)]
    cmp = compare_results(
        base, cand, policies=(POLICY, POLICY), configs=(WINDOW, WINDOW), ids=IDS, thresholds=T
    )
    assert cmp.unpaired
    assert (cmp.paired, cmp.only_base, cmp.only_candidate) == (0, 12, 9)
    grounded = next(c for c in cmp.checks if c.check == "grounded")
    assert (grounded.base_rate, grounded.candidate_rate) == (1.0, 6 / 9)
    with pytest.raises(InputError, match="only two monitor windows are compared unpaired"):
        compare_results(
            base, cand, policies=(POLICY, POLICY), configs=(WINDOW, {}), ids=IDS, thresholds=T
        )


def test_windows_that_share_traces_are_paired() -> None:
    """Two monitors scoring the same traces: their windows hold the same cases, and pairs
    are the better test."""
    base = [_trace(f"4bf9{i:028x}", True) for i in range(10)]
    cand = [_trace(f"4bf9{i:028x}", i >= 4) for i in range(10)]
    cmp = compare_results(
        base, cand, policies=(POLICY, POLICY), configs=(WINDOW, WINDOW), ids=IDS, thresholds=T
    )
    assert not cmp.unpaired
    assert cmp.paired == 10
    assert [c.case_id for c in cmp.regressions] == [f"4bf9{i:028x}" for i in range(4)]


def test_an_empty_window_is_refused() -> None:
    cand = [decided(_trace(f"7a01{i:028x}", True), POLICY) for i in range(5)]
    with pytest.raises(InputError, match=f"the monitor window {IDS[0]} holds no trace"):
        compare_rows([], cand, _unused, windows=True, ids=IDS, thresholds=T)


def test_an_unpaired_difference_too_small_to_tell_reads_as_such() -> None:
    # 10 traces a window, one more failing: the threshold is exceeded, Fisher says noise
    base = [decided(_trace(f"4bf9{i:028x}", i != 0), POLICY) for i in range(10)]
    cand = [decided(_trace(f"7a01{i:028x}", i > 1), POLICY) for i in range(10)]
    cmp = compare_rows(base, cand, _unused, windows=True, ids=IDS, thresholds=T)
    assert cmp.verdict is CompareVerdict.NOT_SIGNIFICANT
    reading = explain_comparison(cmp)
    assert "the unpaired test cannot tell it from noise" in reading
    assert "compare longer windows" in reading
    console = Console(record=True, width=200)
    render_comparison(console, cmp, *IDS)
    text = console.export_text()
    assert "unpaired: two monitor windows (10 and 10 traces)" in text
    assert "checks in both windows (Fisher's exact test)" in text
    assert "unchanged:" not in text
    assert "pass->fail" not in text
    markdown = comparison_markdown(cmp, *IDS)
    assert "None: no threshold exceeded." not in markdown
    assert "Unchanged:" not in markdown
    assert "| grounded | 90.0% | 80.0% | -10.0 | 1.000 | not significant |" in markdown
