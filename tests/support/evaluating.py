"""Cases scored by an :class:`Evaluator` alone, with no suite, target or store: the unit a judge
or check test looks at (a whole run goes through :func:`checkweigh.run`)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from checkweigh.core import Case, CaseResult
from checkweigh.judges import JudgeModel, close_judge
from checkweigh.runs import Evaluator


def evaluate_all(
    evaluator: Evaluator,
    cases: Iterable[Case],
    *,
    concurrency: int = 8,
    judge: JudgeModel | None = None,
) -> list[CaseResult]:
    """Every case scored in one event loop, ``concurrency`` at once, in the cases' order;
    ``judge``, when given, is closed at the end inside that loop."""

    async def go() -> list[CaseResult]:
        slots = asyncio.Semaphore(concurrency)

        async def one(index: int, case: Case) -> CaseResult:
            async with slots:
                return await evaluator.aevaluate(case, index=index)

        try:
            return list(await asyncio.gather(*(one(i, c) for i, c in enumerate(cases))))
        finally:
            await close_judge(judge)

    return asyncio.run(go())
