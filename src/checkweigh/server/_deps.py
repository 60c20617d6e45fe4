"""What the routes share: the store and the run a path names."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping

from starlette.requests import Request

from ..core import CompareThresholds, Decided
from ..errors import InputError
from ..service import StoredComparison, compare_stored, compare_thresholds
from ..store import RunInfo, RunStatus, Store
from ._case_index import CaseIndex, IndexCache
from ._errors import ApiError, bad_parameter, from_input_error, not_found, quoted


class DecidedRows:
    """The rows of the last few finished runs compared, as a comparison reads them, each with
    the case index they were made from (a rebuilt index makes them anew)."""

    def __init__(self, size: int = 4) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._kept: OrderedDict[str, tuple[CaseIndex, list[Decided]]] = OrderedDict()

    def get(self, run_id: str, index: CaseIndex) -> list[Decided] | None:
        """The rows made from ``index`` of the run ``run_id``, if kept."""
        with self._lock:
            found = self._kept.get(run_id)
            return found[1] if found is not None and found[0] is index else None

    def put(self, run_id: str, index: CaseIndex, rows: list[Decided]) -> None:
        """Keep ``rows``, made from ``index`` (the oldest kept run's go when full)."""
        with self._lock:
            self._kept[run_id] = (index, rows)
            self._kept.move_to_end(run_id)
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)


def store_of(request: Request) -> Store:
    """The app's store."""
    store: Store = request.app.state.store
    return store


MAX_RUN_REF = 100
"""The longest run id a store holds (see ``checkweigh.reports``' run files): a longer ref
names no run, and is never sent to the database (SQLite refuses a LIKE pattern that long)."""


def run_of(store: Store, ref: str, field: str | None = None) -> RunInfo:
    """The run ``ref`` names (id, unique prefix, latest, previous); 404 when there is none."""
    if len(ref) > MAX_RUN_REF or not ref.isprintable():
        raise not_found(f"{field}: no run {quoted(ref)}" if field else f"no run {quoted(ref)}")
    try:
        return store.get_run(ref)
    except InputError as exc:
        raise from_input_error(exc) from None


def no_case(info: RunInfo, case_id: str, repeat: int) -> ApiError:
    """404: the run has no such execution (a long id named by its length only)."""
    return not_found(f"run {info.id} has no case {quoted(case_id)} (repeat {repeat})")


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
    run has finished, and so are these rows: comparing it again reads only the changed
    executions' reasons, and makes none of its 10,000 rows anew)."""
    kept: DecidedRows = request.app.state.decided_rows

    def rows(info: RunInfo) -> list[Decided]:
        index = case_index(request, store, info)
        found = kept.get(info.id, index)
        if found is not None:
            return found
        checks = index.checks  # one tuple for every row: compared pairwise at C speed
        built = [
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
        if info.status is not RunStatus.RUNNING:
            kept.put(info.id, index, built)
        return built

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
    for field, ref in (("base", base), ("candidate", candidate)):
        if len(ref) > MAX_RUN_REF or not ref.isprintable():
            run_of(store, ref, field)  # its 404
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
