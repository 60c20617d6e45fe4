"""One case in two runs, side by side: each check's verdict and reason in the base and the
candidate, then the case's trace in each. Reached from the comparison page's case rows."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from ..core import PassPolicy
from ..store import ResultDetail, RunInfo, result_detail
from ._deps import run_of, store_of
from ._errors import bad_parameter, not_found, quoted
from ._html import render
from ._params import CASE_ID, whole
from ._ui_case import checklist, conversation

router = APIRouter(include_in_schema=False)


def _side(info: RunInfo, detail: ResultDetail | None) -> dict[str, Any] | None:
    """What one run holds of the execution: its verdict, checklist and conversation."""
    if detail is None:
        return None
    r = detail.result
    return {
        "info": info,
        "result": r,
        "verdict": PassPolicy.from_snapshot(info.config.get("thresholds")).decide(r),
        "checks": {c["name"]: c for c in checklist(info, dict(r.verdicts))},
        "case": detail.case,
        "turns": [] if detail.case is None else conversation(detail.case),
    }


def _rows(base: dict[str, Any] | None, candidate: dict[str, Any] | None) -> list[dict[str, Any]]:
    """One row per check either run gave a verdict: the base's order, then the candidate's."""
    names = list(base["checks"]) if base else []
    names += [n for n in (candidate["checks"] if candidate else {}) if n not in names]
    rows = []
    for name in names:
        b = base["checks"].get(name) if base else None
        c = candidate["checks"].get(name) if candidate else None
        rows.append(
            {
                "name": name,
                "base": b,
                "candidate": c,
                "changed": (b and b["state"]) != (c and c["state"]),
            }
        )
    return rows


@router.get("/compare/cases/" + CASE_ID)
def case_compare_page(request: Request, case_id: str) -> Response:
    """``case_id`` (one repeat) in the ``base`` and the ``candidate`` run, side by side."""
    store = store_of(request)
    params = request.query_params
    refs = {name: params.get(name, "") for name in ("base", "candidate")}
    for name, ref in refs.items():
        if not ref:
            raise bad_parameter(name, "expected a run id")
    repeat = whole(params, "repeat", 0)
    base_info, candidate_info = run_of(store, refs["base"]), run_of(store, refs["candidate"])
    base = _side(base_info, result_detail(store, base_info, case_id, repeat))
    candidate = _side(candidate_info, result_detail(store, candidate_info, case_id, repeat))
    if base is None and candidate is None:
        raise not_found(
            f"neither run {base_info.id} nor {candidate_info.id} has case {quoted(case_id)} "
            f"(repeat {repeat})"
        )
    return render(
        request,
        "case_compare.html",
        case_id=case_id,
        repeat=repeat,
        base_info=base_info,
        candidate_info=candidate_info,
        sides=[("base", base_info, base), ("candidate", candidate_info, candidate)],
        rows=_rows(base, candidate),
    )
