"""The results store: runs and case results in SQLite (default) or any SQLAlchemy database."""

from __future__ import annotations

import logging
import secrets
import warnings
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal, NamedTuple

import orjson
from pydantic import BaseModel
from sqlalchemy import (
    Connection,
    Engine,
    Select,
    Table,
    case,
    create_engine,
    delete,
    event,
    func,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import (
    ArgumentError,
    DBAPIError,
    NoSuchModuleError,
    SAWarning,
    SQLAlchemyError,
)

from ..core import CaseResult, ResultRecord, RunSummary
from ..errors import InputError, StoreError
from ._checkpoint import DEFAULT_AUTOCHECKPOINT, Checkpointer
from ._connect import _sqlite_pragmas, connect_args, resolve_url
from ._handoff import Handoff
from ._migrate import upgrade
from ._owner import Owner, is_dead
from ._recover import rebuild_summary
from ._rows import (
    ALL_REPEATS,
    BODY_COLUMNS,
    RESULT_COLUMNS,
    TABLES,
    UNSTORABLE,
    VERDICT_COLUMNS,
    SqliteRows,
    _dumps,
    _exchanges,
    case_rows,
    insert_rows,
    quoted,
    record_json,
    record_value,
    sqlite_rows,
    storable,
    verdict_rows,
)
from ._tables import CaseBodyRow, ResultRow, RunRow, VerdictRow


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
    """Case executions stored (for a running run: stored so far, as the run goes on)."""
    gates_passed: bool | None
    """Whether its gates passed (None until finished, for a run without gates, and for an
    incomplete run: its gates are not decided)."""
    config: dict[str, Any]
    """The resolved configuration snapshot."""
    summary: RunSummary | None
    """Its aggregates (None until finished)."""
    abandoned: bool = False
    """Its process died before finishing it (found on a later open): it is incomplete, and its
    summary was rebuilt from the results it had stored."""

    def verdict(self) -> RunVerdict:
        """What the run's gates decided, as ``checkweigh show`` reads it: its two pass
        dimensions and suite gates on a complete run; none on a run still running or one that
        ended early (not passed, yet not a measured failure either). Whether the suite has a
        ``gates:`` block does not matter."""
        if self.summary is None or self.status is RunStatus.RUNNING:
            return RunVerdict("not decided", "the run is still running")
        if self.status is not RunStatus.COMPLETE:
            cause = "its process died" if self.abandoned else "it was interrupted"
            return RunVerdict(
                "not decided", f"{cause}: its gates were measured on part of the cases only"
            )
        if self.summary.gates_passed:
            return RunVerdict("passed", "every pass threshold and gate was met")
        if self.summary.gates_passed is None:
            return RunVerdict("not decided", "; ".join(self.summary.to_decide()))
        return RunVerdict("failed", "a pass threshold or gate was not met")


class RunVerdict(NamedTuple):
    """What a run's gates decided."""

    word: Literal["passed", "failed", "not decided"]
    """The verdict."""
    why: str
    """What it rests on (for a run not decided, why not)."""


def _first_line(exc: SQLAlchemyError) -> str:
    """The driver's own message, first line: SQLAlchemy's adds the statement and a link."""
    text = str(getattr(exc, "orig", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _sqlite_file(url: str) -> Path | None:
    """The file of a SQLite URL (None for other databases, memory and URI filenames)."""
    parsed = make_url(url)
    name = parsed.database or ""
    if (
        parsed.get_backend_name() != "sqlite"
        or name in ("", ":memory:")
        or name.startswith("file:")
    ):
        return None
    # absolute now: an agent that changes the working folder must not move the database
    return Path(name).expanduser().absolute()


def database_file(url: str | None) -> Path | None:
    """The SQLite file the database URL (or $CHECKWEIGH_DB, or the default) names; None for
    other databases. For refusing an output file that would overwrite it."""
    return _sqlite_file(resolve_url(url))


def in_memory(url: str | None) -> bool:
    """Whether the database URL is an in-memory SQLite database (``sqlite://``, ``sqlite:///``,
    ``sqlite:///:memory:``): gone when the process ends."""
    parsed = make_url(resolve_url(url))
    return parsed.get_backend_name() == "sqlite" and (parsed.database or "") in ("", ":memory:")


def _engine_url(url: str) -> str:
    """``url`` with a SQLite file's path made absolute (connections the pool opens later, in
    whatever folder the process is in by then, reach the same file)."""
    path = _sqlite_file(url)
    if path is None:
        return url
    return make_url(url).set(database=str(path)).render_as_string(hide_password=False)


def _identity(path: Path | None) -> tuple[int, int] | None:
    """The (device, inode) of ``path``; None when it does not exist (or there is none)."""
    if path is None:
        return None
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


@contextmanager
def _db_errors(action: str) -> Iterator[None]:
    """A database failure (disk full, read-only file, lost connection) as one-line
    :class:`StoreError`."""
    try:
        yield
    except SQLAlchemyError as exc:
        raise StoreError(f"cannot {action}: {_first_line(exc)}") from None


_log = logging.getLogger("checkweigh.store")

_OPEN: list[weakref.finalize[..., Store]] = []
"""How to close each store of this process that may still be open, for :func:`close_stores`."""


def close_stores() -> None:
    """Close every store still open in this process (see :meth:`Store.close`). The CLI calls it
    as a command ends, however it ends: its process then leaves with ``os._exit``, which runs
    no clean-up of its own."""
    for close in list(_OPEN):
        close()
    _OPEN.clear()


_CLOSE_WAIT_MS = 2000
"""How long closing a SQLite store waits for another process's write to checkpoint the file."""


def _release(engine: Engine, file: Path | None, identity: tuple[int, int] | None) -> None:
    """Checkpoint a SQLite file's log into the file and empty it, then release the pool.

    TRUNCATE: a copy of the ``.db`` file alone then holds every run, and no ``-wal`` sidecar of
    hundreds of MB stays behind. A file deleted or replaced meanwhile is left alone.
    """
    if file is not None and _identity(file) == identity:
        try:
            with engine.connect() as conn:
                # TRUNCATE waits for another process's writer: a while, not the 30 s a write
                # waits (its run goes on writing; it checkpoints the file when it closes)
                conn.exec_driver_sql(f"PRAGMA busy_timeout={_CLOSE_WAIT_MS}")
                conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        except SQLAlchemyError as exc:
            # another process reading or writing the file holds the log: it is still
            # consistent, and the next checkpoint (or that process's close) moves it
            _log.warning("cannot checkpoint %s on close: %s", file, _first_line(exc))
    engine.dispose()


def _new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


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
            # a warning here is a URL option the driver ignores (sqlite:///x.db?mode=ro without
            # uri=true would silently write): refuse it rather than print a warning and go on
            with warnings.catch_warnings():
                warnings.simplefilter("error", SAWarning)
                self.engine: Engine = create_engine(
                    _engine_url(self.url),
                    json_serializer=_dumps,
                    json_deserializer=orjson.loads,
                    connect_args=connect_args(self.url),
                )
        except (ArgumentError, NoSuchModuleError, SAWarning) as exc:
            reason = str(exc).split(" (Background on", 1)[0].replace(" and are being ignored", "")
            raise InputError(
                f"cannot use database URL {self.safe_url!r}: {reason}", field="--db"
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
        self._file = _sqlite_file(self.url)
        self._identity = _identity(self._file)
        self._checkpointer: Checkpointer | None = None
        try:
            self.reap_abandoned()
        except StoreError:
            self.engine.dispose()
            raise
        # closed by close(), by close_stores(), or once the store is garbage, whichever first
        self._release = weakref.finalize(self, _release, self.engine, self._file, self._identity)
        _OPEN[:] = [*(f for f in _OPEN if f.alive), self._release]

    @property
    def safe_url(self) -> str:
        """The URL with any password hidden, for messages."""
        return make_url(self.url).render_as_string(hide_password=True)

    def close(self) -> None:
        """Release the connection pool. A SQLite file's write-ahead log is first moved into the
        file and truncated (``PRAGMA wal_checkpoint(TRUNCATE)``), so that the ``.db`` file alone
        holds every run. Closing it again does nothing."""
        self._release()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def create_run(self, suite: str, suite_path: str, config: dict[str, Any], repeat: int) -> str:
        """Record a new running run with its configuration snapshot; return its id.

        The run is owned by this process: should it die before :meth:`finish_run`, a later
        open finds the run abandoned (see :meth:`reap_abandoned`).
        """
        run_id = _new_run_id()
        owner = Owner.current()
        now = datetime.now(UTC)
        with _db_errors(f"record the run in {self.safe_url}"), self.engine.begin() as conn:
            conn.execute(
                insert(RunRow).values(
                    id=run_id,
                    suite=suite,
                    suite_path=suite_path,
                    status=RunStatus.RUNNING.value,
                    created_at=now,
                    repeat=repeat,
                    executions=0,
                    config=config,
                    pid=owner.pid,
                    host=owner.host,
                    process_start=owner.start,
                    heartbeat_at=now,
                )
            )
        return run_id

    def heartbeat(self, run_id: str) -> None:
        """Note that the run's process is alive (the result writer calls it as it writes)."""
        with _db_errors(f"update the run in {self.safe_url}"), self.engine.begin() as conn:
            conn.execute(
                update(RunRow).where(RunRow.id == run_id).values(heartbeat_at=datetime.now(UTC))
            )

    def count_results(self, run_id: str) -> int:
        """How many results of the run are stored."""
        stmt = select(func.count()).select_from(ResultRow).where(ResultRow.run_id == run_id)
        with _db_errors(f"read {self.safe_url}"), self.engine.connect() as conn:
            return int(conn.execute(stmt).scalar_one())

    def reap_abandoned(self) -> list[str]:
        """Mark incomplete (and abandoned) every running run whose process is gone, with a
        summary rebuilt from its stored results; return their ids."""
        stmt = select(
            RunRow.id, RunRow.pid, RunRow.host, RunRow.process_start, RunRow.heartbeat_at
        ).where(RunRow.status == RunStatus.RUNNING.value)
        with _db_errors(f"read {self.safe_url}"), self.engine.connect() as conn:
            dead = [row.id for row in conn.execute(stmt) if is_dead(*row[1:])]
        for run_id in dead:
            info = self.get_run(run_id)
            note = (
                "abandoned: the process running this run died before finishing it; "
                "the summary was rebuilt from the results it had stored"
            )
            summary = rebuild_summary(info.config, info.repeat, self.iter_results(run_id), note)
            self._finish(run_id, RunStatus.INCOMPLETE, summary, abandoned=True)
        return dead

    def add_results(self, run_id: str, results: list[CaseResult]) -> None:
        """Persist finished executions in one transaction."""
        if not results:
            return
        dialect = self.engine.dialect
        self.check_file()
        with _db_errors(f"write results to {self.safe_url}"):
            if dialect.name == "sqlite":
                self._add_results_sqlite(run_id, results)
                return
            add = (
                self._add_results_copy
                if dialect.name == "postgresql" and dialect.driver == "psycopg"
                else self._add_results_generic
            )
            try:
                add(run_id, results)
            except UNSTORABLE:  # rolled back: stored again with the culprit errored
                add(run_id, storable(results))

    def _add_results_generic(self, run_id: str, results: list[CaseResult]) -> None:
        with self.engine.begin() as conn:
            write_results(conn, run_id, results)

    def _add_results_sqlite(self, run_id: str, results: list[CaseResult]) -> None:
        self._insert_sqlite(sqlite_rows(run_id, results))

    def add_rows(self, rows: SqliteRows) -> None:
        """Persist results that a worker process already turned into rows (see
        :attr:`takes_rows`) in one transaction."""
        if not self.takes_rows:
            raise ValueError("rows built for SQLite are stored in a SQLite database only")
        self.check_file()
        with _db_errors(f"write results to {self.safe_url}"):
            self._insert_sqlite(rows)

    @property
    def takes_rows(self) -> bool:
        """Whether :meth:`add_rows` works here: results built into rows elsewhere (a worker
        process) leave the writer only the insert. SQLite only."""
        return self.engine.dialect.name == "sqlite"

    def _insert_sqlite(self, rows: SqliteRows) -> None:
        # multi-row INSERTs of prebuilt statements (see _rows.insert_chunks): the writer thread
        # does not stall behind the scoring thread once per row
        pages = 0 if self._checkpointer is not None else DEFAULT_AUTOCHECKPOINT
        with self.engine.begin() as conn:
            # per connection: the pool's connection writing now defers to the checkpointer
            conn.exec_driver_sql(f"PRAGMA wal_autocheckpoint={pages}")
            insert_rows(conn.exec_driver_sql, rows)

    @property
    def sqlite_file(self) -> Path | None:
        """The SQLite file, which worker processes may write results into themselves (see
        :func:`~checkweigh.store._rows.store_rows`); None for other databases and memory."""
        return self._file if self.takes_rows else None

    def handoff(self, run_id: str, *, workers_store: bool = False) -> Handoff | None:
        """What worker processes may do with the results of ``run_id`` (see
        :class:`~checkweigh.store.Handoff`): build the store's rows, and with
        ``workers_store`` store them in the file themselves; None when this store takes
        results only as results (PostgreSQL, memory for ``workers_store``)."""
        if not self.takes_rows:
            return None
        file = self.sqlite_file if workers_store else None
        return Handoff(run_id, file)

    def discard_results(self, run_id: str, start: int) -> None:
        """Delete the run's results at positions ``start`` and after: rows that worker
        processes committed past the cases the run acknowledged (a run stopped by an error or
        a stop request keeps exactly the cases it reports)."""
        self.check_file()
        with _db_errors(f"write results to {self.safe_url}"), self.engine.begin() as conn:
            for table in TABLES:
                conn.exec_driver_sql(
                    f"DELETE FROM {table} WHERE run_id = ? AND idx >= ?", (run_id, start)
                )

    def delete_run(self, run_id: str) -> None:
        """Delete the run and all its results: a run refused for a bad case its workers met,
        which keeps nothing, as a run whose cases file was screened first would have."""
        with _db_errors(f"delete the run from {self.safe_url}"), self.engine.begin() as conn:
            for table in TABLES:
                conn.execute(text(f"DELETE FROM {table} WHERE run_id = :run"), {"run": run_id})
            conn.execute(delete(RunRow).where(RunRow.id == run_id))

    def _add_results_copy(self, run_id: str, results: list[CaseResult]) -> None:
        # PostgreSQL's COPY streams the rows in one command: about three times the rows per
        # second of an executemany (which psycopg already pipelines), JSON encoded by orjson.
        # PostgreSQL text cannot hold NUL: the case_id column gets U+FFFD for it, the record
        # (which results are read back from) keeps the id exactly, escaped as JSON.
        dialect = self.engine.dialect
        with self.engine.begin() as conn:
            cursor = conn.connection.cursor()
            try:
                with cursor.copy(_COPY_RESULTS) as copy:
                    for r in results:
                        exchanges = _exchanges(r)
                        copy.write_row(
                            (
                                run_id,
                                r.position,
                                r.case_id.replace("\x00", "\ufffd"),
                                r.repeat,
                                r.errored,
                                r.latency_ms,
                                record_json(r),
                                None if exchanges is None else _dumps(exchanges),
                            )
                        )
                with cursor.copy(_COPY_VERDICTS) as copy:
                    for check, *rest in verdict_rows(results):
                        copy.write_row((run_id, check.replace("\x00", "\ufffd"), *rest))
                with cursor.copy(_COPY_BODIES) as copy:
                    for row in case_rows(results):
                        copy.write_row((run_id, *row))
            except dialect.loaded_dbapi.Error as exc:
                # the driver's own error, raised as SQLAlchemy raises the other paths' errors
                raise DBAPIError.instance(
                    _COPY_RESULTS, None, exc, dialect.loaded_dbapi.Error, dialect=dialect
                ) from exc

    def finish_run(self, run_id: str, status: RunStatus, summary: RunSummary) -> int:
        """Mark a run complete or incomplete and store its summary; return how many results
        the store holds for it (also stored as its ``executions``)."""
        return self._finish(run_id, status, summary)

    def tag_run(self, run_id: str, key: str, value: Any) -> None:
        """Keep ``key: value`` in the run's stored configuration, beside how it ran: what the
        run is for (``compare --rejudge`` tags the run it stores as the rejudge of a base)."""
        config = {**self.get_run(run_id).config, key: value}
        with _db_errors(f"write {self.safe_url}"), self.engine.begin() as conn:
            conn.execute(update(RunRow).where(RunRow.id == run_id).values(config=config))

    @contextmanager
    def writing(self) -> Iterator[None]:
        """While a run writes its results: a SQLite file's log is checkpointed on a second
        thread rather than by the writer (see :mod:`._checkpoint`); nothing changes for other
        databases."""
        if self._file is None or self._checkpointer is not None:
            yield
            return
        self._checkpointer = Checkpointer(self._file)
        try:
            yield
        finally:
            checkpointer, self._checkpointer = self._checkpointer, None
            checkpointer.stop()

    def check_file(self) -> None:
        """Fail when the SQLite file was deleted or replaced since it was opened: SQLite would
        go on writing into the deleted file, and every result would be lost with it.

        Raises:
            StoreError: the file is gone or is another file now.
        """
        if self._file is not None and _identity(self._file) != self._identity:
            raise StoreError(
                f"cannot write results to {self.safe_url}: the database file was deleted or "
                "replaced while the run was writing to it"
            )

    @property
    def file_lost(self) -> bool:
        """Whether the SQLite file was deleted or replaced since it was opened."""
        return self._file is not None and _identity(self._file) != self._identity

    def _finish(
        self, run_id: str, status: RunStatus, summary: RunSummary, *, abandoned: bool = False
    ) -> int:
        stored = (
            select(func.count())
            .select_from(ResultRow)
            .where(ResultRow.run_id == run_id)
            .scalar_subquery()
        )
        self.check_file()
        if status is not RunStatus.COMPLETE:  # whoever stopped it early: nothing is decided
            summary = summary.undecided(f"the run is {status.value}")
        stmt = update(RunRow).where(RunRow.id == run_id)
        if abandoned:  # another process may have reaped it meanwhile
            stmt = stmt.where(RunRow.status == RunStatus.RUNNING.value)
        with _db_errors(f"finish the run in {self.safe_url}"), self.engine.begin() as conn:
            conn.execute(
                stmt.values(
                    status=status.value,
                    finished_at=datetime.now(UTC),
                    executions=stored,
                    gates_passed=gates_column(summary),
                    summary=summary.model_dump(mode="json"),
                    abandoned=abandoned,
                )
            )
            return int(conn.execute(select(stored)).scalar_one())

    def list_runs(self, limit: int = 20, suite: str | None = None) -> list[RunInfo]:
        """The newest runs first."""
        stmt = run_rows().order_by(RunRow.created_at.desc(), RunRow.id.desc()).limit(limit)
        if suite:
            stmt = stmt.where(RunRow.suite == suite)
        with _db_errors(f"read {self.safe_url}"), self.engine.connect() as conn:
            return [_info(row) for row in conn.execute(stmt).mappings()]

    def get_run(self, ref: str) -> RunInfo:
        """A run by id, unique id prefix, ``latest``, ``previous`` or a monitor's window
        (``monitor:NAME``, ``monitor:NAME@2026-12-02T10:00``, ``monitor:NAME@-7d``: see
        :func:`~checkweigh.store.window_ref`). ``latest`` and ``previous`` are runs of an
        agent: a run ``compare --rejudge`` stored (a base's outputs judged again, tagged
        ``rejudge``) and a monitor's windows are found by their ids (or references) only.

        Raises:
            InputError: no such run, or the prefix is ambiguous.
        """
        if ref.startswith("monitor:"):  # a monitor's window, by time
            from ._live import window_ref

            ref = window_ref(self, ref)
        with _db_errors(f"read {self.safe_url}"), self.engine.connect() as conn:
            if ref in ("latest", "previous"):
                offset = 0 if ref == "latest" else 1
                stmt = (
                    run_rows()
                    .where(RunRow.config["rejudge"].as_string().is_(None))
                    .where(~RunRow.id.startswith("mon-"))
                    .order_by(RunRow.created_at.desc(), RunRow.id.desc())
                )
                rows = list(conn.execute(stmt.offset(offset).limit(1)).mappings())
            else:
                stmt = run_rows().where(RunRow.id.startswith(ref, autoescape=True)).limit(2)
                rows = list(conn.execute(stmt).mappings())
        if not rows:
            raise InputError(f"no run {ref!r} in {self.safe_url}", field="RUN")
        if len(rows) > 1:
            raise InputError(f"run id prefix {ref!r} is ambiguous; give more of it", field="RUN")
        return _info(rows[0])

    def iter_results(
        self, run_id: str, batch: int = 1000, *, with_cases: bool = False
    ) -> Iterator[CaseResult]:
        """The run's results in input order (case, then repeat), streamed.

        With ``with_cases`` each result carries the case it evaluated as stored, in ``body``
        (JSON bytes; None when the run stored none), for exports.
        """
        info = self.get_run(run_id)
        rubric_checks = {r["name"]: list(r["weights"]) for r in info.config.get("rubrics", [])}
        stmt = select(ResultRow.record)
        if with_cases:
            own, shared = CaseBodyRow.__table__.alias("own"), CaseBodyRow.__table__.alias("shared")
            stmt = (
                select(ResultRow.record, func.coalesce(own.c.body, shared.c.body))
                .outerjoin(
                    own,
                    (own.c.run_id == ResultRow.run_id)
                    & (own.c.idx == ResultRow.idx)
                    & (own.c.repeat == ResultRow.repeat),
                )
                .outerjoin(
                    shared,
                    (shared.c.run_id == ResultRow.run_id)
                    & (shared.c.idx == ResultRow.idx)
                    & (shared.c.repeat == ALL_REPEATS),
                )
            )
        stmt = (
            stmt.where(ResultRow.run_id == info.id)
            .order_by(ResultRow.idx, ResultRow.repeat)
            .execution_options(yield_per=batch)
        )
        with _db_errors(f"read {self.safe_url}"), self.engine.connect() as conn:
            for row in conn.execute(stmt):
                result = ResultRecord.read(row[0]).result(rubric_checks)
                if with_cases and row[1] is not None:
                    result = result._replace(body=bytes(row[1]))
                yield result


_COPY_RESULTS = f"COPY case_results ({quoted(RESULT_COLUMNS)}) FROM STDIN"
_COPY_VERDICTS = f"COPY verdicts_not_passed ({quoted(VERDICT_COLUMNS)}) FROM STDIN"
_COPY_BODIES = f"COPY case_bodies ({quoted(BODY_COLUMNS)}) FROM STDIN"


_RESULTS: Table = ResultRow.__table__  # type: ignore[assignment]
"""The results table itself, for Core inserts."""


def write_results(conn: Connection, run_id: str, results: list[CaseResult]) -> None:
    """Insert ``results`` of run ``run_id`` with ``conn``, in the caller's transaction (any
    database: plain inserts)."""
    rows = [
        {
            "run_id": run_id,
            "idx": r.position,
            "case_id": r.case_id,
            "repeat": r.repeat,
            "errored": r.errored,
            "latency_ms": r.latency_ms,
            "record": record_value(r),
            "exchanges": _exchanges(r),
        }
        for r in results
    ]
    verdicts = [
        {"run_id": run_id, "check": c, "state": s, "idx": i, "repeat": k}
        for c, s, i, k in verdict_rows(results)
    ]
    bodies = [
        {"run_id": run_id, "idx": i, "repeat": k, "body": body} for i, k, body in case_rows(results)
    ]
    conn.execute(insert(_RESULTS), rows)
    if verdicts:
        conn.execute(insert(VerdictRow), verdicts)
    if bodies:
        conn.execute(insert(CaseBodyRow), bodies)


def _naive_utc(value: datetime | None) -> datetime | None:
    """Times in UTC without a zone, as SQLite gives them back; PostgreSQL's are zoned."""
    if value is None or value.tzinfo is None:
        return value
    return value.astimezone(UTC).replace(tzinfo=None)


def run_rows() -> Select[Any]:
    """The runs table, with each running run's results counted so far as ``stored_so_far``:
    its own ``executions`` is written when it finishes (a reader mid-run would see 0)."""
    counted = (
        select(func.count())
        .select_from(ResultRow)
        .where(ResultRow.run_id == RunRow.id)
        .correlate(RunRow)
        .scalar_subquery()
    )
    live = case((RunRow.status == RunStatus.RUNNING.value, counted), else_=None)
    return select(RunRow, live.label("stored_so_far"))


def gates_column(summary: RunSummary) -> bool | None:
    """The runs table's ``gates_passed``: None when the run has no gate or they are not
    decided."""
    return summary.gates_passed if summary.gates or summary.case_gates else None


def _info(row: Any) -> RunInfo:
    summary = RunSummary.model_validate(row["summary"]) if row["summary"] else None
    status = RunStatus(row["status"])
    if summary is not None and status is not RunStatus.COMPLETE:
        summary = summary.undecided(f"the run is {status.value}")  # stored before it was said
    return RunInfo(
        id=row["id"],
        suite=row["suite"],
        suite_path=row["suite_path"],
        status=status,
        created_at=_naive_utc(row["created_at"]),
        finished_at=_naive_utc(row["finished_at"]),
        repeat=row["repeat"],
        executions=row["executions"] if row["stored_so_far"] is None else row["stored_so_far"],
        gates_passed=row["gates_passed"] if status is RunStatus.COMPLETE else None,
        config=row["config"],
        summary=summary,
        abandoned=bool(row["abandoned"]),
    )
