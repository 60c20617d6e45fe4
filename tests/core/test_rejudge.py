"""The judge/agent split of ``compare --rejudge`` (:func:`checkweigh.core.split_change`): the
parts add up to the total, pairing by case where the executions match, Welch's interval where
they do not, and an execution the agent failed kept as it was."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkweigh.core import (
    CaseResult,
    Decided,
    EvaluationResult,
    PassPolicy,
    ScoreStatus,
    Verdict,
    decided,
    failed,
    passed,
    split_change,
)

POLICY = PassPolicy()


def _row(case_id: str, score: float, **checks: bool) -> Decided:
    """A case with one rubric at ``score`` (0..1) over judge checks passed/failed as given."""
    verdicts: dict[str, Verdict] = {
        name: passed() if ok else failed(f"{name}: judged no") for name, ok in checks.items()
    }
    rubric = EvaluationResult("completion", ScoreStatus.SCORED, score, None, verdicts)
    return decided(CaseResult(case_id, 0, verdicts, {"completion": rubric}, 900.0), POLICY)


def _rows(flags: list[tuple[bool, bool]]) -> list[Decided]:
    """Cases whose two judge checks pass as given; the score is their weighted mean."""
    return [_row(f"c{i}", 0.7 * a + 0.3 * b, helpful=a, polite=b) for i, (a, b) in enumerate(flags)]


@settings(max_examples=60, deadline=None)
@given(data=st.data(), n=st.integers(1, 30))
def test_the_parts_add_up_to_the_total_on_the_same_cases(data: st.DataObject, n: int) -> None:
    sides = [
        _rows(data.draw(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=n, max_size=n)))
        for _ in range(3)
    ]
    for figure in split_change(*sides, ["helpful", "polite"], resamples=200):
        parts = (figure.total, figure.judge, figure.agent)
        if figure.metric == "average case score":
            assert all(p.paired for p in parts)
        if any(p.change is None for p in parts):
            continue  # a check no side decided
        assert figure.total.change == pytest.approx(figure.judge.change + figure.agent.change)
        for part in parts:
            assert part.low is not None
            assert part.high is not None
            assert part.low - 1e-9 <= part.change <= part.high + 1e-9


def test_outputs_unchanged_put_nothing_on_the_agent() -> None:
    flags = [(True, i % 3 > 0) for i in range(12)]
    base = _rows([(True, True)] * 12)
    stricter = _rows(flags)
    figures = split_change(base, stricter, stricter, ["helpful", "polite"])
    rates = {f.metric: f for f in figures}
    passed_rate = rates["case pass rate (%)"]
    assert (passed_rate.agent.change, passed_rate.agent.low, passed_rate.agent.high) == (0, 0, 0)
    assert passed_rate.judge.change == pytest.approx(-100 * 4 / 12)
    assert passed_rate.judge.paired
    assert passed_rate.judge.n == 12
    assert rates["check helpful pass rate (%)"].judge.change == 0.0


def test_a_case_only_in_the_candidate_makes_the_agent_part_unpaired() -> None:
    base = _rows([(True, True)] * 4)
    rejudged = _rows([(True, False), (True, True), (True, True), (True, True)])
    candidate = [*_rows([(False, False), (True, True), (True, True), (True, True)])]
    candidate.append(_row("c9", 1.0, helpful=True, polite=True))
    figure = split_change(base, rejudged, candidate, [])[0]
    assert figure.metric == "case pass rate (%)"
    assert figure.judge.paired
    assert figure.judge.change == pytest.approx(-25.0)
    agent = figure.agent
    assert not agent.paired
    assert agent.n == 9
    # Welch: rejudged 3 of 4 passed, candidate 4 of 5
    r, c = [0, 100, 100, 100], [0, 100, 100, 100, 100]
    mr, mc = sum(r) / 4, sum(c) / 5
    se = math.sqrt(sum((v - mr) ** 2 for v in r) / 3 / 4 + sum((v - mc) ** 2 for v in c) / 4 / 5)
    assert agent.change == pytest.approx(mc - mr)
    assert agent.low == pytest.approx(mc - mr - 1.959963984540054 * se)
    assert agent.high == pytest.approx(mc - mr + 1.959963984540054 * se)


def test_an_execution_the_agent_failed_stays_as_it_was() -> None:
    base = _rows([(True, True), (True, True), (False, False)])
    # c2 has no output to judge: the rejudge leaves it out
    rejudged = _rows([(True, False), (True, True)])
    figure = split_change(base, rejudged, rejudged, [])[0]
    assert figure.rejudged == pytest.approx(100 / 3)
    assert figure.judge.paired
    assert figure.judge.n == 3
    assert figure.judge.change == pytest.approx(-100 / 3)


def test_a_check_no_run_decided_is_not_measured() -> None:
    rows = _rows([(True, True)] * 3)
    figure = split_change(rows, rows, rows, ["gone"])[-1]
    assert figure.metric == "check gone pass rate (%)"
    assert figure.base is None
    assert figure.total.change is None
    assert figure.total.n == 0
