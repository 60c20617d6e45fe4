"""``/api/labels`` and ``/api/runs/{run}/labels/{check}``: people's labels on judge verdicts,
written one execution at a time and read back as a labelling queue.

Labels are the one write a browser makes. Without a token (``serve`` on loopback only) anyone
on the machine may label, as anyone may read; with one, a label needs the token, or a session
of the login page (see ``_auth``). Either way a write comes as JSON from this server's own
pages or from a client that is not a browser: a page of another site is refused (its
``Origin``), and so is a form post (not JSON).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Depends, Query
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse

from .._text import safe_data, safe_text
from ..core import Calibration, Label, LabelSource, TrustVerdict
from ..store import (
    JudgedExecution,
    LabelledExecution,
    RunInfo,
    Store,
    add_labels,
    criteria,
    judged_executions,
    label_for,
)
from ..store import read_labels as stored_labels
from . import _labelling
from ._auth import same_origin
from ._deps import MAX_RUN_REF, run_of, store_of
from ._errors import ApiError, quoted
from ._labelling import ORDERS, Order, prompt_text, verdict_word
from ._runs import json_body

router = APIRouter(tags=["labels"])
StoreDep = Annotated[Store, Depends(store_of)]
MAX_LABELS = 1000
"""The most labels one request may write."""
MAX_NOTE = 10_000


def not_cross_site(request: Request) -> None:
    """403 for a write from another site's page: its ``Origin`` is not this server (a client
    that sends none, curl or a script, is not a page of another site)."""
    if not same_origin(request) or request.headers.get("sec-fetch-site") == "cross-site":
        raise ApiError(403, "labels are refused from another site's page (Origin)")


class LabelIn(BaseModel):
    """One label as ``POST /api/labels`` takes it."""

    model_config = ConfigDict(extra="forbid")

    run: str = Field(min_length=1, max_length=MAX_RUN_REF)
    """The run whose execution was labelled (an id, a unique prefix, ``latest``)."""
    check: str = Field(min_length=1, max_length=200)
    """The check labelled."""
    case: str = Field(min_length=1, max_length=200)
    """The case id."""
    repeat: StrictInt = Field(default=0, ge=0)
    """The execution of the case (from 0)."""
    label: StrictBool
    """True: the check should pass on this evidence."""
    note: str = Field(default="", max_length=MAX_NOTE)
    """The labeller's comment."""
    reviewer: str = Field(default="", max_length=200)
    """Who labels."""
    source: Literal["api", "ui"] = "api"
    """``ui`` from the labelling page."""


def _parsed(body: Any) -> list[tuple[str, LabelIn]]:
    """The labels of ``body`` (one object or a list), each with where it was in the body."""
    body = safe_data(body)  # a lone surrogate (a JSON "\\ud800") as its visible escape
    many = isinstance(body, list)
    items = body if many else [body]
    if not items:
        raise ApiError(422, "body: expected a label or a non-empty list of labels")
    if len(items) > MAX_LABELS:
        raise ApiError(413, f"body: at most {MAX_LABELS} labels a request")
    out = []
    for i, item in enumerate(items):
        where = f"body[{i}]" if many else "body"
        if not isinstance(item, dict):
            raise ApiError(422, f"{where}: expected an object with run, check, case and label")
        try:
            out.append((where, LabelIn.model_validate(item)))
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"])
            message = "unknown field" if first["type"] == "extra_forbidden" else first["msg"]
            raise ApiError(422, f"{where}.{field}: {message}") from None
    return out


def _execution(
    where: str, info: RunInfo, found: Sequence[JudgedExecution], case: str, repeat: int
) -> JudgedExecution:
    for execution in found:
        if execution.case_id == case and execution.repeat == repeat:
            return execution
    if any(execution.case_id == case for execution in found):
        raise ApiError(404, f"{where}.repeat: run {info.id} has no repeat {repeat} of that case")
    raise ApiError(404, f"{where}.case: run {info.id} has no verdict on case {quoted(case)}")


