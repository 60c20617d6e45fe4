"""The adaptive samples rule's arithmetic: its flip chance, the exact rerun of the rule
against the rule played out at random, and the noise estimate on stopped splits."""

from __future__ import annotations

import random

import pytest

from checkweigh.core import AutoSamples, adaptive_rerun, answer_noise_mle, majority_flip


def play(rule: AutoSamples, p: float, rng: random.Random) -> tuple[int, int]:
    """(usual answers, other answers) of one verdict asked until ``rule`` settles it."""
    usual = other = 0
    while not rule.settled(usual, other, usual + other):
        if rng.random() < p:
            other += 1
        else:
            usual += 1
    return usual, other


def test_the_flip_chance_is_the_posterior_mixture_of_two_binomials() -> None:
    rule = AutoSamples()  # max 9, error 0.05, noise 0.1
    # 2 yes of 2: w = 0.81 / 0.82; the leader loses unless at least 3 of the 7 left say yes
    w = 0.81 / 0.82
    lose = [sum(_pmf(7, q, x) for x in range(3)) for q in (0.9, 0.1)]
    assert rule.flip_chance(2, 0, 2) == pytest.approx(w * lose[0] + (1 - w) * lose[1])
    assert rule.flip_chance(1, 1, 2) == 1.0  # a tie is never settled
    assert rule.flip_chance(5, 0, 5) == 0.0  # 5 of 9: the majority is decided
    assert [rule.settled(*s) for s in [(2, 0, 2), (2, 1, 3), (3, 1, 4), (0, 0, 9)]] == [
        True,
        False,
        True,
        True,
    ]


def _pmf(n: int, q: float, x: int) -> float:
    from math import comb

    return comb(n, x) * q**x * (1 - q) ** (n - x)


@pytest.mark.parametrize("p", [0.05, 0.2, 0.35])
def test_the_exact_rerun_matches_the_rule_played_out(p: float) -> None:
    rule = AutoSamples(max=7)
    flip, tie, calls = adaptive_rerun(p, rule)
    rng = random.Random(int(p * 100))
    played = [play(rule, p, rng) for _ in range(20_000)]
    assert tie == 0.0
    se = (flip * (1 - flip) / len(played)) ** 0.5
    assert sum(o > u for u, o in played) / len(played) == pytest.approx(flip, abs=4 * se + 1e-9)
    assert sum(u + o for u, o in played) / len(played) == pytest.approx(calls, rel=0.02)


def test_a_fixed_budget_without_early_stops_is_the_binomial_majority() -> None:
    rule = AutoSamples(max=5, error=1e-9)  # only a decided majority stops it early
    flip, _, calls = adaptive_rerun(0.2, rule)
    assert flip == pytest.approx(majority_flip(0.2, 5)[0])
    assert 3 < calls < 5


@pytest.mark.parametrize("p", [0.05, 0.15, 0.3])
def test_the_noise_of_stopped_splits_is_measured_without_the_stopping_bias(p: float) -> None:
    rng = random.Random(3)
    splits = []
    for _ in range(20_000):
        usual, other = play(AutoSamples(), p, rng)
        splits.append((usual, other) if rng.random() < 0.7 else (other, usual))
    naive = sum(min(y, n) for y, n in splits) / sum(y + n for y, n in splits)
    measured = answer_noise_mle(splits)
    assert measured == pytest.approx(p, abs=0.005)
    assert naive < 0.95 * p  # stopping once two answers agree hides disagreements
    assert abs(measured - p) < (p - naive) / 2


def test_splits_with_nothing_to_measure_give_zero() -> None:
    assert answer_noise_mle([]) == 0.0
    assert answer_noise_mle([(1, 0), (0, 1), (0, 0)]) == 0.0
    assert answer_noise_mle([(2, 0), (0, 2), (3, 0)]) == pytest.approx(0.0, abs=1e-6)
