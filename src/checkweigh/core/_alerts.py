"""Alert rules of a monitor: a check's pass rate in one window, tested against a floor
(``below``) or against the previous window (``drop``), with the chance of a false alarm said.

Pure: the caller counts a window's decided verdicts (passed, failed; not applicable and
errored left out) and sends what :func:`evaluate_rule` decides.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..errors import InputError
from ._stats import wilson_interval
from ._tails import attained_size, binomial_cdf, hypergeom_cdf, normal_lower

AlertState = Literal["fired", "quiet", "undecided"]
"""What a rule decided for a window: it fired, it held, or there was too little to test."""

AlertTest = Literal["binomial", "fisher", "z"]
"""The test behind a p-value: exact binomial (``below``), one-sided Fisher's exact test or the
pooled two-proportion z test (``drop``)."""

Z_MIN_CELL = 100
"""``drop`` uses the pooled z test once each window has at least this many passes and as many
failures; below that, Fisher's exact test. At that size the two agree to a few percent of the
p-value, and the z test costs nothing however large the windows grow."""

_FIELDS = ("check", "below", "drop", "alpha", "min_cases")


@dataclass(frozen=True, slots=True)
class AlertRule:
    """One alert of a monitor: ``check``'s pass rate significantly ``below`` a floor, or
    significantly lower than in the previous window (``drop``), at significance ``alpha``.

    Raises:
        InputError: not exactly one of ``below`` and ``drop``, or a value out of range (the
            error names the field).
    """

    check: str
    """The check whose pass rate is watched."""
    below: float | None = None
    """Fire when the rate is significantly below this rate, in (0, 1)."""
    drop: bool = False
    """Fire when the rate is significantly below the previous window's."""
    alpha: float = 0.05
    """Significance level, in (0, 0.5]: the most a window may fire when nothing is wrong."""
    min_cases: int = 20
    """Fewer decided verdicts than this in a window (either window, for ``drop``): the rule
    is not decided, and never fires."""

    def __post_init__(self) -> None:
        problem = _problem(self)
        if problem is not None:
            raise InputError(problem[1], field=problem[0])

    def describe(self) -> str:
        """The rule in words, e.g. ``grounded below 90% at alpha 0.05``."""
        floor = f"below {_pct(self.below)}" if self.below is not None else ""
        what = "dropping from the previous window" if self.drop else floor
        return f"{self.check} {what} at alpha {self.alpha:g}"

    @classmethod
    def from_yaml(
        cls, data: object, where: str = "alerts[0]", *, file: str | Path | None = None
    ) -> AlertRule:
        """A rule from its YAML mapping (``{check: grounded, drop: true, alpha: 0.01}``).

        Args:
            data: the mapping as YAML loaded it.
            where: the rule's place in its file, prefixed to the field an error names.
            file: the file, for errors.

        Raises:
            InputError: one line naming ``where.field`` and what was expected.
        """
        if not isinstance(data, Mapping):
            raise InputError(
                "expected a mapping with check and below or drop", file=file, field=where
            )
        for key in data:
            if key not in _FIELDS:
                raise InputError(
                    f"unknown field; expected one of {', '.join(_FIELDS)}",
                    file=file,
                    field=f"{where}.{key}",
                )
        problem = _typed(data)
        if problem is not None:
            raise InputError(problem[1], file=file, field=f"{where}.{problem[0]}")
        try:
            return cls(**{key: data[key] for key in _FIELDS if key in data})
        except InputError as exc:
            raise InputError(exc.message, file=file, field=f"{where}.{exc.field}") from None


def _typed(data: Mapping[object, object]) -> tuple[str, str] | None:
    """The first field of a YAML rule whose value has the wrong type, and what was expected."""
    if "check" not in data:
        return "check", "expected the name of the check to watch"
    number = (int, float)
    expected: dict[str, tuple[tuple[type, ...], str]] = {
        "check": ((str,), "a check name"),
        "below": (number, "a rate between 0 and 1"),
        "drop": ((bool,), "true or false"),
        "alpha": (number, "a significance level in (0, 0.5]"),
        "min_cases": ((int,), "a whole number of traces"),
    }
    for key, (types, what) in expected.items():
        value = data.get(key)
        if key in data and (
            not isinstance(value, types) or (bool not in types and isinstance(value, bool))
        ):
            return key, f"expected {what}, got {value!r}"
    return None


