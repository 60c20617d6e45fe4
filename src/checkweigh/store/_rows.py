"""The rows a batch of results becomes in SQLite, built without the store.

A worker process (``--workers N``) builds them where it scored the results, so the driver,
which owns the one database connection, only inserts them; an in-process run builds them in
the writer. Either way the same function builds them, so the stored rows are the same.
Imports no SQLAlchemy: a worker process does not load it.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import orjson

from .._text import safe_text
from ..core import Case, CaseResult, ResultRecord, VerdictState

ALL_REPEATS = -1
"""The ``repeat`` of a stored case that every repeat of it evaluated (read from its file)."""

_PASSED = VerdictState.PASSED
_to_json = Case.__pydantic_serializer__.to_json


def _dumps(value: Any) -> str:
    """JSON for the JSON columns: orjson is several times faster than the standard library."""
    return orjson.dumps(value).decode()


def record_json(result: CaseResult) -> str:
    """The result's record (:class:`~checkweigh.core.ResultRecord`) as the ``record`` column
    holds it."""
    return ResultRecord.of(result).to_json().decode()


def record_value(result: CaseResult) -> orjson.Fragment:
    """:func:`record_json` as a value of the ``record`` column (a JSON column, whose
    serializer writes this JSON as it is)."""
    return orjson.Fragment(ResultRecord.of(result).to_json())


class SqliteRows(NamedTuple):
    """A batch of results as SQLite's multi-row INSERTs bind them: flat parameter lists, one
    row after another (plain strings, numbers and bytes: cheap to send between processes)."""

    results: list[object]
    """``case_results`` rows (run_id, idx, case_id, repeat, errored, latency_ms, record,
    exchanges)."""
    verdicts: list[object]
    """``verdicts_not_passed`` rows (run_id, check, state, idx, repeat)."""
    bodies: list[object]
    """``case_bodies`` rows (run_id, idx, repeat, body)."""


def sqlite_rows(run_id: str, results: list[CaseResult]) -> SqliteRows:
    """The rows that store ``results`` in run ``run_id`` (SQLite's parameters); a result that
    cannot be written is stored errored (see :func:`storable`)."""
    try:
        return _sqlite_rows(run_id, results)
    except UNSTORABLE:
        return _sqlite_rows(run_id, storable(results))


UNSTORABLE = (TypeError, ValueError)
"""What encoding a value no JSON encoder takes raises: orjson's JSONEncodeError is a
TypeError, pydantic's PydanticSerializationError a ValueError."""


def storable(results: list[CaseResult]) -> list[CaseResult]:
    """``results`` with each one that cannot be written replaced by its errored result.

    Text enters through ``checkweigh._text``, so this is the last line of defence: a value
    that slipped past it (from the Python API, say) costs its case, not the run, which would
    otherwise end with an internal error, still ``running``, without its report.
    """
    return [_storable(r) for r in results]


def _storable(result: CaseResult) -> CaseResult:
    try:
        record_json(result)
        _dumps(_exchanges(result))
        list(case_rows([result]))  # serializes the case
    except UNSTORABLE as exc:
        kept = result.case
        if kept is not None:
            kept = kept.model_copy(update={"trace": [], "final_state": {}})
            try:
                _to_json(kept)
            except UNSTORABLE:
                kept = None
        return CaseResult(
            safe_text(result.case_id),
            result.repeat,
            {},
            {},
            result.latency_ms,
            f"the result cannot be stored: {safe_text(str(exc))}",
            result.position,
            case=kept,
        )
    return result


def _sqlite_rows(run_id: str, results: list[CaseResult]) -> SqliteRows:
    params: list[object] = []
    for r in results:
        exchanges = _exchanges(r)
        params += (
            run_id,
            r.position,
            r.case_id,
            r.repeat,
            r.errored,
            r.latency_ms,
            record_json(r),
            None if exchanges is None else _dumps(exchanges),
        )
    verdicts: list[object] = []
    for row in verdict_rows(results):
        verdicts += (run_id, *row)
    bodies: list[object] = []
    for case_row in case_rows(results):
        bodies += (run_id, *case_row)
    return SqliteRows(params, verdicts, bodies)


def verdict_rows(results: list[CaseResult]) -> Iterator[tuple[str, str, int, int]]:
    """(check, state, idx, repeat) for every verdict of ``results`` that did not pass."""
    for r in results:
        for name, verdict in r.verdicts.items():
            state = verdict[0]
            if state is not _PASSED:
                yield name, state.value, r.position, r.repeat


def case_rows(results: list[CaseResult]) -> Iterator[tuple[int, int, bytes]]:
    """(idx, repeat, body) of the cases to store with ``results``: a case evaluated as read
    (its line at hand) once, with its first repeat, for all of them; one an agent ran with
    each execution."""
    for r in results:
        if r.body is not None:
            if r.repeat == 0:
                yield r.position, ALL_REPEATS, r.body
        elif r.case is not None:
            yield r.position, r.repeat, _to_json(r.case, exclude_defaults=True)


def _exchanges(result: CaseResult) -> list[dict[str, Any]] | None:
    """The result's judge calls as JSON-ready dicts; None without any."""
    if not result.exchanges:
        return None
    return [e.model_dump(mode="json") for e in result.exchanges]


RESULT_COLUMNS = (
    "run_id",
    "idx",
    "case_id",
    "repeat",
    "errored",
    "latency_ms",
    "record",
    "exchanges",
)
VERDICT_COLUMNS = ("run_id", "check", "state", "idx", "repeat")
BODY_COLUMNS = ("run_id", "idx", "repeat", "body")
MAX_PARAMETERS = 999
"""SQLite's oldest limit on the parameters of one statement (newer builds allow more)."""
TABLES = ("case_results", "verdicts_not_passed", "case_bodies")
"""The tables that hold a run's results, by case position (``idx``)."""


def quoted(columns: tuple[str, ...]) -> str:
    """The column list of a statement."""
    return ", ".join(f'"{c}"' for c in columns)


def _insert_into(table: str, columns: tuple[str, ...], rows: int) -> str:
    one = "(" + ", ".join("?" * len(columns)) + ")"
    return f"INSERT INTO {table} ({quoted(columns)}) VALUES " + ", ".join([one] * rows)


@functools.lru_cache(maxsize=8)
def insert_results(rows: int) -> str:
    """INSERT INTO case_results (...) VALUES (?, ...), ... for ``rows`` rows."""
    return _insert_into("case_results", RESULT_COLUMNS, rows)


@functools.lru_cache(maxsize=8)
def insert_verdicts(rows: int) -> str:
    """INSERT INTO verdicts_not_passed (...) VALUES ... for ``rows`` rows."""
    return _insert_into("verdicts_not_passed", VERDICT_COLUMNS, rows)


@functools.lru_cache(maxsize=8)
def insert_bodies(rows: int) -> str:
    """INSERT INTO case_bodies (...) VALUES ... for ``rows`` rows."""
    return _insert_into("case_bodies", BODY_COLUMNS, rows)


Execute = Callable[[str, tuple[object, ...]], object]


def insert_chunks(
    execute: Execute, statement: Callable[[int], str], width: int, params: list[object]
) -> None:
    """``params`` (``width`` per row) inserted in as few statements as SQLite allows.

    SQLite's driver leaves and re-takes the GIL once per executed row; multi-row INSERTs of a
    prebuilt statement do it once per 100 rows, and skip per-row parameter processing.
    """
    step = (MAX_PARAMETERS // width) * width
    for start in range(0, len(params), step):
        chunk = params[start : start + step]
        execute(statement(len(chunk) // width), tuple(chunk))


def insert_rows(execute: Execute, rows: SqliteRows) -> None:
    """Every row of ``rows``, through ``execute`` (a connection's), in the caller's
    transaction."""
    insert_chunks(execute, insert_results, len(RESULT_COLUMNS), rows.results)
    insert_chunks(execute, insert_verdicts, len(VERDICT_COLUMNS), rows.verdicts)
    insert_chunks(execute, insert_bodies, len(BODY_COLUMNS), rows.bodies)


def store_rows(
    conn: sqlite3.Connection, run_id: str, rows: SqliteRows, *, replace: range | None = None
) -> None:
    """Insert ``rows`` in one transaction of ``conn`` (a worker's own connection, in
    autocommit mode), after deleting the run's rows at the positions ``replace`` (a chunk
    tried again, whose first try may have committed before its process died).

    The write lock is taken first (``BEGIN IMMEDIATE``), so a busy database is waited for up
    to the connection's busy timeout instead of failing at the first insert. On any error the
    transaction is rolled back: nothing of the chunk is stored.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        if replace is not None:
            for table in TABLES:
                conn.execute(
                    f"DELETE FROM {table} WHERE run_id = ? AND idx >= ? AND idx < ?",
                    (run_id, replace.start, replace.stop),
                )
        insert_rows(conn.execute, rows)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.rollback()
        raise
