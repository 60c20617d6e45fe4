"""Batch mode: a suite's yes/no judge checks put to the judge in one checklist call per case.

The batch is one check that answers every question's verdict by the name of the check it
came from; a question whose ``when`` does not hold for a case is not asked, and a checklist
answer that does not fit errors every question asked.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core import Case, Condition, Verdict, failed, not_applicable, passed
from ._answers import AnswerError, Checklist, schema_of
from ._ask import ask
from ._binary import EVALUATOR, JudgeCheck
from ._formatter import DEFAULT_FORMATTER, TraceFormatter
from ._judged import judge_failure
from ._model import JudgeError, JudgeModel, JudgeRequest, Message, joined


@dataclass(frozen=True, slots=True)
class Question:
    """One yes/no judge check of a batch, under its suite name, with its ``when``."""

    name: str
    check: JudgeCheck
    when: tuple[Condition, ...] = ()


@dataclass(frozen=True)
class QuestionBatch:
    """Yes/no judge checks asked together: one call per case, a verdict per question."""

    questions: tuple[Question, ...]
    formatter: TraceFormatter = field(default=DEFAULT_FORMATTER)

    @property
    def version(self) -> str:
        """Batch mode and the formatter."""
        return f"judge-batch/1+{self.formatter.ident}"

    def verdict_names(self) -> tuple[str, ...]:
        """The questions' check names: the batch answers for each of them."""
        return tuple(q.name for q in self.questions)

    def request(self, case: Case, asked: list[JudgeCheck]) -> JudgeRequest:
        """The checklist request for ``case``, asking ``asked`` in order."""
        lines = ["Answer each numbered question about the run below, independently."]
        for i, check in enumerate(asked, start=1):
            lines.append(f"{i}. {check.question}")
            if check.rubric:
                lines.append(f"   Guidance: {check.rubric}")
        shared = len(lines)
        lines.append(self.formatter.format(case))
        lines.append(
            'Reply as {"answers": [{"index": 1, "verdict": "yes" or "no", "reason": "..."}]} '
            "with every question exactly once."
        )
        user, prefix = joined(lines, shared)
        return JudgeRequest(
            messages=(
                Message(role="system", content=EVALUATOR),
                Message(role="user", content=user),
            ),
            shared_prefix=prefix,
            schema_name="checklist",
            json_schema=schema_of(Checklist),
            max_tokens=200 + 150 * len(asked),
            tags={"check": "judge-batch/1", "formatter": self.formatter.ident},
        )

    async def evaluate(self, case: Case, judge: JudgeModel) -> dict[str, Verdict]:
        """Every question's verdict by its check's name, from one checklist call."""
        verdicts: dict[str, Verdict] = {}
        asked: list[Question] = []
        for q in self.questions:
            unmet = next((c for c in q.when if not c.test(case)), None)
            if unmet is None:
                asked.append(q)
            else:  # the same verdict the question's own guard would give
                verdicts[q.name] = not_applicable(f"not {unmet.describe()}")
        if not asked:
            return verdicts
        n = len(asked)
        try:
            request = self.request(case, [q.check for q in asked])
            checklist = await ask(judge, request, Checklist, lambda c: c.in_order(n))
        except (JudgeError, AnswerError) as exc:
            return verdicts | dict.fromkeys((q.name for q in asked), judge_failure(exc))
        for q, a in zip(asked, checklist.in_order(n), strict=True):
            verdicts[q.name] = passed(a.reason) if a.verdict == "yes" else failed(a.reason)
        return verdicts
