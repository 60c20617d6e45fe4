"""The runs list and a run's page: its gates, charts per rubric and the cases table."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from ..core import (
    CaseState,
    OutcomeClass,
    PassMode,
    PassPolicy,
    Reliability,
    RunSummary,
    ScoreStatus,
)
from ..reports import headline
from ..store import RunInfo, RunStatus, Store, page_runs
from . import _charts
from ._case_index import SORTS, CaseFilter, CaseIndex, Sort, select_rows
from ._deps import case_index, check_slot, run_of, store_of
from ._html import render
from ._params import choice, whole
from ._ui_label import run_page_labelling

router = APIRouter(include_in_schema=False)
RUNS_PER_PAGE = 20
CASES_PER_PAGE = 50
SORT_LABELS = {
    "position": "position",
    "score": "score, lowest first",
    "-score": "score, highest first",
    "-latency": "latency, slowest first",
    "latency": "latency, fastest first",
}
_STATUSES = [s.value for s in RunStatus]
_STATES = [s.value for s in CaseState]
_OUTCOMES = [o.value for o in OutcomeClass]


def _row(store: Store, info: RunInfo) -> dict[str, Any]:
    """What the runs list shows of one run."""
    s = info.summary
    gates = s.case_gates if s is not None else None
    return {
        "info": info,
        # a running run's own count is 0 until it finishes: the stored results say how far
        "stored": store.count_results(info.id) if info.status is RunStatus.RUNNING else None,
        "tcr": None if gates is None else gates.weighted_metrics_score_pct,
        "pass_rate": None if gates is None else gates.cases_pass_rate_pct,
        "judge": None if s is None else s.judge,
        "verdict": info.verdict(),
    }


@router.get("/runs")
def runs_page(request: Request) -> Response:
    """Every stored run, newest first, 20 a page; pick two to compare."""
    store = store_of(request)
    params = request.query_params
    suite = params.get("suite") or None
    status = choice(params, "status", _STATUSES)
    page = whole(params, "page", 1, low=1)
    found = page_runs(
        store,
        suite=suite,
        status=RunStatus(status) if status else None,
        limit=RUNS_PER_PAGE,
        offset=(page - 1) * RUNS_PER_PAGE,
    )
    if request.app.state.warm_indexes:  # the runs listed are the ones likely opened next
        request.app.state.case_indexes.warm(store, found.runs)
    return render(
        request,
        "runs.html",
        rows=[_row(store, info) for info in found.runs],
        total=found.total,
        page=page,
        pages=max(1, -(-found.total // RUNS_PER_PAGE)),
        filters={"suite": suite or "", "status": status or ""},
        statuses=_STATUSES,
    )


def _gates(summary: RunSummary) -> list[dict[str, Any]]:
    """The run's two pass dimensions and its suite gates, each with its threshold."""
    out: list[dict[str, Any]] = []
    decided = summary.gates_not_decided is None  # else each is measured on part of the run
    g = summary.case_gates
    if g is not None:
        score = (
            "unmeasured"
            if g.weighted_metrics_score_pct is None
            else (f"{g.weighted_metrics_score_pct:.1f}%")
        )
        out.append(
            {
                "name": "metrics: mean case score",
                "actual": score,
                "threshold": f">= {g.metrics_pass_threshold:g}%",
                "passed": g.metrics_passed if decided else None,
            }
        )
        out.append(
            {
                "name": "cases: pass rate",
                "actual": f"{g.cases_pass_rate_pct:.1f}% ({g.passed} of {g.executions})",
                "threshold": f">= {g.cases_pass_threshold:g}%",
                "passed": g.cases_passed if decided else None,
            }
        )
    for gate in summary.gates:  # the suite's gates: their text holds the threshold
        out.append(
            {
                "name": gate.gate,
                "actual": "unmeasured" if gate.actual is None else f"{gate.actual:.4g}",
                "threshold": None,
                "passed": gate.passed if decided else None,
            }
        )
    return out


