"""What the routes share: the store and the run a path names."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from starlette.requests import Request

from ..core import CompareThresholds, Decided
from ..errors import InputError
from ..service import StoredComparison, compare_stored, compare_thresholds
from ..store import RunInfo, Store
from ._case_index import CaseIndex, IndexCache
from ._errors import ApiError, bad_parameter, from_input_error


def store_of(request: Request) -> Store:
    """The app's store."""
    store: Store = request.app.state.store
    return store


def run_of(store: Store, ref: str) -> RunInfo:
    """The run ``ref`` names (id, unique prefix, latest, previous); 404 when there is none."""
    try:
        return store.get_run(ref)
    except InputError as exc:
        raise from_input_error(exc) from None


def finished(info: RunInfo) -> RunInfo:
    """``info``, or 409 when its run is still running (nothing stable to show yet)."""
    if info.summary is None:
        raise ApiError(409, f"run {info.id} is still {info.status.value}")
    return info


def case_index(request: Request, store: Store, info: RunInfo) -> CaseIndex:
    """The rows of ``info``'s executions (cached by the app once the run has finished)."""
    cache: IndexCache = request.app.state.case_indexes
    return cache.get(store, info)


def decided_rows(request: Request, store: Store) -> Callable[[RunInfo], list[Decided]]:
    """A run's executions as a comparison reads them, from its case index (cached once the
    run has finished: comparing it again reads only the changed executions' reasons)."""

    def rows(info: RunInfo) -> list[Decided]:
        index = case_index(request, store, info)
        checks = index.checks  # one tuple for every row: compared pairwise at C speed
        return [
            Decided(
                row.case_id,
                row.repeat,
                row.position,
                row.state,
                row.score,
                row.latency_ms,
                checks,
                row.verdicts,
            )
            for row in index.rows
        ]

    return rows


def check_slot(index: CaseIndex, name: str | None, field: str = "failed_check") -> int | None:
    """The position of the check ``name`` in ``index`` (None for None); 422 for a check the
    run does not have."""
    if name is None:
        return None
    if name not in index.checks:
        raise bad_parameter(field, f"expected one of the run's checks ({', '.join(index.checks)})")
    return index.checks.index(name)


def compared(
    request: Request,
    base: str,
    candidate: str,
    values: Mapping[str, float],
    fields: Mapping[str, str],
    strict: bool,
) -> tuple[CompareThresholds, StoredComparison]:
    """The thresholds ``values`` (named as ``fields`` in errors) and the comparison of the
    stored runs ``base`` and ``candidate`` under them, from their case indexes; a bad value or
    run as the HTTP error it is (422, 404)."""
    store = store_of(request)
    try:
        thresholds = compare_thresholds(values, fields)
        found = compare_stored(
            store,
            base,
            candidate,
            thresholds,
            strict=strict,
            fields=("base", "candidate"),
            rows_of=decided_rows(request, store),
            memo=request.app.state.comparisons,
        )
    except InputError as exc:
        raise from_input_error(exc) from None
    return thresholds, found
