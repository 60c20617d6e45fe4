"""A case's page: the checklist of verdicts with their reasons, what the judge was asked and
answered, and the trace as a conversation (tool calls with arguments, results, errors and
timings). All of it is the agent's and the judge's text: data, escaped by the templates."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from ..core import Case, JudgeExchange, PassPolicy, Step
from ..store import RunInfo, result_detail
from ._deps import case_index, no_case, run_of, store_of
from ._html import render
from ._params import CASE_ID, whole

router = APIRouter(include_in_schema=False)
ROLES = {
    "user": "user",
    "assistant": "assistant",
    "tool_call": "tool",
    "system": "system",
    "event": "system",
}
"""A trace step's kind -> the speaker its turn is shown as."""
_MARKS = {"passed": "✓", "failed": "✗", "not_applicable": "\u2013", "errored": "!"}  # en dash: n/a


def _turn(step: Step) -> dict[str, Any]:
    """One trace step as a turn of the conversation."""
    label = {"tool_call": "tool call", "event": "event"}.get(step.kind, step.kind)
    attributes = {
        k: v for k, v in step.attributes.items() if isinstance(v, str | int | float | bool)
    }
    return {
        "role": ROLES[step.kind],
        "kind": step.kind,
        "label": label,
        "name": step.name,
        "content": step.content,
        "arguments": step.arguments,
        "arguments_parsed": step.arguments_parsed,
        "has_result": step.result is not None,
        "result": step.result,
        "error": step.error,
        "latency_ms": step.latency_ms,
        "timestamp": step.timestamp,
        "id": step.id,
        "parent_id": step.parent_id,
        "attributes": attributes,
        "turn_no": None,
        "in_turn": None,
        "turns": None,
    }


def conversation(case: Case) -> list[dict[str, Any]]:
    """The case's trace as steps, in the order they happened. In a multi-turn conversation
    (a ``user:`` block, or more than one user message) each user message opens a numbered turn,
    as :func:`~checkweigh.core.turns_of` cuts them: ``turn_no`` on that step, counted from 0 as
    the agent's request, errors and replay misses count them; ``in_turn`` on every step of the
    turn; ``turns`` the count."""
    steps = [_turn(step) for step in case.trace]
    count = len(case.turns)
    if case.user is None and count < 2:
        return steps
    turn = -1  # a system prompt before the first turn is in none
    for step in steps:
        if step["kind"] == "user":
            turn += 1
            step["turn_no"] = turn
        step["in_turn"] = turn if turn >= 0 else None
        step["turns"] = count
    return steps
    turn = 0
    for step in steps:
        if step["kind"] == "user":
            turn += 1
            step["turn_no"] = turn
        step["in_turn"] = turn or None  # a system prompt before the first turn is in none
        step["turns"] = count
    return steps


def checklist(info: RunInfo, verdicts: dict[str, Any]) -> list[dict[str, Any]]:
    """Every verdict in the run's check order, with its description and rubric weights."""
    checks = info.config.get("checks", {})
    order = [name for name in checks if name in verdicts]
    order += [name for name in verdicts if name not in checks]
    weights: dict[str, list[str]] = {}
    for rubric in info.config.get("rubrics", []):
        required = set(rubric.get("required", ()))
        for name, weight in rubric.get("weights", {}).items():
            tag = f"{rubric['name']} {float(weight):.2f}" + (
                " required" if name in required else ""
            )
            weights.setdefault(name, []).append(tag)
    out = []
    for name in order:
        v = verdicts[name]
        entry = checks.get(name) or {}
        spec = entry.get("spec") or {}
        out.append(
            {
                "name": name,
                "state": v.state.value,
                "mark": _MARKS[v.state.value],
                "reason": v.reason,
                "error": v.error,
                "measures": dict(v.measures),
                "description": entry.get("description") or spec.get("description"),
                "type": spec.get("type"),
                "weights": weights.get(name, []),
            }
        )
    return out


def _judge(exchanges: tuple[JudgeExchange, ...]) -> list[dict[str, Any]]:
    """The exchanges per check, in the order asked: each check's samples together."""
    by_check: dict[str, list[JudgeExchange]] = {}
    for e in exchanges:  # checks run side by side: their calls may interleave
        by_check.setdefault(e.check, []).append(e)
    return [{"check": check, "samples": samples} for check, samples in by_check.items()]


@router.get("/runs/{run_id}/cases/" + CASE_ID)
def case_page(request: Request, run_id: str, case_id: str) -> Response:
    """One execution of one case: checklist, judge exchanges and conversation."""
    store = store_of(request)
    info = run_of(store, run_id)
    repeat = whole(request.query_params, "repeat", 0)
    detail = result_detail(store, info, case_id, repeat)
    if detail is None:
        raise no_case(info, case_id, repeat)
    r = detail.result
    verdict = PassPolicy.from_snapshot(info.config.get("thresholds")).decide(r)
    return render(
        request,
        "case.html",
        info=info,
        result=r,
        verdict=verdict,
        checklist=checklist(info, dict(r.verdicts)),
        judge=_judge(detail.exchanges),
        case=detail.case,
        turns=[] if detail.case is None else conversation(detail.case),
        rubrics=r.results,
        repeats=_repeats(request, info, r.case_id) if info.repeat > 1 else [],
    )


def _repeats(request: Request, info: RunInfo, case_id: str) -> list[tuple[int, str]]:
    """Every try of ``case_id`` in the run: its repeat and case state, in repeat order."""
    index = case_index(request, store_of(request), info)
    return sorted((row.repeat, row.state.value) for row in index.rows if row.case_id == case_id)
