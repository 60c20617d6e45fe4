"""A suite run into a given store through the one engine (:func:`checkweigh.run`), for tests
that read the stored run back: the results stay in the store, as ``checkweigh run`` keeps
them (so worker processes may store theirs themselves)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import checkweigh as cw
from checkweigh.core import Case, CaseResult
from checkweigh.judges import JudgeModel
from checkweigh.runs import JudgeSetup, RunOptions, RunOutcome, StopToken
from checkweigh.runs.executors import Executor
from checkweigh.store import Store
from checkweigh.suites import Suite


def run_into(
    suite: Suite | Path,
    store: Store,
    *,
    cases: Iterable[Case] | None = None,
    repeat: int | None = None,
    concurrency: int | None = None,
    judge: JudgeModel | None = None,
    judge_batch: bool = False,
    executor: Executor | None = None,
    on_result: Callable[[CaseResult], None] | None = None,
    stop: StopToken | None = None,
) -> RunOutcome:
    """How the run ended (``RunStopped`` raised as the engine raises it)."""
    options = RunOptions(
        repeat=repeat, concurrency=concurrency, judge=JudgeSetup(batch=judge_batch)
    )
    report = cw.run(
        suite,
        options,
        cases=cases,
        store=store,
        judge=judge,
        executor=executor,
        on_result=on_result,
        stop=stop,
        keep_results=False,
    )
    return report.outcome
