"""One run from start to end: snapshot, evaluate, persist as cases finish, summarize.

Whatever stops a run early (Ctrl-C, SIGTERM, a bad case in the file) leaves every finished
case stored and the run marked incomplete.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..core import CaseResult, PassPolicy, RunAggregator, RunSummary, apply_gates
from ..judges import (
    NO_JUDGE_HINT,
    CachedJudge,
    JudgeModel,
    MeteredJudge,
    judge_notes,
    judge_settings,
)
from ..store import ResultWriter, RunStatus, Store
from ..suites import Suite, iter_cases
from ._engine import Evaluator, judge_checks, run_cases
from ._target import AgentTarget


class RunStopped(Exception):
    """A run that ended early. It was stored as incomplete; ``cause`` says why."""

    def __init__(self, outcome: RunOutcome, cause: BaseException) -> None:
        super().__init__(f"run {outcome.run_id} stopped: {cause!r}")
        self.outcome = outcome
        self.cause = cause


@dataclass(frozen=True)
class RunOutcome:
    """How a run ended."""

    run_id: str
    status: RunStatus
    summary: RunSummary


def execute(
    suite: Suite,
    store: Store,
    *,
    repeat: int = 1,
    concurrency: int | None = None,
    on_result: Callable[[CaseResult], None] | None = None,
    judge: JudgeModel | None = None,
    judge_batch: bool = False,
    graded_weights: Mapping[str, float] | None = None,
    policy: PassPolicy | None = None,
) -> RunOutcome:
    """Run ``suite``, storing each result as it finishes, and return the gated summary.

    Raises:
        RunStopped: anything that ended the run early (Ctrl-C, a bad case in the file, ...),
            raised after the finished cases were stored and the run marked incomplete.
    """
    target = None
    if suite.target is not None:
        target = AgentTarget.load(suite.target.agent, suite.base_dir, suite.target.timeout_s)
    evaluator = Evaluator.from_suite(suite, judge, batch=judge_batch, graded_weights=graded_weights)
    policy = policy or suite.policy
    aggregator = RunAggregator(suite.rubrics, keep_case_scores=repeat > 1, policy=policy)
    notes = _notes(suite, judge, judge_batch)
    config = {
        **suite.snapshot(),
        "judge": judge.name if judge is not None else None,
        "judge_mode": "batch" if judge_batch else "single",
        "judge_options": judge_settings(judge),
        "graded_weights": dict(graded_weights or {}),
        "thresholds": policy.snapshot(),
    }
    run_id = store.create_run(suite.name, str(suite.path), config, repeat)

    def summarize() -> RunSummary:
        summary = apply_gates(aggregator.summary(), suite.gates)
        stats = judge.stats() if isinstance(judge, CachedJudge | MeteredJudge) else None
        return summary.model_copy(update={"notes": notes + judge_notes(judge), "judge": stats})

    limit = concurrency or (suite.target.concurrency if suite.target else 8)
    with ResultWriter(store, run_id) as writer:

        def handle(result: CaseResult) -> None:
            writer.add(result)
            aggregator.add(result)
            if on_result is not None:
                on_result(result)

        try:
            run_cases(
                evaluator,
                iter_cases(suite.cases_path),
                handle,
                target=target,
                repeat=repeat,
                concurrency=limit,
                judge=judge,
            )
        except BaseException as exc:
            writer.flush()
            summary = summarize()
            store.finish_run(run_id, RunStatus.INCOMPLETE, summary)
            raise RunStopped(RunOutcome(run_id, RunStatus.INCOMPLETE, summary), exc) from exc
        writer.flush()
    summary = summarize()
    store.finish_run(run_id, RunStatus.COMPLETE, summary)
    return RunOutcome(run_id, RunStatus.COMPLETE, summary)


def _notes(suite: Suite, judge: JudgeModel | None, batch: bool) -> list[str]:
    skipped = judge_checks(suite.checks) if judge is None else []
    notes = [n for r in suite.rubrics if (n := r.normalization_note())]
    if judge is not None and judge_checks(suite.checks):
        notes.append(
            "judge mode: batch (the yes/no judge checks of a case share one checklist call)"
            if batch
            else "judge mode: single (one call per judge check)"
        )
    if skipped:
        notes.append(
            f"judge checks {', '.join(skipped)} were skipped ({NO_JUDGE_HINT}); "
            "rubrics that use them are renormalized over the checks that ran"
        )
    return notes
