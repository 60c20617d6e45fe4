"""Tokens and cost per case (summed from step attributes) and over a run."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from checkweigh.core import (
    Case,
    CaseResult,
    CaseUsage,
    Rubric,
    RubricItem,
    RunAggregator,
    Step,
    passed,
    score_rubric,
    trace_usage,
)


def _step(**attributes: object) -> Step:
    return Step(kind="assistant", content="ok", attributes=attributes)


def test_no_attributes_means_no_usage_not_zero() -> None:
    trace = [Step(kind="user", content="hi"), Step(kind="tool_call", name="lookup")]
    assert trace_usage(trace) is None
    assert trace_usage([_step(model="gpt-4o", finish_reason="stop")]) is None


def test_usage_sums_numbers_and_leaves_out_what_is_not_a_count() -> None:
    trace = [
        _step(model="gpt-4o", input_tokens=1450, output_tokens=38),
        Step(kind="tool_call", name="get_reservation_details"),
        _step(input_tokens=1702, output_tokens=61, cost_usd=0.0123),
        _step(input_tokens=True, output_tokens="61", cost_usd=float("nan")),  # not counts
        _step(input_tokens=-5, output_tokens=float("inf"), cost_usd=0.5),
    ]
    assert trace_usage(trace) == CaseUsage(3152, 99, 0.5123)
    assert trace_usage([_step(cost_usd=0.002)]) == CaseUsage(None, None, 0.002)


def test_counts_whose_sum_overflows_are_unknown_not_a_crash() -> None:
    # each count is finite, their sum is not: the case's usage is unknown, the run goes on
    huge = [_step(input_tokens=9e307, output_tokens=12, cost_usd=1e308) for _ in range(2)]
    assert trace_usage(huge) == CaseUsage(None, 24, None)


counts = st.one_of(
    st.integers(min_value=0, max_value=10**7),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.text(max_size=3),
    st.none(),
)


@given(st.lists(st.tuples(counts, counts), max_size=30))
def test_usage_is_the_sum_of_the_valid_counts(pairs: list[tuple[object, object]]) -> None:
    trace = [_step(input_tokens=a, output_tokens=b) for a, b in pairs]

    def valid(v: object) -> bool:
        return type(v) in (int, float) and 0 <= v < math.inf  # type: ignore[operator]

    ins = [a for a, _ in pairs if valid(a)]
    outs = [b for _, b in pairs if valid(b)]
    usage = trace_usage(trace)
    if not ins and not outs:
        assert usage is None
        return
    assert usage is not None

    def whole(values: list[object]) -> int | None:
        total = sum(values)  # type: ignore[arg-type]
        # a sum that overflows to infinity (counts near 1e308), or past what JSON readers
        # take as an integer (2**63 - 1), is unknown, never an error
        return int(total) if values and total <= 2**63 - 1 else None

    assert usage.input_tokens == whole(ins)
    assert usage.output_tokens == whole(outs)


def _result(case: Case, rubric: Rubric, latency: float | None) -> CaseResult:
    verdicts = {"ok": passed("fine")}
    return CaseResult(
        case.id,
        0,
        verdicts,
        {rubric.name: score_rubric(rubric, verdicts, case)},
        latency,
        usage=trace_usage(case.trace),
    )


def test_a_run_totals_tokens_and_cost_and_means_per_case() -> None:
    rubric = Rubric.build("r", [RubricItem("ok", 1.0)])
    cases = [
        Case(id="a", trace=[_step(input_tokens=1000, output_tokens=100, cost_usd=0.01)]),
        Case(id="b", trace=[_step(input_tokens=3000, output_tokens=300)]),
        Case(id="c", trace=[Step(kind="assistant", content="no usage logged")]),
    ]
    agg = RunAggregator([rubric])
    for case, ms in zip(cases, (1200.0, 1800.0, None), strict=True):
        agg.add(_result(case, rubric, ms))
    usage = agg.summary().usage
    assert usage is not None
    assert usage.model_dump() == {
        "executions": 2,
        "input_tokens": 4000,
        "output_tokens": 400,
        "mean_input_tokens": 2000.0,
        "mean_output_tokens": 200.0,
        "cost_usd": 0.01,
        "cost_executions": 1,
        "timed_executions": 2,
        "mean_latency_ms": 1500.0,
    }
    assert usage.one_line() == (
        "4,000 input + 400 output tokens, $0.0100 over 2 cases; mean latency 1,500 ms"
    )
    # stored and read back
    record = _result(cases[0], rubric, 1200.0).to_record()
    assert record["usage"] == {"input_tokens": 1000, "output_tokens": 100, "cost_usd": 0.01}
    assert CaseResult.from_record(record).usage == CaseUsage(1000, 100, 0.01)
    assert "usage" not in _result(cases[2], rubric, None).to_record()
    assert CaseResult.from_record(_result(cases[2], rubric, None).to_record()).usage is None


def test_a_run_without_usage_or_latency_has_no_usage_line() -> None:
    rubric = Rubric.build("r", [RubricItem("ok", 1.0)])
    agg = RunAggregator([rubric])
    agg.add(_result(Case(id="a"), rubric, None))
    assert agg.summary().usage is None
