"""A run's executions as compact rows (state, score, latency, verdict states), for the cases
table of the run page and ``GET /api/runs/{id}/results``: filtered, sorted and paged here.

Deciding a case's state reads its whole record, so a run's rows are built in one streamed pass
and, once the run has finished (its results never change again), kept in a small cache: the
next page, filter or sort of a 10,000-case run reads no database at all.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple, get_args

from .._gc import gc_paused
from ..core import CaseResult, CaseState, OutcomeClass, PassPolicy, VerdictState
from ..errors import StoreError
from ..store import RunInfo, RunStatus, Store

_log = logging.getLogger("checkweigh.server")

Sort = Literal["position", "score", "-score", "latency", "-latency"]
"""How the rows are ordered: input order, score or latency (``-``: highest first)."""
SORTS: tuple[str, ...] = get_args(Sort)


class RubricCell(NamedTuple):
    """One rubric's result on one execution."""

    status: str
    score: float | None
    outcome: OutcomeClass | None


class CaseRow(NamedTuple):
    """One execution, as the cases table shows it."""

    case_id: str
    repeat: int
    position: int
    state: CaseState
    score: float | None
    """The case score (0-100), as the run's pass policy computes it."""
    errored: bool
    latency_ms: float | None
    rubrics: tuple[RubricCell | None, ...]
    """Per rubric of the index, in its order (None: the rubric has no result here)."""
    verdicts: tuple[VerdictState | None, ...]
    """Per check of the index, in its order (None: the check gave no verdict here)."""


@dataclass(frozen=True, slots=True)
class CaseIndex:
    """Every execution of one run, in input order."""

    checks: tuple[str, ...]
    """The run's checks: its snapshot's order, then any other name a verdict carries."""
    rubrics: tuple[str, ...]
    """The run's rubrics, in snapshot order."""
    rows: tuple[CaseRow, ...]


@dataclass(frozen=True, slots=True)
class CaseFilter:
    """Which executions to keep (None: any)."""

    state: CaseState | None = None
    outcome: OutcomeClass | None = None
    failed_check: int | None = None
    """The index of the check that must have failed."""
    errored: bool | None = None

    def keeps(self, row: CaseRow) -> bool:
        """Whether ``row`` passes every filter."""
        if self.errored is not None and row.errored is not self.errored:
            return False
        if self.state is not None and row.state is not self.state:
            return False
        if (
            self.failed_check is not None
            and row.verdicts[self.failed_check] is not VerdictState.FAILED
        ):
            return False
        return self.outcome is None or any(
            cell is not None and cell.outcome is self.outcome for cell in row.rubrics
        )


def build_index(info: RunInfo, results: Iterable[CaseResult]) -> CaseIndex:
    """The rows of ``info``'s results (from :meth:`Store.iter_results`)."""
    with gc_paused():  # every result is held until the rows are built (see checkweigh._gc)
        return _build(info, results)


def _build(info: RunInfo, results: Iterable[CaseResult]) -> CaseIndex:
    policy = PassPolicy.from_snapshot(info.config.get("thresholds"))
    rubrics = tuple(r["name"] for r in info.config.get("rubrics", []))
    checks = list(info.config.get("checks", {}))
    slot = {name: i for i, name in enumerate(checks)}
    built: list[tuple[CaseResult, CaseState, float | None]] = []
    for r in results:
        for name in r.verdicts:
            if name not in slot:  # a verdict the snapshot does not name: still shown
                slot[name] = len(checks)
                checks.append(name)
        state, score = policy.state(r)
        built.append((r, state, score))
    rows = tuple(
        CaseRow(
            case_id=r.case_id,
            repeat=r.repeat,
            position=r.position,
            state=state,
            score=score,
            errored=r.errored,
            latency_ms=r.latency_ms,
            rubrics=tuple(
                None
                if (e := r.results.get(name)) is None
                else RubricCell(e.status.value, e.score, e.outcome)
                for name in rubrics
            ),
            verdicts=tuple(
                None if (v := r.verdicts.get(name)) is None else v.state for name in checks
            ),
        )
        for r, state, score in built
    )
    return CaseIndex(tuple(checks), rubrics, rows)


def _sort_key(sort: Sort) -> tuple[str, bool]:
    return sort.lstrip("-"), sort.startswith("-")


def select_rows(
    index: CaseIndex, keep: CaseFilter, sort: Sort, offset: int, limit: int
) -> tuple[int, list[CaseRow]]:
    """How many rows ``keep`` keeps, and ``limit`` of them from ``offset`` in ``sort`` order
    (rows without the figure sorted by last, ties in input order)."""
    kept = [row for row in index.rows if keep.keeps(row)] if keep != CaseFilter() else index.rows
    field, descending = _sort_key(sort)
    if field == "position":
        ordered: Sequence[CaseRow] = kept
    else:
        attr = "score" if field == "score" else "latency_ms"
        known = [row for row in kept if getattr(row, attr) is not None]
        missing = [row for row in kept if getattr(row, attr) is None]
        # reverse=True keeps the sort stable: equal figures stay in input order
        known.sort(key=lambda row: getattr(row, attr), reverse=descending)
        ordered = known + missing
    return len(kept), list(ordered[offset : offset + limit])


class IndexCache:
    """The indexes of the last few finished runs viewed (their results no longer change)."""

    def __init__(self, size: int = 4) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._indexes: OrderedDict[str, CaseIndex] = OrderedDict()

    def get(self, store: Store, info: RunInfo) -> CaseIndex:
        """``info``'s index: cached for a finished run, read afresh for a running one."""
        if info.status is RunStatus.RUNNING:
            return build_index(info, store.iter_results(info.id))
        with self._lock:
            found = self._indexes.get(info.id)
            if found is not None:
                self._indexes.move_to_end(info.id)
                return found
        # built outside the lock: two first views of one run both build it, nothing waits
        index = build_index(info, store.iter_results(info.id))
        with self._lock:
            self._indexes[info.id] = index
            while len(self._indexes) > self._size:
                self._indexes.popitem(last=False)
        return index

    def __contains__(self, run_id: object) -> bool:
        """Whether the index of the run ``run_id`` is built and kept."""
        with self._lock:
            return run_id in self._indexes

    def warm(self, store: Store, runs: Iterable[RunInfo]) -> threading.Thread | None:
        """Build, on a background thread, the indexes of the finished runs among ``runs`` that
        are not cached yet (as many as the cache holds), so that the first view of a large run
        finds its index ready; None when there is nothing to build."""
        with self._lock:
            todo = [
                info
                for info in runs
                if info.status is not RunStatus.RUNNING and info.id not in self._indexes
            ][: self._size]
        if not todo:
            return None
        thread = threading.Thread(
            target=self._warm, args=(store, todo), name="checkweigh-index", daemon=True
        )
        thread.start()
        return thread

    def _warm(self, store: Store, todo: list[RunInfo]) -> None:
        for info in todo:
            try:
                self.get(store, info)
            except StoreError as exc:  # the page that needs it reports it; the server goes on
                _log.warning("could not prepare the cases of run %s: %s", info.id, exc)