def _problem(rule: AlertRule) -> tuple[str, str] | None:
    """The first field of ``rule`` that is out of range, and what was expected."""
    if not rule.check.strip():
        return "check", "expected a check name"
    if rule.below is None and not rule.drop:
        return "below", "expected below: RATE (a floor) or drop: true (against the last window)"
    if rule.below is not None and rule.drop:
        return "drop", "give either below or drop: true, not both"
    if rule.below is not None and not 0.0 < rule.below < 1.0:
        return "below", f"expected a rate between 0 and 1 (exclusive), got {rule.below!r}"
    if not 0.0 < rule.alpha <= 0.5:
        return "alpha", f"expected a significance level in (0, 0.5], got {rule.alpha!r}"
    if rule.min_cases < 1:
        return "min_cases", f"expected at least 1, got {rule.min_cases!r}"
    return None


@dataclass(frozen=True, slots=True)
class Counts:
    """A check's decided verdicts in one window (not applicable and errored left out)."""

    passed: int
    """Verdicts that passed."""
    failed: int
    """Verdicts that failed."""

    def __post_init__(self) -> None:
        if self.passed < 0 or self.failed < 0:
            raise ValueError(f"counts must be >= 0, got {self.passed} passed, {self.failed} failed")

    @property
    def n(self) -> int:
        """How many verdicts were decided."""
        return self.passed + self.failed


class AlertDecision(BaseModel):
    """What one rule decided for one window, stored with the window and sent by webhook."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    state: AlertState
    """Fired, quiet, or undecided (too few decided verdicts, or no previous window)."""
    rate: float | None
    """The window's pass rate; None when nothing was decided."""
    interval: tuple[float, float] | None
    """The rate's 95% Wilson interval; None when nothing was decided."""
    p_value: float | None
    """One-sided p-value of the rule's test; None when undecided."""
    test: AlertTest | None
    """The test behind ``p_value``."""
    reason: str
    """One sentence for a person: the rate, its interval, the comparison and the p-value."""
    false_alarm_rate: float
    """The chance this window fires when nothing is wrong (the rate holds, or has not
    changed): ``alpha`` for the z test, and the exact attained size for the exact tests,
    which their discreteness keeps at or below ``alpha`` (for Fisher's, given both windows'
    sizes and their total passes). 0 when undecided: such a window never fires."""

    @property
    def fired(self) -> bool:
        """Whether the rule fired."""
        return self.state == "fired"


def evaluate_rule(
    rule: AlertRule, current: Counts, previous: Counts | None = None
) -> AlertDecision:
    """Decide ``rule`` on a window's counts (and the previous window's, for ``drop``).

    ``below`` tests H0 "rate >= below" exactly: p = P(K <= passed) for K ~ Binomial(n, below).
    ``drop`` tests H0 "rate now >= rate before" one-sided; see :data:`Z_MIN_CELL` for which test.
    The rule fires when p <= alpha.
    """
    n = current.n
    rate = current.passed / n if n else None
    interval = wilson_interval(current.passed, n) if n else None
    seen = f"{rule.check} passed {_rate_text(current)}"
    if n < rule.min_cases:
        reason = (
            f"{rule.check} has {n} decided trace{'s' * (n != 1)} in this window, fewer than "
            f"the {rule.min_cases} the rule needs"
        )
        return _undecided(rate, interval, reason)
    if rule.below is not None:
        floor = rule.below
        p = binomial_cdf(current.passed, n, floor)
        size = attained_size(lambda k: binomial_cdf(k, n, floor), 0, n, rule.alpha)
        verdict = "significantly" if p <= rule.alpha else "not significantly"
        reason = f"{seen}, {verdict} below {_pct(floor)} ({_p_text(p, rule.alpha)})"
        return _decided(rule, rate, interval, p, "binomial", reason, size)
    if previous is None:
        return _undecided(rate, interval, f"{seen}, with no previous window to compare with")
    if previous.n < rule.min_cases:
        reason = (
            f"{seen}; the previous window had {previous.n} decided, fewer than the "
            f"{rule.min_cases} the rule needs"
        )
        return _undecided(rate, interval, reason)
    p, test, size = _drop_test(current, previous, rule.alpha)
    verdict = "a significant drop" if p <= rule.alpha else "not a significant drop"
    name = "Fisher's exact test" if test == "fisher" else "pooled z test"
    reason = (
        f"{seen}, against {_rate_text(previous)} in the previous window: {verdict} "
        f"({_p_text(p, rule.alpha)}, {name})"
    )
    return _decided(rule, rate, interval, p, test, reason, size)


def _drop_test(current: Counts, previous: Counts, alpha: float) -> tuple[float, AlertTest, float]:
    """(p-value, test, false-alarm rate) of H0 "current rate >= previous rate"."""
    cells = (current.passed, current.failed, previous.passed, previous.failed)
    total, passed = current.n + previous.n, current.passed + previous.passed
    if min(cells) >= Z_MIN_CELL:
        pooled = passed / total
        se = math.sqrt(pooled * (1 - pooled) * (1 / current.n + 1 / previous.n))
        z = (current.passed / current.n - previous.passed / previous.n) / se
        return normal_lower(z), "z", alpha
    # conditional on both windows' sizes and their total passes, the current window's passes
    # are hypergeometric when the rate did not change: Fisher's exact test
    lo, hi = max(0, current.n - (total - passed)), min(current.n, passed)

    def cdf(x: int) -> float:
        return hypergeom_cdf(x, total, passed, current.n)

    return cdf(current.passed), "fisher", attained_size(cdf, lo, hi, alpha)


