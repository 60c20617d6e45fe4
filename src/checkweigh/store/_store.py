"""The results store: runs and case results in SQLite (default) or any SQLAlchemy database."""

from __future__ import annotations

import functools
import os
import secrets
import sqlite3
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel
from sqlalchemy import Engine, Table, create_engine, event, insert, select, update
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, SQLAlchemyError

from ..core import CaseResult, RunSummary
from ..errors import InputError, StoreError
from ._migrate import upgrade
from ._tables import ResultRow, RunRow

DEFAULT_DB_PATH = Path(".checkweigh") / "checkweigh.db"
DB_ENV = "CHECKWEIGH_DB"


class RunStatus(StrEnum):
    """Where a run stands."""

    RUNNING = "running"
    COMPLETE = "complete"
    INCOMPLETE = "incomplete"
    """Interrupted or stopped by bad input: it keeps every case that finished."""


class RunInfo(BaseModel):
    """A stored run, as listed and shown."""

    id: str
    """The run's id."""
    suite: str
    """The suite's name."""
    suite_path: str
    """Where the suite file was."""
    status: RunStatus
    """running, complete or incomplete."""
    created_at: datetime
    """When it started (UTC, without a zone)."""
    finished_at: datetime | None
    """When it ended (UTC, without a zone)."""
    repeat: int
    """Repeats per case."""
    executions: int
    """Case executions stored."""
    gates_passed: bool | None
    """Whether its gates passed (None until finished)."""
    config: dict[str, Any]
    """The resolved configuration snapshot."""
    summary: RunSummary | None
    """Its aggregates (None until finished)."""


def resolve_url(url: str | None) -> str:
    """The database URL: the argument, else $CHECKWEIGH_DB, else the default SQLite file.

    A PostgreSQL URL without a driver (``postgresql://`` or ``postgres://``) uses psycopg 3.
    """
    chosen = url or os.environ.get(DB_ENV) or f"sqlite:///{DEFAULT_DB_PATH}"
    try:
        parsed = make_url(chosen)
    except ArgumentError:
        raise InputError(
            f"invalid database URL {chosen!r}; expected e.g. sqlite:///results.db or "
            "postgresql://user@host/db",
            field="--db",
        ) from None
    if parsed.drivername in ("postgresql", "postgres"):
        return parsed.set(drivername="postgresql+psycopg").render_as_string(hide_password=False)
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    return chosen


def _dumps(value: Any) -> str:
    """JSON for the JSON columns: orjson is several times faster than the standard library."""
    return orjson.dumps(value).decode()


_BUSY_TIMEOUT_S = 30.0
"""How long a SQLite writer waits for another process's write to finish."""


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    # WAL lets readers go on while one writer writes; writers wait their turn for up to the busy
    # timeout.
    cur = dbapi_conn.cursor()
    cur.execute(f"PRAGMA busy_timeout={int(_BUSY_TIMEOUT_S * 1000)}")
    _use_wal(cur)
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


