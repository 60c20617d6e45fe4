"""``/api/runs``: list, one run, upload."""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Query
from pydantic import BaseModel, ValidationError
from starlette.requests import Request

from ..core import Case, CaseResult, RunSummary
from ..errors import InputError
from ..store import RunInfo, RunStatus, Store, page_runs, store_run
from ._deps import run_of, store_of
from ._errors import ApiError, from_input_error
from ._params import MAX_COUNT

router = APIRouter(tags=["runs"])
_RUN_ID = re.compile(r"[A-Za-z0-9._-]{1,40}")
StoreDep = Annotated[Store, Depends(store_of)]


class RunPageOut(BaseModel):
    """A page of runs, newest first."""

    total: int
    """How many runs match the filters in all."""
    limit: int
    """Runs per page."""
    offset: int
    """Runs skipped before this page."""
    items: list[RunInfo]
    """The runs of this page."""


@router.get("/runs")
def list_runs(
    request: Request,
    store: StoreDep,
    suite: Annotated[str | None, Query(description="Only this suite's runs.")] = None,
    status: Annotated[RunStatus | None, Query(description="Only runs in this state.")] = None,
    limit: Annotated[int, Query(ge=1, le=500, description="Runs per page.")] = 20,
    offset: Annotated[int, Query(ge=0, le=MAX_COUNT, description="Runs to skip.")] = 0,
) -> RunPageOut:
    """The stored runs, newest first, with how many match in all."""
    page = page_runs(store, suite=suite, status=status, limit=limit, offset=offset)
    if request.app.state.warm_indexes:  # as the runs-list page does
        request.app.state.case_indexes.warm(store, page.runs)
    return RunPageOut(total=page.total, limit=limit, offset=offset, items=page.runs)


@router.get("/runs/{run_id}")
def get_run(store: StoreDep, run_id: str) -> RunInfo:
    """One run: its summary (aggregates, gates, notes), its configuration snapshot, status."""
    return run_of(store, run_id)


class Upload(BaseModel):
    """A run as ``checkweigh run --json`` writes it."""

    run: dict[str, Any]
    """The run (id, suite, status, times, repeat, configuration snapshot)."""
    summary: RunSummary
    """Its aggregates and gates."""
    results: list[dict[str, Any]]
    """Every execution's record."""


_EXPORT_ADDS = ("case", "evaluated_case")


def _results(upload: Upload, info: RunInfo) -> list[CaseResult]:
    rubric_checks = {r["name"]: list(r["weights"]) for r in info.config.get("rubrics", [])}
    out: list[CaseResult] = []
    for i, record in enumerate(upload.results):
        try:
            # an item of --json's results: the stored record, plus the case verdict and the
            # evaluated case the export adds beside it
            stored = {k: v for k, v in record.items() if k not in _EXPORT_ADDS}
            result = CaseResult.from_record(stored, rubric_checks)
            if (case := record.get("evaluated_case")) is not None:
                result = result._replace(case=Case.model_validate(case))
            out.append(result)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(["evaluated_case", *(str(p) for p in first["loc"])])
            raise ApiError(422, f"body.results[{i}].{field}: {first['msg']}") from None
        except InputError as exc:  # not a result record
            where = f"body.results[{i}]" + (f".{exc.field}" if exc.field else "")
            raise ApiError(422, f"{where}: {exc.message}") from None
        except (TypeError, ValueError, AttributeError) as exc:
            raise ApiError(422, f"body.results[{i}]: {' '.join(str(exc).split())}") from None
    return out


def json_body(request: Request) -> None:
    """415 for an upload that is not JSON: checked before the body is read as a run, so a
    wrong body is named by its type, never quoted back."""
    kind = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if kind != "application/json" and not (
        kind.startswith("application/") and kind.endswith("+json")
    ):
        raise ApiError(415, "body: expected JSON (Content-Type: application/json)")


@router.post("/runs", status_code=201, dependencies=[Depends(json_body)])
def upload_run(request: Request, store: StoreDep, upload: Annotated[Upload, Body()]) -> RunInfo:
    """Store a run produced elsewhere (the JSON ``checkweigh run --json`` writes), keeping its
    id. Always needs the server's token."""
    if not request.app.state.token_set:
        raise ApiError(
            403, "uploads are refused: this server has no token (start it with CHECKWEIGH_TOKEN)"
        )
    try:
        info = RunInfo.model_validate({**upload.run, "summary": upload.summary})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ApiError(422, f"body.run.{where}: {first['msg']}") from None
    if not _RUN_ID.fullmatch(info.id):
        raise ApiError(422, "body.run.id: expected 1 to 40 letters, digits, '.', '_' or '-'")
    if info.status is RunStatus.RUNNING:
        raise ApiError(422, "body.run.status: expected a finished run (complete or incomplete)")
    results = _results(upload, info)
    if len(results) != upload.summary.executions:
        raise ApiError(
            422,
            f"body.results: {len(results)} result(s) but the summary counts "
            f"{upload.summary.executions} execution(s)",
        )
    try:
        store_run(store, info, results)
    except InputError as exc:
        raise from_input_error(exc) from None
    stored = run_of(store, info.id)
    if request.app.state.warm_indexes:  # a run just published is the one opened next
        request.app.state.case_indexes.warm(store, [stored])
    return stored
