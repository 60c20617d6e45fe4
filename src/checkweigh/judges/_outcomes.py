"""Expected-outcome checklists: statements a case lists about what should have happened,
each checked by the judge on its own (yes/no with a justification). The check passes only
when every statement holds."""

from __future__ import annotations

import asyncio
from typing import ClassVar, Literal

from pydantic import Field, field_validator

from ..checks import parse_path
from ..core import (
    Case,
    FieldPath,
    Verdict,
    VerdictState,
    errored,
    failed,
    not_applicable,
    passed,
)
from ._binary import JudgeCheck
from ._formatter import DEFAULT_FORMATTER, TraceFormatter
from ._judged import JudgedCheck
from ._model import JudgeModel

OUTCOME_QUESTION = "Is this statement about the outcome of the run true? Statement: {statement}"


class ExpectedOutcomesCheck(JudgedCheck):
    """``type: expected_outcomes``: judge each statement at ``path`` (a list of strings)
    against the case, concurrently; passes only when all of them hold. Besides its weight in
    a rubric, it decides the case's pass/fail (see the suite's thresholds)."""

    decides_pass: ClassVar[bool] = True

    type: Literal["expected_outcomes"] = "expected_outcomes"
    path: str = "ground_truth.expected_outcomes"
    """Where each case keeps its list of statements."""
    formatter: TraceFormatter = Field(default=DEFAULT_FORMATTER, exclude=True)
    """How the case is rendered for the judge (set from Python, not from a suite file)."""

    @field_validator("path")
    @classmethod
    def _valid_path(cls, value: str) -> str:
        return parse_path(value)

    @property
    def version(self) -> str:
        """The version of the checks it is made of."""
        return f"expected-outcomes/1+{self.formatter.ident}"

    async def evaluate(self, case: Case, judge: JudgeModel) -> Verdict:
        """Passed when every statement holds; failed naming those that do not."""
        statements = FieldPath.parse(self.path).get(case, None)
        if not statements:
            return not_applicable(f"no expected outcomes at {self.path}")
        if not isinstance(statements, list) or not all(isinstance(s, str) for s in statements):
            return errored(f"{self.path} must be a list of statements", reason="bad checklist")
        checks = [
            JudgeCheck(question=OUTCOME_QUESTION.format(statement=s), formatter=self.formatter)
            for s in statements
        ]
        verdicts = await asyncio.gather(*(c.evaluate(case, judge) for c in checks))
        broken = [
            f"{s!r} ({v.error or v.reason})"
            for s, v in zip(statements, verdicts, strict=True)
            if v.state is VerdictState.ERRORED
        ]
        if broken:
            return errored("; ".join(broken), reason=f"{len(broken)} outcome(s) not judged")
        missed = [
            f"{s!r}: {v.reason}" for s, v in zip(statements, verdicts, strict=True) if not v.passed
        ]
        if missed:
            head = f"{len(missed)} of {len(statements)} expected outcomes not met: "
            return failed(head + "; ".join(missed))
        return passed(f"all {len(statements)} expected outcomes met")
