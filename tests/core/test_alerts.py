"""Alert rules: the exact tails against brute-force sums, the decisions and their sentences,
the YAML errors, and the false-alarm rate measured over simulated windows where nothing is
wrong."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkweigh.core import (
    Z_MIN_CELL,
    AlertDecision,
    AlertRule,
    Counts,
    evaluate_rule,
    false_alarm_statement,
)
from checkweigh.core._tails import attained_size, binomial_cdf, hypergeom_cdf
from checkweigh.errors import InputError

PROPS = settings(max_examples=200, deadline=None, database=None)


def brute_binomial(k: int, n: int, p: Fraction) -> Fraction:
    return sum(
        (Fraction(math.comb(n, i)) * p**i * (1 - p) ** (n - i) for i in range(max(0, k + 1))),
        Fraction(0),
    )


def brute_hypergeom(x: int, total: int, marked: int, drawn: int) -> Fraction:
    ways = math.comb(total, drawn)
    return sum(
        (
            Fraction(math.comb(marked, i) * math.comb(total - marked, drawn - i), ways)
            for i in range(max(0, min(x, drawn) + 1))
        ),
        Fraction(0),
    )


rates = st.integers(1, 99).map(lambda pct: Fraction(pct, 100))


@PROPS
@given(n=st.integers(0, 80), data=st.data(), p=rates)
def test_the_binomial_tail_is_the_brute_force_sum(n: int, data: st.DataObject, p: Fraction) -> None:
    k = data.draw(st.integers(-1, n + 1))
    got = binomial_cdf(k, n, float(p))
    assert got == pytest.approx(float(brute_binomial(k, n, p)), rel=1e-9, abs=1e-15)
    assert 0.0 <= got <= 1.0


@PROPS
@given(total=st.integers(0, 60), data=st.data())
def test_the_hypergeometric_tail_is_the_brute_force_sum(total: int, data: st.DataObject) -> None:
    marked = data.draw(st.integers(0, total))
    drawn = data.draw(st.integers(0, total))
    x = data.draw(st.integers(-1, drawn + 1))
    got = hypergeom_cdf(x, total, marked, drawn)
    assert got == pytest.approx(float(brute_hypergeom(x, total, marked, drawn)), abs=1e-12)


@PROPS
@given(n=st.integers(1, 3000), p=rates, data=st.data())
def test_the_binomial_tail_rises_with_k(n: int, p: Fraction, data: st.DataObject) -> None:
    k = data.draw(st.integers(0, n - 1))
    low, high = binomial_cdf(k, n, float(p)), binomial_cdf(k + 1, n, float(p))
    assert 0.0 <= low <= high <= 1.0


@pytest.mark.parametrize(("k", "p"), [(89_500, 0.9), (90_000, 0.9), (500, 0.004), (99_000, 0.99)])
def test_the_binomial_tail_at_a_hundred_thousand_is_one_with_its_mirror(k: int, p: float) -> None:
    # P(K <= k) + P(K' <= n - k - 1) = 1 for K' ~ Binomial(n, 1 - p): the two sums run on
    # opposite sides of the mode, so this checks each against the other at n = 100,000
    n = 100_000
    assert binomial_cdf(k, n, p) + binomial_cdf(n - k - 1, n, 1 - p) == pytest.approx(1.0)


def test_a_far_tail_at_a_hundred_thousand_is_small_not_zero() -> None:
    # 87% of 100,000 against 90%: about 1e-202, neither underflowed nor lost; the check sums
    # every term from its own log (no recurrence), scaled by the largest
    n, k, p = 100_000, 87_000, 0.9
    logs = [
        math.lgamma(n + 1)
        - math.lgamma(i + 1)
        - math.lgamma(n - i + 1)
        + i * math.log(p)
        + (n - i) * math.log1p(-p)
        for i in range(k + 1)
    ]
    top = max(logs)
    expected_log = top + math.log(math.fsum(math.exp(x - top) for x in logs))
    got = binomial_cdf(k, n, p)
    assert 0.0 < got < 1e-200
    assert math.log(got) == pytest.approx(expected_log, rel=1e-9)


@PROPS
@given(n=st.integers(20, 400), p=rates, alpha=st.sampled_from([0.01, 0.05, 0.1]))
def test_the_attained_size_is_the_largest_tail_within_alpha(
    n: int, p: Fraction, alpha: float
) -> None:
    size = attained_size(lambda k: binomial_cdf(k, n, float(p)), 0, n, alpha)
    tails = [binomial_cdf(k, n, float(p)) for k in range(n + 1)]
    assert size == max((t for t in tails if t <= alpha), default=0.0)
    assert size <= alpha


BELOW = AlertRule("availability_checked", below=0.9)
DROP = AlertRule("grounded", drop=True, alpha=0.01)


def test_a_window_significantly_below_its_floor_fires_with_the_sentence() -> None:
    decision = evaluate_rule(BELOW, Counts(passed=85, failed=35))
    assert decision.fired
    assert decision.state == "fired"
    assert decision.test == "binomial"
    assert decision.p_value == pytest.approx(float(brute_binomial(85, 120, Fraction(9, 10))))
    assert decision.rate == pytest.approx(85 / 120)
    assert decision.interval == pytest.approx((0.6216, 0.7822), abs=1e-4)
    assert decision.reason == (
        "availability_checked passed 71% (62%-78%) of 120 traces, significantly below 90% "
        "(p < 0.0001, alpha 0.05)"
    )
    # 120 traces: the exact test rejects at k <= 101, P(K <= 101 | 0.9) = 0.0297 < 0.05
    assert decision.false_alarm_rate == pytest.approx(0.0297, abs=1e-4)


def test_a_window_a_little_below_its_floor_is_quiet() -> None:
    decision = evaluate_rule(BELOW, Counts(passed=105, failed=15))
    assert decision.state == "quiet"
    assert decision.p_value == pytest.approx(float(brute_binomial(105, 120, Fraction(9, 10))))
    assert decision.reason == (
        "availability_checked passed 88% (80%-92%) of 120 traces, not significantly below 90% "
        "(p = 0.22, alpha 0.05)"
    )


def test_a_large_window_shows_the_digits_that_keep_rate_and_interval_apart() -> None:
    decision = evaluate_rule(BELOW, Counts(passed=89_500, failed=10_500))
    assert decision.fired
    assert decision.reason.startswith(
        "availability_checked passed 89.5% (89.3%-89.7%) of 100000 traces, significantly below"
    )


@PROPS
@given(n=st.integers(20, 300), data=st.data())
def test_the_p_value_of_below_rises_with_the_passes(n: int, data: st.DataObject) -> None:
    k = data.draw(st.integers(0, n - 1))
    fewer = evaluate_rule(BELOW, Counts(k, n - k))
    more = evaluate_rule(BELOW, Counts(k + 1, n - k - 1))
    assert fewer.p_value is not None
    assert more.p_value is not None
    assert 0.0 <= fewer.p_value <= more.p_value <= 1.0
    assert not (more.fired and not fewer.fired)


def test_a_drop_by_fisher_fires_with_its_p_value_and_sentence() -> None:
    decision = evaluate_rule(DROP, Counts(85, 35), Counts(119, 21))
    assert decision.test == "fisher"  # 21 and 35 failures: below Z_MIN_CELL
    assert decision.fired
    assert decision.p_value == pytest.approx(float(brute_hypergeom(85, 260, 204, 120)))
    assert decision.reason == (
        "grounded passed 71% (62%-78%) of 120 traces, against 85% (78%-90%) of 140 traces in "
        "the previous window: a significant drop (p = 0.0044, alpha 0.01, Fisher's exact test)"
    )
    assert 0.0 < decision.false_alarm_rate <= 0.01


def test_a_rise_is_never_a_drop() -> None:
    decision = evaluate_rule(DROP, Counts(130, 10), Counts(85, 35))
    assert decision.state == "quiet"
    assert decision.p_value is not None
    assert decision.p_value > 0.99


def test_large_windows_use_the_z_test_and_it_agrees_with_fisher() -> None:
    current, previous = Counts(1_150, 250), Counts(1_200, 200)
    decision = evaluate_rule(DROP, current, previous)
    assert min(current.failed, previous.failed) >= Z_MIN_CELL
    assert decision.test == "z"
    assert decision.false_alarm_rate == 0.01
    fisher = hypergeom_cdf(1_150, 2_800, 2_350, 1_400)
    assert decision.p_value is not None
    assert decision.p_value == pytest.approx(fisher, rel=0.25)
    assert decision.p_value == pytest.approx(0.00504, abs=1e-5)  # z = -2.573
    assert decision.fired
    assert "pooled z test" in decision.reason


@PROPS
@given(n=st.integers(20, 150), m=st.integers(20, 150), data=st.data())
def test_the_p_value_of_drop_rises_with_the_passes(n: int, m: int, data: st.DataObject) -> None:
    before = data.draw(st.integers(0, m))
    k = data.draw(st.integers(0, n - 1))
    fewer = evaluate_rule(DROP, Counts(k, n - k), Counts(before, m - before))
    more = evaluate_rule(DROP, Counts(k + 1, n - k - 1), Counts(before, m - before))
    assert fewer.p_value is not None
    assert more.p_value is not None
    assert 0.0 <= fewer.p_value <= more.p_value <= 1.0


@pytest.mark.parametrize(
    ("rule", "current", "previous", "reason"),
    [
        (
            BELOW,
            Counts(9, 3),
            None,
            "availability_checked has 12 decided traces in this window, fewer than the 20 the "
            "rule needs",
        ),
        (
            BELOW,
            Counts(0, 0),
            None,
            "availability_checked has 0 decided traces in this window, "
            "fewer than the 20 the rule needs",
        ),
        (
            DROP,
            Counts(20, 20),
            None,
            "grounded passed 50% (35%-65%) of 40 traces, with no previous window to compare with",
        ),
        (
            DROP,
            Counts(20, 20),
            Counts(5, 0),
            "grounded passed 50% (35%-65%) of 40 traces; the previous window had 5 decided, "
            "fewer than the 20 the rule needs",
        ),
    ],
)
def test_too_little_to_test_is_undecided_and_never_fires(
    rule: AlertRule, current: Counts, previous: Counts | None, reason: str
) -> None:
    decision = evaluate_rule(rule, current, previous)
    assert decision.state == "undecided"
    assert not decision.fired
    assert decision.p_value is None
    assert decision.test is None
    assert decision.false_alarm_rate == 0.0
    assert decision.reason == reason


def test_a_decision_survives_json() -> None:
    decision = evaluate_rule(DROP, Counts(85, 35), Counts(119, 21))
    assert AlertDecision.model_validate_json(decision.model_dump_json()) == decision


@pytest.mark.parametrize(("n", "floor"), [(20, 0.9), (57, 0.8), (120, 0.9), (500, 0.95)])
def test_below_fires_falsely_no_more_than_alpha_when_the_rate_holds(n: int, floor: float) -> None:
    rule = AlertRule("booked", below=floor, alpha=0.05)
    windows = 4_000
    passes = np.random.default_rng(2026).binomial(n, floor, size=windows)
    fired = sum(evaluate_rule(rule, Counts(int(k), n - int(k))).fired for k in passes)
    size = evaluate_rule(rule, Counts(n, 0)).false_alarm_rate
    slack = 4 * math.sqrt(0.05 * 0.95 / windows)  # Monte Carlo: four standard errors
    assert fired / windows <= 0.05 + slack
    # and it is the attained size the decision states, not merely below alpha
    assert fired / windows == pytest.approx(size, abs=slack)


def test_below_fires_almost_always_when_the_rate_is_well_below() -> None:
    rng = np.random.default_rng(7)
    passes = rng.binomial(200, 0.8, size=500)
    fired = sum(evaluate_rule(BELOW, Counts(int(k), 200 - int(k))).fired for k in passes)
    assert fired >= 490


@pytest.mark.parametrize(("n", "rate"), [(60, 0.85), (300, 0.5)])
def test_drop_fires_falsely_no_more_than_alpha_when_nothing_changed(n: int, rate: float) -> None:
    rule = AlertRule("grounded", drop=True, alpha=0.05)
    windows = 2_000
    rng = np.random.default_rng(11)
    now, before = rng.binomial(n, rate, size=windows), rng.binomial(n, rate, size=windows)
    decisions = [
        evaluate_rule(rule, Counts(int(a), n - int(a)), Counts(int(b), n - int(b)))
        for a, b in zip(now, before, strict=True)
    ]
    slack = 4 * math.sqrt(0.05 * 0.95 / windows)
    assert sum(d.fired for d in decisions) / windows <= 0.05 + slack
    assert {d.test for d in decisions} == ({"fisher"} if n == 60 else {"z"})


def test_the_rule_comes_from_yaml() -> None:
    rule = AlertRule.from_yaml({"check": "grounded", "drop": True, "alpha": 0.01}, "alerts[1]")
    assert rule == AlertRule("grounded", drop=True, alpha=0.01)
    assert AlertRule.from_yaml({"check": "booked", "below": 0.9, "min_cases": 50}) == AlertRule(
        "booked", below=0.9, min_cases=50
    )
    assert rule.describe() == "grounded dropping from the previous window at alpha 0.01"
    assert BELOW.describe() == "availability_checked below 90% at alpha 0.05"
    # a floor shows the digits it was written with: 99.99%, never rounded up to 100%
    assert AlertRule("booked", below=0.9999).describe() == "booked below 99.99% at alpha 0.05"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("grounded", "monitor.yaml: alerts[1]: expected a mapping with check and below or drop"),
        (
            {"check": "a", "below": 0.9, "threshold": 1},
            "monitor.yaml: alerts[1].threshold: unknown field; expected one of check, below, "
            "drop, alpha, min_cases",
        ),
        (
            {"check": "a"},
            "monitor.yaml: alerts[1].below: expected below: RATE (a floor) or drop: true "
            "(against the last window)",
        ),
        (
            {"check": "a", "below": 0.9, "drop": True},
            "monitor.yaml: alerts[1].drop: give either below or drop: true, not both",
        ),
        (
            {"check": "a", "below": 90},
            "monitor.yaml: alerts[1].below: expected a rate between 0 and 1 (exclusive), got 90",
        ),
        (
            {"check": "a", "below": "90%"},
            "monitor.yaml: alerts[1].below: expected a rate between 0 and 1, got '90%'",
        ),
        (
            {"check": "a", "drop": "yes"},
            "monitor.yaml: alerts[1].drop: expected true or false, got 'yes'",
        ),
        (
            {"check": "a", "drop": True, "alpha": 0.7},
            "monitor.yaml: alerts[1].alpha: expected a significance level in (0, 0.5], got 0.7",
        ),
        (
            {"check": "a", "drop": True, "min_cases": True},
            "monitor.yaml: alerts[1].min_cases: expected a whole number of traces, got True",
        ),
        (
            {"check": "a", "drop": True, "min_cases": 0},
            "monitor.yaml: alerts[1].min_cases: expected at least 1, got 0",
        ),
        ({"check": " ", "drop": True}, "monitor.yaml: alerts[1].check: expected a check name"),
        ({"below": 0.9}, "monitor.yaml: alerts[1].check: expected the name of the check to watch"),
    ],
)
def test_a_bad_rule_is_one_line_naming_its_field(data: object, message: str) -> None:
    with pytest.raises(InputError) as raised:
        AlertRule.from_yaml(data, "alerts[1]", file="monitor.yaml")
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("rule", "window_s", "cases", "said"),
    [
        (
            BELOW,
            3_600,
            None,
            "fires falsely in at most 5% of windows when the rate holds (about 1.2 false alarms "
            "a day at 1-hour windows)",
        ),
        (
            BELOW,
            3_600,
            120,
            "fires falsely in at most 5% of windows when the rate holds: 2.97% at 120 traces a "
            "window, the exact test being discrete (about 0.71 false alarms a day at 1-hour "
            "windows)",
        ),
        (
            DROP,
            7 * 86_400,
            None,
            "fires falsely in at most about 1% of windows when the rate does not change (about "
            "one false alarm every 700 days at 7-day windows)",
        ),
        (
            DROP,
            300,
            None,
            "fires falsely in at most about 1% of windows when the rate does not change (about "
            "2.9 false alarms a day at 5-minute windows)",
        ),
    ],
)
def test_the_false_alarm_statement(
    rule: AlertRule, window_s: float, cases: int | None, said: str
) -> None:
    assert false_alarm_statement(rule, window_s, cases=cases) == said


def test_a_window_must_last() -> None:
    with pytest.raises(ValueError, match="window_s must be > 0"):
        false_alarm_statement(BELOW, 0)