def _use_wal(cur: sqlite3.Cursor) -> None:
    """Switch the file to WAL (once; the mode is stored in the file).

    Switching needs the file to itself and fails at once with "database is locked", without
    waiting for the busy timeout, while a second process opens a new file too: retry then.
    """
    deadline = time.monotonic() + _BUSY_TIMEOUT_S
    while True:
        try:
            if cur.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                cur.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def _first_line(exc: SQLAlchemyError) -> str:
    """The driver's own message, first line: SQLAlchemy's adds the statement and a link."""
    text = str(getattr(exc, "orig", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


CONNECT_TIMEOUT_S = 10


def connect_args(url: str) -> dict[str, Any]:
    """Driver options: PostgreSQL gives up connecting after ``CONNECT_TIMEOUT_S`` seconds
    (libpq's default is to wait forever on an address that drops packets), unless the URL
    sets its own ``connect_timeout``."""
    u = make_url(url)
    if u.get_backend_name() == "postgresql" and "connect_timeout" not in u.query:
        return {"connect_timeout": CONNECT_TIMEOUT_S}
    return {}


class Store:
    """Runs and results in one database. Pass it explicitly; there is no global store."""

    def __init__(self, url: str | None = None) -> None:
        """Open the database at ``url`` (see :func:`resolve_url`) and migrate it to the newest
        schema revision.

        Raises:
            InputError: the URL is invalid or its driver is not installed.
            StoreError: the database cannot be opened or migrated.
        """
        self.url = resolve_url(url)
        try:
            self.engine: Engine = create_engine(
                self.url,
                json_serializer=_dumps,
                json_deserializer=orjson.loads,
                connect_args=connect_args(self.url),
            )
        except (ArgumentError, NoSuchModuleError) as exc:
            raise InputError(
                f"cannot use database URL {self.safe_url!r}: {exc}", field="--db"
            ) from None
        except ImportError as exc:
            hint = (
                "pip install 'checkweigh[postgres]'"
                if make_url(self.url).get_backend_name() == "postgresql"
                else "e.g. pip install 'psycopg[binary]' for PostgreSQL"
            )
            raise InputError(
                f"the database driver for {self.safe_url!r} is not installed ({exc.name}); "
                f"install it, {hint}",
                field="--db",
            ) from None
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        try:
            upgrade(self.engine)
        except SQLAlchemyError as exc:
            self.engine.dispose()
            raise StoreError(f"cannot open database {self.safe_url}: {_first_line(exc)}") from None
        except StoreError:
            self.engine.dispose()
            raise

    @property
    def safe_url(self) -> str:
        """The URL with any password hidden, for messages."""
        return make_url(self.url).render_as_string(hide_password=True)

    def close(self) -> None:
        """Release the connection pool."""
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def create_run(self, suite: str, suite_path: str, config: dict[str, Any], repeat: int) -> str:
        """Record a new running run with its configuration snapshot; return its id."""
        run_id = _new_run_id()
        with self.engine.begin() as conn:
            conn.execute(
                insert(RunRow).values(
                    id=run_id,
                    suite=suite,
                    suite_path=suite_path,
                    status=RunStatus.RUNNING.value,
                    created_at=datetime.now(UTC),
                    repeat=repeat,
                    executions=0,
                    config=config,
                )
            )
        return run_id

    def add_results(self, run_id: str, results: list[CaseResult]) -> None:
        """Persist finished executions in one transaction."""
        if not results:
            return
        dialect = self.engine.dialect
        if dialect.name == "sqlite":
            self._add_results_sqlite(run_id, results)
        elif dialect.name == "postgresql" and dialect.driver == "psycopg":
            self._add_results_copy(run_id, results)
        else:
            self._add_results_generic(run_id, results)

    def _add_results_generic(self, run_id: str, results: list[CaseResult]) -> None:
        rows = [
            {
                "run_id": run_id,
                "idx": r.position,
                "case_id": r.case_id,
                "repeat": r.repeat,
                "errored": r.errored,
                "latency_ms": r.latency_ms,
                "record": r.to_record(),
            }
            for r in results
        ]
        with self.engine.begin() as conn:
            conn.execute(insert(_RESULTS), rows)

    def _add_results_sqlite(self, run_id: str, results: list[CaseResult]) -> None:
        # SQLite's driver leaves and re-takes the GIL once per executed row; multi-row INSERTs
        # of a prebuilt statement do it once per 100 rows. That keeps the writer thread from
        # stalling behind the scoring thread, and skips per-row parameter processing.
        params: list[object] = []
        for r in results:
            params += (
                run_id,
                r.position,
                r.case_id,
                r.repeat,
                r.errored,
                r.latency_ms,
                _dumps(r.to_record()),
            )
        width = len(_RESULT_COLUMNS)
        step = _ROWS_PER_INSERT * width
        with self.engine.begin() as conn:
            for start in range(0, len(params), step):
                chunk = params[start : start + step]
                conn.exec_driver_sql(_sqlite_insert(len(chunk) // width), tuple(chunk))

    def _add_results_copy(self, run_id: str, results: list[CaseResult]) -> None:
        # PostgreSQL's COPY streams the rows in one command: about three times the rows per
        # second of an executemany (which psycopg already pipelines), JSON encoded by orjson.
        # PostgreSQL text cannot hold NUL: the case_id column gets U+FFFD for it, the record
        # (which results are read back from) keeps the id exactly, escaped as JSON.
        dialect = self.engine.dialect
        with self.engine.begin() as conn:
            try:
                with conn.connection.cursor().copy(_COPY_RESULTS) as copy:
                    for r in results:
                        copy.write_row(
                            (
                                run_id,
                                r.position,
                                r.case_id.replace("\x00", "\ufffd"),
                                r.repeat,
                                r.errored,
                                r.latency_ms,
                                _dumps(r.to_record()),
                            )
                        )
            except dialect.loaded_dbapi.Error as exc:
                # the driver's own error, raised as SQLAlchemy raises the other paths' errors
                raise DBAPIError.instance(
                    _COPY_RESULTS, None, exc, dialect.loaded_dbapi.Error, dialect=dialect
                ) from exc

    def finish_run(self, run_id: str, status: RunStatus, summary: RunSummary) -> None:
        """Mark a run complete or incomplete and store its summary."""
        with self.engine.begin() as conn:
            conn.execute(
                update(RunRow)
                .where(RunRow.id == run_id)
                .values(
                    status=status.value,
                    finished_at=datetime.now(UTC),
                    executions=summary.executions,
                    gates_passed=summary.gates_passed if summary.gates else None,
                    summary=summary.model_dump(mode="json"),
                )
            )

    def list_runs(self, limit: int = 20, suite: str | None = None) -> list[RunInfo]:
        """The newest runs first."""
        stmt = select(RunRow).order_by(RunRow.created_at.desc(), RunRow.id.desc()).limit(limit)
        if suite:
            stmt = stmt.where(RunRow.suite == suite)
        with self.engine.connect() as conn:
            return [_info(row) for row in conn.execute(stmt).mappings()]

    def get_run(self, ref: str) -> RunInfo:
        """A run by id, unique id prefix, ``latest`` or ``previous``.

        Raises:
            InputError: no such run, or the prefix is ambiguous.
        """
        with self.engine.connect() as conn:
            if ref in ("latest", "previous"):
                offset = 0 if ref == "latest" else 1
                stmt = select(RunRow).order_by(RunRow.created_at.desc(), RunRow.id.desc())
                rows = list(conn.execute(stmt.offset(offset).limit(1)).mappings())
            else:
                stmt = select(RunRow).where(RunRow.id.startswith(ref, autoescape=True)).limit(2)
                rows = list(conn.execute(stmt).mappings())
        if not rows:
            raise InputError(f"no run {ref!r} in {self.safe_url}", field="RUN")
        if len(rows) > 1:
            raise InputError(f"run id prefix {ref!r} is ambiguous; give more of it", field="RUN")
        return _info(rows[0])

    def iter_results(self, run_id: str, batch: int = 1000) -> Iterator[CaseResult]:
        """The run's results in input order (case, then repeat), streamed."""
        info = self.get_run(run_id)
        rubric_checks = {r["name"]: list(r["weights"]) for r in info.config.get("rubrics", [])}
        stmt = (
            select(ResultRow.record)
            .where(ResultRow.run_id == info.id)
            .order_by(ResultRow.idx, ResultRow.repeat)
            .execution_options(yield_per=batch)
        )
        with self.engine.connect() as conn:
            for (record,) in conn.execute(stmt):
                yield CaseResult.from_record(record, rubric_checks)


_ROWS_PER_INSERT = 100
"""Rows per INSERT statement: 7 parameters a row stays under SQLite's 999-parameter limit."""
_RESULT_COLUMNS = ("run_id", "idx", "case_id", "repeat", "errored", "latency_ms", "record")
_QUOTED_COLUMNS = ", ".join(f'"{c}"' for c in _RESULT_COLUMNS)
_COPY_RESULTS = f"COPY case_results ({_QUOTED_COLUMNS}) FROM STDIN"


@functools.lru_cache(maxsize=4)
def _sqlite_insert(rows: int) -> str:
    """INSERT INTO case_results (...) VALUES (?, ...), ... for ``rows`` rows."""
    one = "(" + ", ".join("?" * len(_RESULT_COLUMNS)) + ")"
    return f"INSERT INTO case_results ({_QUOTED_COLUMNS}) VALUES " + ", ".join([one] * rows)


_RESULTS: Table = ResultRow.__table__  # type: ignore[assignment]
"""The results table itself, for Core inserts."""


def _naive_utc(value: datetime | None) -> datetime | None:
    """Times in UTC without a zone, as SQLite gives them back; PostgreSQL's are zoned."""
    if value is None or value.tzinfo is None:
        return value
    return value.astimezone(UTC).replace(tzinfo=None)


def _info(row: Any) -> RunInfo:
    return RunInfo(
        id=row["id"],
        suite=row["suite"],
        suite_path=row["suite_path"],
        status=RunStatus(row["status"]),
        created_at=_naive_utc(row["created_at"]),
        finished_at=_naive_utc(row["finished_at"]),
        repeat=row["repeat"],
        executions=row["executions"],
        gates_passed=row["gates_passed"],
        config=row["config"],
        summary=RunSummary.model_validate(row["summary"]) if row["summary"] else None,
    )


class ResultWriter:
    """Buffers results and writes them in batches: when ``batch_size`` are waiting or
    ``max_delay_s`` has passed since the last write, and always on :meth:`flush`.

    Writing happens on the calling thread: a background writer was measured slower, because
    the driver's GIL hand-offs stall it behind the scoring thread.
    """

    def __init__(
        self, store: Store, run_id: str, *, batch_size: int = 500, max_delay_s: float = 0.5
    ) -> None:
        self.store = store
        self.run_id = run_id
        self.batch_size = batch_size
        self.max_delay_s = max_delay_s
        self.written = 0
        """Results stored so far."""
        self._buffer: list[CaseResult] = []
        self._last = time.monotonic()

    def __enter__(self) -> ResultWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.flush()

    def add(self, result: CaseResult) -> None:
        """Queue one result; write the batch if it is due."""
        self._buffer.append(result)
        if len(self._buffer) >= self.batch_size or (
            time.monotonic() - self._last >= self.max_delay_s
        ):
            self.flush()

    def flush(self) -> None:
        """Write everything queued."""
        if self._buffer:
            batch, self._buffer = self._buffer, []
            self.store.add_results(self.run_id, batch)
            self.written += len(batch)
        self._last = time.monotonic()