def _labels_of(store: Store, parsed: list[tuple[str, LabelIn]]) -> list[Label]:
    runs: dict[str, RunInfo] = {}
    # one read per run and check, of the cases labelled only
    cases: dict[tuple[str, str], set[str]] = {}
    for _, item in parsed:
        cases.setdefault((item.run, item.check), set()).add(item.case)
    executions: dict[tuple[str, str], list[JudgedExecution]] = {}
    now = datetime.now(UTC)
    out = []
    for where, item in parsed:
        if item.run not in runs:
            try:
                runs[item.run] = run_of(store, item.run, f"{where}.run")
            except ApiError as exc:  # its field named, whatever the store said
                field = f"{where}.run: "
                raise ApiError(exc.status, field + exc.message.removeprefix(field)) from None
        info = runs[item.run]
        if item.check not in (info.config.get("checks") or {}):
            raise ApiError(422, f"{where}.check: run {info.id} has no check {quoted(item.check)}")
        key = (item.run, item.check)
        if key not in executions:
            wanted = {c for c in cases[key] if "\x00" not in c}  # no store holds a NUL
            found = judged_executions(store, info.id, [item.check], case_ids=wanted)
            executions[key] = found[item.check]
        execution = _execution(where, info, executions[key], item.case, item.repeat)
        label = label_for(
            execution,
            criterion=criteria(info.config, [item.check])[item.check],
            run_id=info.id,
            label=item.label,
            reviewer=item.reviewer.strip(),
            note=item.note,
            judge=info.config.get("judge"),
            source=LabelSource(item.source),
        )
        out.append(label.model_copy(update={"created_at": now}))
    return out


@router.post(
    "/labels",
    status_code=201,
    dependencies=[Depends(json_body), Depends(not_cross_site)],
    response_model=None,
)
def post_labels(
    store: StoreDep,
    body: Annotated[Any, Body(description="A label, or a list of labels.")],
) -> JSONResponse:
    """Keep people's labels on executions of a run: each finds its execution, takes the
    fingerprints of the check's criterion and of the evidence its judge saw, and replaces the
    same reviewer's earlier label on the same item. Answers what was stored (one object or a
    list, as sent)."""
    parsed = _parsed(body)
    labels = _labels_of(store, parsed)
    add_labels(store, labels)
    shown = [safe_data(label).model_dump(mode="json") for label in labels]
    return JSONResponse(shown if isinstance(body, list) else shown[0], status_code=201)


class LabelPageOut(BaseModel):
    """Stored labels, oldest first."""

    total: int
    """How many match in all."""
    items: list[Label]
    """Up to ``limit`` of them."""


@router.get("/labels")
def list_labels(
    store: StoreDep,
    check: Annotated[str | None, Query(max_length=200, description="Only this check's.")] = None,
    case: Annotated[str | None, Query(max_length=200, description="Only this case's.")] = None,
    limit: Annotated[int, Query(ge=1, le=10_000, description="Labels at most.")] = 1000,
) -> LabelPageOut:
    """The stored labels (of one check, of one case), oldest first."""
    if "\x00" in (check or "") + (case or ""):  # no store holds it (PostgreSQL refuses it)
        return LabelPageOut(total=0, items=[])
    found = stored_labels(
        store, checks=None if check is None else [check], case_ids=None if case is None else [case]
    )
    return LabelPageOut(total=len(found), items=[safe_data(x) for x in found[:limit]])


class LabelOut(BaseModel):
    """One reviewer's label on a queued execution."""

    reviewer: str
    label: bool
    note: str
    created_at: datetime | None
    source: str


class QueueItem(BaseModel):
    """One execution of the queue."""

    case_id: str
    repeat: int
    position: int
    """The case's position in its cases file."""
    verdict: str
    """The judge's: ``yes`` or ``no``."""
    reason: str
    """The judge's reason."""
    prompt: str
    """The evidence the judge saw: its prompt's user message."""
    evidence: str | None
    """That prompt's fingerprint."""
    labels: list[LabelOut]


