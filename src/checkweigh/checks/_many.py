"""Judging a path that reaches many values (``trace[kind=assistant].content``): any or all."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from ..core import Case, FieldPath, Verdict, VerdictState, failed, passed

Match = Literal["any", "all"]
"""Whether some value (``any``) or every value (``all``) at a many-valued path must pass."""

ValueRunner = Callable[[Any], Verdict]
"""A check's logic applied to one ``(case, value)`` pair."""


_UNDECIDED = (VerdictState.NOT_APPLICABLE, VerdictState.ERRORED)


def value_of(pair: tuple[Case, Any]) -> Any:
    """The value of a ``(case, value)`` pair: the getter a check is built with for many values."""
    return pair[1]


def relabel(reason: str, path: str, where: str) -> str:
    """A value's reason told about the place it was found: ``trace[3].content lacks …``."""
    if reason.startswith(path):
        return where + reason[len(path) :]
    return f"{where}: {reason}"


def over_values(path: FieldPath, match: Match, judge: ValueRunner) -> Callable[[Case], Verdict]:
    """A runner that applies ``judge`` to each value at ``path`` and combines the verdicts.

    ``any`` passes on the first passing value and names it; ``all`` fails on the first failing
    value and names it. A path that reaches no value fails as missing; a not-applicable answer
    (no expectation in the case) is the same for every value and is returned as it is.
    """
    text = path.text
    nothing = failed(f"{text} matched nothing")

    def run(case: Case) -> Verdict:
        found = path.locate(case)
        if not found:
            return nothing
        first_failure: tuple[str, Verdict] | None = None
        for where, value in found:
            verdict = judge((case, value))
            if verdict.state in _UNDECIDED:
                return verdict
            if verdict.state is VerdictState.PASSED:
                if match == "any":
                    return passed(relabel(verdict.reason, text, where))
            elif match == "all":
                reason = relabel(verdict.reason, text, where)
                return failed(f"{reason} (match: all, {len(found)} values)")
            elif first_failure is None:
                first_failure = (where, verdict)
        if first_failure is None:
            return passed(f"all {len(found)} values at {text} pass")
        where, verdict = first_failure
        return failed(
            f"none of {len(found)} values at {text} passes; "
            f"first: {relabel(verdict.reason, text, where)}"
        )

    return run
