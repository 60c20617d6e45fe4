"""``/api/runs/{id}/results``: a run's case results, a page at a time, and one in full."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, Field
from starlette.requests import Request

from ..core import CaseResult, CaseState, JudgeExchange, OutcomeClass, PassPolicy, VerdictState
from ..store import Store, result_detail
from ._case_index import CaseFilter, CaseIndex, CaseRow, select_rows
from ._deps import case_index, check_slot, no_case, run_of, store_of
from ._params import CASE_ID, MAX_COUNT

router = APIRouter(tags=["results"])
StoreDep = Annotated[Store, Depends(store_of)]


class RubricScore(BaseModel):
    """One rubric's score of one execution."""

    status: str
    """scored, or why not."""
    score: float | None
    """0-1 (None when not scored)."""
    outcome: OutcomeClass | None
    """The outcome class."""


class ResultRow(BaseModel):
    """One execution in the results list."""

    case_id: str
    """The case's id (data, exactly as stored)."""
    repeat: int
    """Which execution of the case (from 0)."""
    position: int
    """The case's position in its cases file."""
    state: CaseState
    """Pass, fail or errored, as the run's case pass policy decides."""
    score: float | None
    """The case score (0-100)."""
    errored: bool
    """The agent or a check errored."""
    latency_ms: float | None
    """How long the agent took."""
    rubrics: dict[str, RubricScore]
    """Score and outcome per rubric."""
    verdicts: dict[str, VerdictState]
    """Each check's state."""


class ResultPage(BaseModel):
    """A page of a run's results, in input order."""

    run: str
    """The run's id."""
    total: int
    """How many results match the filters in all."""
    limit: int
    """Results per page."""
    offset: int
    """Results skipped before this page."""
    items: list[ResultRow]
    """The results of this page."""


class VerdictOut(BaseModel):
    """One check's verdict on one execution."""

    state: VerdictState
    """passed, failed, not_applicable or errored."""
    reason: str
    """Why (data: it may quote the agent)."""
    error: str | None = None
    """What went wrong, for an errored verdict."""
    measures: dict[str, float] | None = None
    """What the check measured, when it records measures."""


class ResultDetail(BaseModel):
    """One execution with every verdict."""

    run: str
    """The run's id."""
    case_id: str
    """The case's id."""
    repeat: int
    """Which execution (from 0)."""
    position: int
    """The case's position in its cases file."""
    state: CaseState
    """The case verdict."""
    score: float | None
    """The case score (0-100)."""
    reason: str
    """Why it passed or failed."""
    latency_ms: float | None
    """How long the agent took."""
    agent_error: str | None
    """The agent's error, when it failed."""
    rubrics: dict[str, RubricScore]
    """Score and outcome per rubric."""
    verdicts: dict[str, VerdictOut]
    """Every check's verdict."""
    case: dict[str, Any] | None = None
    """The case as evaluated: input, trace (every step: messages, tool calls with arguments
    and results, errors, timings), final state, ground truth, metadata. None when the run was
    stored without it (uploaded, or stored before checkweigh kept cases)."""
    judge_exchanges: list[JudgeExchange] = Field(default_factory=list)
    """Every judge call behind the verdicts, in order: the check, the prompt, the reply, the
    model, tokens, latency and whether the cache answered."""


def _rubrics(r: CaseResult) -> dict[str, RubricScore]:
    return {
        name: RubricScore(status=e.status.value, score=e.score, outcome=e.outcome)
        for name, e in r.results.items()
    }


def _row(index: CaseIndex, row: CaseRow) -> ResultRow:
    return ResultRow(
        case_id=row.case_id,
        repeat=row.repeat,
        position=row.position,
        state=row.state,
        score=row.score,
        errored=row.errored,
        latency_ms=row.latency_ms,
        rubrics={
            name: RubricScore(status=cell.status, score=cell.score, outcome=cell.outcome)
            for name, cell in zip(index.rubrics, row.rubrics, strict=True)
            if cell is not None
        },
        verdicts={
            name: state
            for name, state in zip(index.checks, row.verdicts, strict=True)
            if state is not None
        },
    )


@router.get("/runs/{run_id}/results")
def list_results(
    request: Request,
    store: StoreDep,
    run_id: str,
    state: Annotated[CaseState | None, Query(description="Only cases in this state.")] = None,
    outcome: Annotated[
        OutcomeClass | None, Query(description="Only cases with this outcome in any rubric.")
    ] = None,
    failed_check: Annotated[
        str | None, Query(description="Only cases where this check failed.")
    ] = None,
    errored: Annotated[bool | None, Query(description="Only (or no) errored cases.")] = None,
    limit: Annotated[int, Query(ge=1, le=500, description="Results per page.")] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_COUNT, description="Results to skip.")] = 0,
) -> ResultPage:
    """The run's case results in input order, filtered, one page of them."""
    info = run_of(store, run_id)
    index = case_index(request, store, info)
    keep = CaseFilter(
        state=state,
        outcome=outcome,
        failed_check=check_slot(index, failed_check),
        errored=errored,
    )
    total, rows = select_rows(index, keep, "position", offset, limit)
    items = [_row(index, row) for row in rows]
    return ResultPage(run=info.id, total=total, limit=limit, offset=offset, items=items)


@router.get("/runs/{run_id}/results/" + CASE_ID)
def get_result(
    store: StoreDep,
    run_id: str,
    case_id: str,
    repeat: Annotated[int, Query(ge=0, le=MAX_COUNT, description="Which execution (from 0).")] = 0,
) -> ResultDetail:
    """One execution of one case with every verdict, its reason, measures and error."""
    info = run_of(store, run_id)
    detail = result_detail(store, info, case_id, repeat)
    if detail is None:
        raise no_case(info, case_id, repeat)
    r = detail.result
    verdict = PassPolicy.from_snapshot(info.config.get("thresholds")).decide(r)
    verdicts = {
        name: VerdictOut(
            state=v.state,
            reason=v.reason,
            error=v.error,
            measures=dict(v.measures) or None,
        )
        for name, v in r.verdicts.items()
    }
    return ResultDetail(
        run=info.id,
        case_id=r.case_id,
        repeat=r.repeat,
        position=r.position,
        state=verdict.state,
        score=verdict.score_pct,
        reason=verdict.reason,
        latency_ms=r.latency_ms,
        agent_error=r.agent_error,
        rubrics=_rubrics(r),
        verdicts=verdicts,
        case=None if detail.case is None else detail.case.model_dump(mode="json"),
        judge_exchanges=list(detail.exchanges),
    )
