"""Batch mode: all yes/no judge checks of one case put to the judge in one checklist call.

Each check keeps its own verdict and reason; the call is made once per case, by whichever of
the case's checks asks first, and the others wait for its answer.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from ..core import Case, Condition, Verdict, errored, failed, passed
from ..core._conditions import all_hold
from ._answers import AnswerError, Checklist, schema_of
from ._ask import ask
from ._binary import SYSTEM, JudgeCheck
from ._formatter import DEFAULT_FORMATTER, TraceFormatter
from ._model import JudgeError, JudgeModel, JudgeRequest, Message


@dataclass
class ChecklistBatch:
    """The questions of a suite's judge checks, asked together for each case."""

    judge: JudgeModel
    checks: list[JudgeCheck]
    guards: list[tuple[Condition, ...]] = field(default_factory=list)
    """Each check's ``when`` conditions: a question is asked only where they hold."""
    formatter: TraceFormatter = field(default=DEFAULT_FORMATTER)
    _pending: dict[int, asyncio.Task[dict[int, Verdict]]] = field(default_factory=dict, repr=False)
    _left: dict[int, int] = field(default_factory=dict, repr=False)

    def applicable(self, case: Case) -> list[int]:
        """The positions of the questions whose guards hold for ``case``."""
        if not self.guards:
            return list(range(len(self.checks)))
        return [i for i, when in enumerate(self.guards) if all_hold(when, case)]

    def request(self, case: Case, positions: list[int]) -> JudgeRequest:
        """The checklist request for ``case``, asking the questions at ``positions``."""
        asked = [self.checks[p] for p in positions]
        lines = ["Answer each numbered question about the run below, independently."]
        for i, check in enumerate(asked, start=1):
            lines.append(f"{i}. {check.question}")
            if check.rubric:
                lines.append(f"   Guidance: {check.rubric}")
        lines.append(self.formatter.format(case))
        lines.append(
            'Reply as {"answers": [{"index": 1, "verdict": "yes" or "no", "reason": "..."}]} '
            "with every question exactly once."
        )
        return JudgeRequest(
            messages=(
                Message(role="system", content=SYSTEM.split(" Reply with")[0]),
                Message(role="user", content="\n\n".join(lines)),
            ),
            schema_name="checklist",
            json_schema=schema_of(Checklist),
            max_tokens=200 + 150 * len(asked),
            tags={"check": "judge-batch/1", "formatter": self.formatter.ident},
        )

    async def _ask_all(self, case: Case, positions: list[int]) -> dict[int, Verdict]:
        try:
            n = len(positions)
            request = self.request(case, positions)
            checklist = await ask(self.judge, request, Checklist, lambda c: c.in_order(n))
            answers = checklist.in_order(n)
        except JudgeError as exc:
            return dict.fromkeys(positions, errored(str(exc), reason="judge call failed"))
        except AnswerError as exc:
            return dict.fromkeys(positions, errored(str(exc), reason="judge answer invalid"))
        return {
            p: passed(a.reason) if a.verdict == "yes" else failed(a.reason)
            for p, a in zip(positions, answers, strict=True)
        }

    async def verdict(self, case: Case, position: int) -> Verdict:
        """The verdict of question ``position`` for ``case``; one call per case in all."""
        key = id(case)  # the engine passes the same Case object to all of a case's checks
        task = self._pending.get(key)
        if task is None:
            positions = self.applicable(case)
            task = asyncio.get_running_loop().create_task(self._ask_all(case, positions))
            self._pending[key] = task
            self._left[key] = len(positions)
        try:
            return (await task)[position]
        finally:
            self._left[key] -= 1
            if not self._left[key]:  # every check of this case has its answer
                del self._pending[key], self._left[key]


@dataclass(frozen=True)
class BatchedQuestion:
    """One judge check answered through its suite's checklist call."""

    batch: ChecklistBatch
    position: int

    @property
    def version(self) -> str:
        """Batch mode and the formatter."""
        return f"judge-batch/1+{self.batch.formatter.ident}"

    async def evaluate(self, case: Case) -> Verdict:
        """This question's verdict."""
        return await self.batch.verdict(case, self.position)


def batch_checks(
    judge: JudgeModel,
    checks: list[JudgeCheck],
    guards: list[tuple[Condition, ...]] | None = None,
) -> list[BatchedQuestion]:
    """The checks rewired to share one checklist call per case (``guards``: their ``when``)."""
    batch = ChecklistBatch(judge, list(checks), list(guards or []))
    return [BatchedQuestion(batch, i) for i in range(len(checks))]
