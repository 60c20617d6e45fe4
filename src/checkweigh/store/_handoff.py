"""What a store lets other processes do with a run's results (see :meth:`Store.handoff`).

A run scored by worker processes hands its results back to the process that owns the store.
Building a result's rows costs more than inserting them, so a SQLite store lets the workers
build them (the driver then only inserts them), and, for a run whose results need not come
back one by one, store them in the file themselves. The executor that runs the workers knows
only this value: which of the two it may do, and the two calls that do it.

Imports no SQLAlchemy: a worker process does not load it.
"""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path

from ..core import CaseResult
from ..errors import StoreError
from ._rows import SqliteRows, sqlite_rows, store_rows

Rows = SqliteRows
"""A batch of results as the store's rows (plain values, cheap to send between processes)."""

BUSY_TIMEOUT_S = 30.0
"""How long a worker waits for SQLite's one writer slot."""


@dataclass(frozen=True)
class Handoff:
    """A run's results, turned into the store's rows (or stored) where they were scored.

    Picklable and hashable: it travels to worker processes inside their task's spec.
    """

    run_id: str
    """The run the rows belong to."""
    file: Path | None = None
    """The run's SQLite file, when workers may store their rows in it themselves (see
    :meth:`write`); None: they build rows for the driver to insert."""

    def rows(self, results: list[CaseResult]) -> Rows:
        """``results`` as the store's rows, for the driver's :meth:`ResultWriter.add_rows`."""
        return sqlite_rows(self.run_id, results)

    def write(
        self,
        results: list[CaseResult],
        *,
        replace: range | None = None,
        lock: AbstractContextManager[object] | None = None,
    ) -> None:
        """Store ``results`` in the run's file, in one transaction held under ``lock`` (the
        workers' shared lock: SQLite has one writer at a time), after deleting the run's
        rows at the positions ``replace`` (a batch tried again).

        Raises:
            StoreError: nothing of ``results`` was stored.
        """
        assert self.file is not None, "write() needs a handoff with a file"
        rows = sqlite_rows(self.run_id, results)
        try:
            with lock if lock is not None else nullcontext():
                store_rows(_connection(self.file), self.run_id, rows, replace=replace)
        except sqlite3.Error as exc:
            raise StoreError(
                f"cannot write results to {self.file}: {str(exc).splitlines()[0]}"
            ) from None


_CONNECTIONS: dict[Path, sqlite3.Connection] = {}


def _connection(path: Path) -> sqlite3.Connection:
    """This process's connection to the run's SQLite file, opened on its first write."""
    conn = _CONNECTIONS.get(path)
    if conn is None:
        # autocommit: store_rows opens its own transaction; a writer waits its turn (one
        # at a time in SQLite) for up to the busy timeout
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        # the driver's checkpointer thread moves the log into the file (see store._checkpoint)
        conn.execute("PRAGMA wal_autocheckpoint=0")
        _CONNECTIONS[path] = conn
    return conn
