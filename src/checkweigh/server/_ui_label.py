"""The labelling page: a judge check's queue in one run, one execution at a time.

The page is drawn here, the next 50 executions of the queue with it (each with the judge's
verdict, its reason and the prompt it saw, all autoescaped); ``label.js`` shows them one at a
time, posts each label to ``POST /api/labels`` and reads the new progress from
``GET /api/runs/{run}/labels/{check}?limit=0``. Reload for the next 50: the queue's order
follows the labels made.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from ..core import VerdictState
from ..reports import rate, trust_word
from ..store import RunInfo, Store, calibration_of, read_labels, run_labels, trust_bars
from ._case_index import CaseIndex
from ._deps import case_index, run_of, store_of
from ._html import render
from ._labelling import (
    MAX_BUDGET,
    ORDER_LABELS,
    ORDERS,
    Order,
    judge_check,
    judge_checks,
    prompt_text,
    queue,
    verdict_word,
)
from ._params import choice, whole

router = APIRouter(include_in_schema=False)
SHOWN = 50
"""Executions a page holds."""


@router.get("/runs/{run_id}/label/{check}")
def label_page(request: Request, run_id: str, check: str) -> Response:
    """Label a judge check's executions: y / n / s, j / k, a note, the reviewer's name."""
    store = store_of(request)
    info = run_of(store, run_id)
    judge_check(info, check)
    params = request.query_params
    order: Order = choice(params, "order", ORDERS) or "queue"  # type: ignore[assignment]
    budget = whole(params, "budget", 0, low=1, high=MAX_BUDGET) or None
    q = queue(store, info, check, order, budget)
    yes, no = q.labels.counts()
    items = [
        {
            "case_id": row.execution.case_id,
            "repeat": row.execution.repeat,
            "position": row.execution.position,
            "verdict": verdict_word(row.execution.state),
            "reason": row.execution.reason,
            "prompt": prompt_text(row),
            "labels": row.labels,
        }
        for row in q.items[:SHOWN]
    ]
    return render(
        request,
        "label.html",
        info=info,
        q=q,
        items=items,
        remaining=len(q.items),
        raw=q.calibration.figures.raw_pass_rate,
        judged_yes=yes,
        judged_no=no,
        orders=ORDER_LABELS,
        budget_param=params.get("budget", ""),
    )


def labelling_counts(store: Store, info: RunInfo, index: CaseIndex) -> list[dict[str, Any]]:
    """Each judge check of the run with its decided and labelled executions, for the run
    page (the labels matched to the run only when the store holds any on these checks)."""
    checks = [name for name in judge_checks(info) if name in index.checks]
    if not checks:
        return []
    decided = dict.fromkeys(checks, 0)
    slots = {name: index.checks.index(name) for name in checks}
    for row in index.rows:
        for name, slot in slots.items():
            if row.verdicts[slot] in (VerdictState.PASSED, VerdictState.FAILED):
                decided[name] += 1
    labelled = dict.fromkeys(checks, 0)
    figures: dict[str, dict[str, Any]] = {}
    if read_labels(store, checks=checks):
        bars = trust_bars(info.config)
        for name, found in run_labels(store, info.id, checks).items():
            labelled[name] = found.labelled
            if found.labelled:  # the calibrated rate beside the raw one, as they stand now
                c = calibration_of(found, bars.get(name), info.config.get("judge"))
                figures[name] = {
                    "raw": rate(c.figures.raw_pass_rate),
                    "calibrated": rate(
                        c.figures.calibrated_pass_rate,
                        c.figures.calibrated_low,
                        c.figures.calibrated_high,
                    ),
                    "trust": trust_word(c),
                }
    return [
        {"check": n, "decided": decided[n], "labelled": labelled[n], **figures.get(n, {})}
        for n in checks
    ]


def run_page_labelling(request: Request, info: RunInfo) -> list[dict[str, Any]]:
    """:func:`labelling_counts` of the run a page shows."""
    store = store_of(request)
    return labelling_counts(store, info, case_index(request, store, info))
