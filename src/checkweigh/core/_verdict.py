"""A check's verdict: one of four states, always with a reason."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, NamedTuple


class VerdictState(StrEnum):
    """How a check ended. An errored check is never read as failed."""

    PASSED = "passed"
    FAILED = "failed"
    NOT_APPLICABLE = "not_applicable"
    ERRORED = "errored"


class Verdict(NamedTuple):
    """The answer of one check on one case (an immutable value; a tuple for speed)."""

    state: VerdictState
    reason: str = ""
    error: str | None = None

    @property
    def passed(self) -> bool:
        """True only for a passed verdict."""
        return self.state is VerdictState.PASSED

    @property
    def measures(self) -> dict[str, float]:
        """Numbers behind the verdict (a metric's score, a judge's flip rate); empty here."""
        return {}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form: its stored record (:class:`~checkweigh.core.VerdictRecord`)."""
        from ._result_records import VerdictRecord

        return VerdictRecord.of(self).to_dict()

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Verdict:
        """Rebuild a verdict stored with :meth:`to_dict`."""
        from ._result_records import VerdictRecord

        return VerdictRecord.read(data).verdict()


class MeasuredVerdict(Verdict):
    """A verdict with the numbers it was decided from. It equals the plain verdict with the
    same state, reason and error: the numbers are there to be stored and analysed."""

    _measures: dict[str, float]

    @property
    def measures(self) -> dict[str, float]:
        """The numbers, by name."""
        return self._measures


def measured(verdict: Verdict, measures: dict[str, float]) -> Verdict:
    """``verdict`` carrying ``measures`` (stored with it in every result record)."""
    out = MeasuredVerdict(*verdict)
    out._measures = {k: float(v) for k, v in measures.items()}
    return out


# Verdicts are made once per check per case: build the tuple directly (C level) instead of
# through the generated Python __new__ of the NamedTuple.
_new = tuple.__new__
_PASSED = VerdictState.PASSED
_FAILED = VerdictState.FAILED
_NA = VerdictState.NOT_APPLICABLE


def passed(reason: str = "") -> Verdict:
    """A passed verdict."""
    return _new(Verdict, (_PASSED, reason, None))


def failed(reason: str) -> Verdict:
    """A failed verdict; the reason says what was wrong."""
    return _new(Verdict, (_FAILED, reason, None))


def not_applicable(reason: str) -> Verdict:
    """The check does not apply to this case."""
    return _new(Verdict, (_NA, reason, None))


def errored(error: str, reason: str = "check raised an error") -> Verdict:
    """The check could not decide; ``error`` carries the exception text."""
    return Verdict(VerdictState.ERRORED, reason, error)


def from_bool(value: bool, yes: str = "", no: str = "") -> Verdict:
    """Turn a plain boolean into a verdict."""
    return passed(yes) if value else failed(no or "check returned False")