def _charts_of(info: RunInfo, summary: RunSummary, index: CaseIndex) -> list[dict[str, Any]]:
    """Per rubric: its TCR, outcome breakdown, per-check pass rates and score histogram."""
    policy = PassPolicy.from_snapshot(info.config.get("thresholds"))
    out = []
    for slot, rubric in enumerate(index.rubrics):
        try:
            r = summary.rubric(rubric)
        except KeyError:
            continue
        scores = [
            100 * cell.score
            for row in index.rows
            if (cell := row.rubrics[slot]) is not None
            and cell.status == ScoreStatus.SCORED.value
            and cell.score is not None
        ]
        # the case pass threshold is this rubric's own only when its score is the case's
        alone = policy.pass_policy is PassMode.THRESHOLD and (
            (policy.score_rubrics or index.rubrics) == (rubric,)
        )
        out.append(
            {
                "summary": r,
                "outcomes": _charts.outcome_chart(r.outcomes),
                "checks": _charts.pass_rate_chart(r.checks),
                "histogram": _charts.histogram(
                    scores,
                    mark=policy.pass_threshold if alone else None,
                    mark_label=f"case pass threshold {policy.pass_threshold:g}",
                    label=f"{rubric}: score histogram",
                ),
            }
        )
    return out


def _flaky(reliability: Reliability | None, index: CaseIndex) -> list[dict[str, Any]]:
    """The summary's flakiest tasks, each with its tries' states for links to them."""
    if reliability is None:
        return []
    wanted = {t.case_id for t in reliability.flakiest}
    tries: dict[str, list[tuple[int, str]]] = {}
    for row in index.rows:
        if row.case_id in wanted:
            tries.setdefault(row.case_id, []).append((row.repeat, row.state.value))
    return [{"task": t, "repeats": sorted(tries.get(t.case_id, []))} for t in reliability.flakiest]


@router.get("/runs/{run_id}")
def run_page(request: Request, run_id: str) -> Response:
    """One run: gates, charts and its cases, filtered, sorted and 50 a page."""
    store = store_of(request)
    info = run_of(store, run_id)
    params = request.query_params
    index = case_index(request, store, info)
    state = choice(params, "state", _STATES)
    outcome = choice(params, "outcome", _OUTCOMES)
    errored = choice(params, "errored", ["yes", "no"])
    failed_check = params.get("failed_check") or None
    sort: Sort = choice(params, "sort", SORTS) or "position"  # type: ignore[assignment]
    page = whole(params, "page", 1, low=1)
    keep = CaseFilter(
        state=CaseState(state) if state else None,
        outcome=OutcomeClass(outcome) if outcome else None,
        failed_check=check_slot(index, failed_check),
        errored=None if errored is None else errored == "yes",
    )
    total, rows = select_rows(index, keep, sort, (page - 1) * CASES_PER_PAGE, CASES_PER_PAGE)
    summary = info.summary
    return render(
        request,
        "run.html",
        info=info,
        summary=summary,
        headline=None
        if summary is None or summary.case_gates is None
        else headline(summary.case_gates),
        stored=len(index.rows),
        gates=[] if summary is None else _gates(summary),
        charts=[] if summary is None else _charts_of(info, summary, index),
        index=index,
        rows=rows,
        total=total,
        page=page,
        pages=max(1, -(-total // CASES_PER_PAGE)),
        filters={
            "state": state or "",
            "outcome": outcome or "",
            "failed_check": failed_check or "",
            "errored": errored or "",
            "sort": "" if sort == "position" else sort,
        },
        states=_STATES,
        outcomes=_OUTCOMES,
        sorts=SORT_LABELS,
        show_repeat=info.repeat > 1,
        verdict=info.verdict(),
        reliability=None if summary is None else summary.reliability,
        flaky=_flaky(None if summary is None else summary.reliability, index),
        labelling=run_page_labelling(request, info),
    )
