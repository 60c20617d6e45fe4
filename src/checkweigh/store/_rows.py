"""The rows a batch of results becomes in SQLite, built without the store.

A worker process (``--workers N``) builds them where it scored the results, so the driver,
which owns the one database connection, only inserts them; an in-process run builds them in
the writer. Either way the same function builds them, so the stored rows are the same.
Imports no SQLAlchemy: a worker process does not load it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

import orjson

from ..core import Case, CaseResult, VerdictState

ALL_REPEATS = -1
"""The ``repeat`` of a stored case that every repeat of it evaluated (read from its file)."""

_PASSED = VerdictState.PASSED
_to_json = Case.__pydantic_serializer__.to_json


def _dumps(value: Any) -> str:
    """JSON for the JSON columns: orjson is several times faster than the standard library."""
    return orjson.dumps(value).decode()


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
    """The rows that store ``results`` in run ``run_id`` (SQLite's parameters)."""
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
            _dumps(r.to_record()),
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