def _decided(
    rule: AlertRule,
    rate: float | None,
    interval: tuple[float, float] | None,
    p: float,
    test: AlertTest,
    reason: str,
    size: float,
) -> AlertDecision:
    return AlertDecision(
        state="fired" if p <= rule.alpha else "quiet",
        rate=rate,
        interval=interval,
        p_value=p,
        test=test,
        reason=reason,
        false_alarm_rate=size,
    )


def _undecided(
    rate: float | None, interval: tuple[float, float] | None, reason: str
) -> AlertDecision:
    return AlertDecision(
        state="undecided",
        rate=rate,
        interval=interval,
        p_value=None,
        test=None,
        reason=reason,
        false_alarm_rate=0.0,
    )


def false_alarm_statement(rule: AlertRule, window_s: float, *, cases: int | None = None) -> str:
    """How often ``rule`` fires when nothing is wrong, for a monitor with ``window_s`` windows,
    e.g. "fires falsely in at most 5% of windows when the rate holds (about 1.2 false alarms a
    day at 1-hour windows)".

    Args:
        rule: the rule.
        window_s: the monitor's window, in seconds.
        cases: decided verdicts a window typically holds: for a ``below`` rule the statement
            then gives the exact test's attained size, lower than alpha by its discreteness.

    Raises:
        ValueError: ``window_s`` is not positive.
    """
    if not window_s > 0:
        raise ValueError(f"window_s must be > 0, got {window_s!r}")
    level = rule.alpha
    held = "the rate does not change" if rule.drop else "the rate holds"
    # the z test that large drop windows use holds alpha only approximately: "at most about"
    bound = "at most about" if rule.drop else "at most"
    said = f"fires falsely in {bound} {_pct(level)} of windows when {held}"
    if cases is not None and rule.below is not None and cases >= rule.min_cases:
        floor = rule.below
        level = attained_size(lambda k: binomial_cdf(k, cases, floor), 0, cases, rule.alpha)
        said += f": {_pct(level, 3)} at {cases} traces a window, the exact test being discrete"
    per_day = level * 86_400 / window_s
    if per_day >= 0.1:
        often = f"about {_num(per_day)} false alarm{'s' * (_num(per_day) != '1')} a day"
    elif per_day > 0:
        often = f"about one false alarm every {_num(1 / per_day)} days"
    else:
        often = "never a false alarm"
    return f"{said} ({often} at {_window_text(window_s)} windows)"


def _window_text(window_s: float) -> str:
    for unit, seconds in (("day", 86_400), ("hour", 3_600), ("minute", 60)):
        if window_s >= seconds and window_s % seconds == 0:
            return f"{_num(window_s / seconds)}-{unit}"
    return f"{_num(window_s)}-second"


def _num(value: float) -> str:
    """A count in words' precision: two significant digits, no exponent."""
    if value >= 100:
        return f"{value:,.0f}"
    return f"{float(f'{value:.2g}'):g}"


def _pct(rate: float, digits: int = 10) -> str:
    """A rate as a percentage with no more digits than it needs (90%, 99.99%, 0.1%): all the
    digits a user wrote, by default; ``digits`` significant ones for a computed rate."""
    return f"{float(f'{rate * 100:.{digits}g}'):g}%"


def _rate_text(counts: Counts) -> str:
    """``71% (62%-78%) of 120 traces``, with the digits that keep the three apart."""
    n = counts.n
    if n == 0:
        return "no decided traces"
    low, high = wilson_interval(counts.passed, n)
    rate = counts.passed / n
    for digits in range(4):
        shown = [f"{x * 100:.{digits}f}" for x in (rate, low, high)]
        apart = len(set(shown)) == 3 or not low < rate < high
        # only a rate of exactly 0 or 1 shows as 0% or 100%
        edges = all(
            float(t) not in (0.0, 100.0) or x in (0.0, 1.0)
            for t, x in zip(shown, (rate, low, high), strict=True)
        )
        if apart and edges:
            break
    return f"{shown[0]}% ({shown[1]}%-{shown[2]}%) of {n} trace{'s' * (n != 1)}"


def _p_text(p: float, alpha: float) -> str:
    shown = "p < 0.0001" if p < 0.0001 else f"p = {float(f'{p:.2g}'):g}"
    return f"{shown}, alpha {alpha:g}"