class Progress(BaseModel):
    """How far the labelling is."""

    labelled: int
    """Decided executions with a label."""
    decided: int
    """Executions the judge said yes or no to."""
    budget: int
    """The labels wanted (``trust.min_labels``, else 50, or ``?budget=``)."""
    stale_criterion: int
    """Labels on these cases made under another question or version of the check."""
    stale_evidence: int
    """Labels on these cases made on evidence no execution of this run has."""


class QueueOut(BaseModel):
    """A judge check's labelling queue in one run."""

    run: str
    check: str
    question: str
    judge: str | None
    order: str
    progress: Progress
    judged_yes: int
    judged_no: int
    calibration: Calibration
    """The raw and the calibrated pass rate, the judge's sensitivity and specificity, as the
    labels now stand."""
    trust: TrustVerdict | None
    """The check's ``trust:`` bar measured, when its suite sets one."""
    notes: list[str]
    """What the figures leave out (stale labels, reviewers split evenly), in words."""
    more_labels: int | None
    """Labels still needed for the calibrated interval to reach ±5 points."""
    reviewers: dict[str, int]
    """Labels per reviewer on this run's executions."""
    reviewer_kappa: float | None
    """Cohen's kappa of the two first reviewers, over the executions both labelled."""
    overlap: int
    """Executions two reviewers labelled."""
    total: int
    """Executions in this order in all (the unlabelled ones, or the labelled ones)."""
    offset: int
    items: list[QueueItem]


def item_of(row: LabelledExecution) -> QueueItem:
    """A queued execution as the API shows it."""
    e = row.execution
    return QueueItem(
        case_id=safe_text(e.case_id),
        repeat=e.repeat,
        position=e.position,
        verdict=verdict_word(e.state),
        reason=safe_text(e.reason),
        prompt=safe_text(prompt_text(row)),
        evidence=e.evidence,
        labels=[
            LabelOut(
                reviewer=safe_text(x.reviewer),
                label=x.label,
                note=safe_text(x.note),
                created_at=x.created_at,
                source=x.source.value,
            )
            for x in row.labels
        ],
    )


def queue_out(q: _labelling.Queue, offset: int, limit: int) -> QueueOut:
    """The queue as the API shows it: ``limit`` items from ``offset``."""
    yes, no = q.labels.counts()
    return QueueOut(
        run=q.info.id,
        check=q.check,
        question=safe_text(q.question),
        judge=q.judge,
        order=q.order,
        progress=Progress(
            labelled=q.labelled,
            decided=q.decided,
            budget=q.budget,
            stale_criterion=q.labels.stale_criterion,
            stale_evidence=q.labels.stale_evidence,
        ),
        judged_yes=yes,
        judged_no=no,
        calibration=q.calibration.figures,
        trust=q.calibration.trust,
        notes=[safe_text(note) for note in q.calibration.notes()],
        more_labels=q.more_labels,
        reviewers={safe_text(k): v for k, v in q.labels.reviewers().items()},
        reviewer_kappa=q.calibration.reviewer_kappa,
        overlap=q.overlap,
        total=len(q.items),
        offset=offset,
        items=[item_of(row) for row in q.items[offset : offset + limit]],
    )


@router.get("/runs/{run_id}/labels/{check}")
def label_queue(
    store: StoreDep,
    run_id: str,
    check: str,
    order: Annotated[
        Order,
        Query(description="queue: where a label narrows the rate most; random; labelled."),
    ] = "queue",
    budget: Annotated[
        int | None, Query(ge=1, le=_labelling.MAX_BUDGET, description="The labels wanted.")
    ] = None,
    offset: Annotated[int, Query(ge=0, le=10**9, description="Executions to skip.")] = 0,
    limit: Annotated[int, Query(ge=0, le=500, description="Executions at most.")] = 50,
) -> QueueOut:
    """A judge check's labelling queue: its decided executions in the order they are asked
    (each with the judge's verdict, reason, the prompt it saw and the labels made), the
    progress against the label budget, the calibrated figures and the reviewers' kappa."""
    assert order in ORDERS
    info = run_of(store, run_id)
    _labelling.judge_check(info, check)
    return queue_out(_labelling.queue(store, info, check, order, budget), offset, limit)
