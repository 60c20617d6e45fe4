"""Reading the store a page at a time, for the server: runs filtered and counted, one result
found by its case id, and a run produced elsewhere stored whole."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, NamedTuple

from sqlalchemy import Connection, Row, func, insert, select

from ..core import CaseResult, ResultRecord
from ..errors import InputError
from ._rows import case_rows, record_value, verdict_rows
from ._store import (
    _RESULTS,
    RunInfo,
    RunStatus,
    Store,
    _db_errors,
    _info,
    gates_column,
    run_rows,
)
from ._tables import CaseBodyRow, ResultRow, RunRow, VerdictRow


class RunPage(NamedTuple):
    """One page of runs, newest first, and how many runs match in all."""

    total: int
    runs: list[RunInfo]


class RunExists(InputError):
    """A run with this id is already stored."""


def page_runs(
    store: Store,
    *,
    suite: str | None = None,
    status: RunStatus | None = None,
    limit: int = 20,
    offset: int = 0,
) -> RunPage:
    """The runs of ``suite`` with ``status`` (None: any), newest first: ``limit`` of them from
    ``offset``, and the count of all that match."""
    where = []
    if suite is not None:
        where.append(RunRow.suite == suite)
    if status is not None:
        where.append(RunRow.status == status.value)
    count = select(func.count()).select_from(RunRow).where(*where)
    rows = (
        run_rows()
        .where(*where)
        .order_by(RunRow.created_at.desc(), RunRow.id.desc())
        .limit(limit)
        .offset(offset)
    )
    with _db_errors(f"read {store.safe_url}"), store.engine.connect() as conn:
        total = int(conn.execute(count).scalar_one())
        return RunPage(total, [_info(row) for row in conn.execute(rows).mappings()])


def column_id(store: Store, case_id: str) -> str:
    """The case id as its column holds it: PostgreSQL text cannot hold NUL (U+FFFD instead)."""
    return case_id if store.engine.dialect.name == "sqlite" else case_id.replace("\x00", "\ufffd")


def find_result(store: Store, run: RunInfo, case_id: str, repeat: int) -> CaseResult | None:
    """The result of ``case_id``'s execution number ``repeat`` (from 0) in ``run``; None when
    the run stored none."""
    with _db_errors(f"read {store.safe_url}"), store.engine.connect() as conn:
        row = result_row(conn, store, run, case_id, repeat)
    return None if row is None else ResultRecord.read(row.record).result(rubric_checks(run))


def results_at(
    store: Store, run: RunInfo, keys: Sequence[tuple[int, str, int]]
) -> dict[tuple[str, int], CaseResult]:
    """The results of ``run`` at these ``(position, case id, repeat)``, by (case id, repeat),
    in one query per 500 positions (a comparison's changed executions)."""
    wanted = {(case_id, repeat) for _, case_id, repeat in keys}
    positions = sorted({position for position, _, _ in keys})
    checks = rubric_checks(run)
    found: dict[tuple[str, int], CaseResult] = {}
    with _db_errors(f"read {store.safe_url}"), store.engine.connect() as conn:
        for start in range(0, len(positions), 500):
            stmt = select(ResultRow.record).where(
                ResultRow.run_id == run.id, ResultRow.idx.in_(positions[start : start + 500])
            )
            for (record,) in conn.execute(stmt):
                if (record["case_id"], record["repeat"]) in wanted:
                    result = ResultRecord.read(record).result(checks)
                    found[result.case_id, result.repeat] = result
    return found


def result_row(
    conn: Connection, store: Store, run: RunInfo, case_id: str, repeat: int
) -> Row[Any] | None:
    """The stored row (record, idx, exchanges) of ``case_id``'s execution ``repeat``."""
    # the case_id column holds U+FFFD for NUL on PostgreSQL; the record keeps the exact id
    stmt = select(ResultRow.record, ResultRow.idx, ResultRow.exchanges).where(
        ResultRow.run_id == run.id,
        ResultRow.case_id == column_id(store, case_id),
        ResultRow.repeat == repeat,
    )
    for row in conn.execute(stmt):
        if row.record["case_id"] == case_id:
            return row
    return None


def rubric_checks(run: RunInfo) -> dict[str, list[str]]:
    """Each rubric's checks, from the run's snapshot: a rebuilt result's rubric details then
    hold only its own verdicts."""
    return {r["name"]: list(r["weights"]) for r in run.config.get("rubrics", [])}


def _aware(value: datetime | None) -> datetime | None:
    """A time in UTC with its zone (RunInfo's are naive UTC), as the engine stores them."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


def store_run(store: Store, run: RunInfo, results: list[CaseResult]) -> None:
    """Store a finished run made elsewhere (its id, snapshot, summary and results) in one
    transaction: all of it or, on any failure, none.

    Raises:
        RunExists: a run with its id is already stored.
        StoreError: the database failed.
    """
    if run.status is RunStatus.RUNNING or run.summary is None:
        raise InputError("only a finished run can be stored", field="run.status")
    rows = [
        {
            "run_id": run.id,
            "idx": r.position,
            "case_id": column_id(store, r.case_id),
            "repeat": r.repeat,
            "errored": r.errored,
            "latency_ms": r.latency_ms,
            "record": record_value(r),
        }
        for r in results
    ]
    store.check_file()
    with _db_errors(f"store the run in {store.safe_url}"), store.engine.begin() as conn:
        taken = select(func.count()).select_from(RunRow).where(RunRow.id == run.id)
        if conn.execute(taken).scalar_one():
            raise RunExists(f"run {run.id} is already stored", field="run.id")
        conn.execute(
            insert(RunRow).values(
                id=run.id,
                suite=run.suite,
                suite_path=run.suite_path,
                status=run.status.value,
                created_at=_aware(run.created_at),
                finished_at=_aware(run.finished_at),
                repeat=run.repeat,
                executions=len(rows),
                gates_passed=gates_column(run.summary),
                config=run.config,
                summary=run.summary.model_dump(mode="json"),
                abandoned=run.abandoned,
            )
        )
        if rows:
            conn.execute(insert(_RESULTS), rows)
            verdicts = [
                {"run_id": run.id, "check": c, "state": s, "idx": i, "repeat": k}
                for c, s, i, k in verdict_rows(results)
            ]
            if verdicts:
                conn.execute(insert(VerdictRow), verdicts)
            bodies = [
                {"run_id": run.id, "idx": i, "repeat": k, "body": body}
                for i, k, body in case_rows(results)
            ]
            if bodies:  # the cases the export carried (run --json --json-cases)
                conn.execute(insert(CaseBodyRow), bodies)
