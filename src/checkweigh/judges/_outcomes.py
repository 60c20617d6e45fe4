"""Expected-outcome checklists: statements a case lists about what should have happened,
each checked by the judge on its own (yes/no with a justification). The check passes only
when every statement holds."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

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
from ._model import JudgeModel

OUTCOME_QUESTION = "Is this statement about the outcome of the run true? Statement: {statement}"


@dataclass(frozen=True)
class ExpectedOutcomesCheck:
    """Judge each statement at ``path`` (a list of strings) against the case, concurrently."""

    judge: JudgeModel
    path: str = "ground_truth.expected_outcomes"
    formatter: TraceFormatter = field(default=DEFAULT_FORMATTER)

    @property
    def version(self) -> str:
        """The version of the checks it is made of."""
        return f"expected-outcomes/1+{self.formatter.ident}"

    async def evaluate(self, case: Case) -> Verdict:
        """Passed when every statement holds; failed naming those that do not."""
        statements = FieldPath.parse(self.path).get(case, None)
        if not statements:
            return not_applicable(f"no expected outcomes at {self.path}")
        if not isinstance(statements, list) or not all(isinstance(s, str) for s in statements):
            return errored(f"{self.path} must be a list of statements", reason="bad checklist")
        checks = [
            JudgeCheck(
                question=OUTCOME_QUESTION.format(statement=s),
                judge=self.judge,
                formatter=self.formatter,
            )
            for s in statements
        ]
        verdicts = await asyncio.gather(*(c.evaluate(case) for c in checks))
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
