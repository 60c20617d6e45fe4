"""Choosing and opening the database: the URL, the SQLite file's folder, driver options."""

from __future__ import annotations

import os
import re
import sqlite3
import time
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from ..errors import InputError

DEFAULT_DB_PATH = Path(".checkweigh") / "checkweigh.db"
DB_ENV = "CHECKWEIGH_DB"


def resolve_url(url: str | None) -> str:
    """The database URL: the argument, else $CHECKWEIGH_DB, else the default SQLite file.

    A PostgreSQL URL without a driver (``postgresql://`` or ``postgres://``) uses psycopg 3.
    """
    chosen = url or os.environ.get(DB_ENV) or f"sqlite:///{DEFAULT_DB_PATH}"
    try:
        parsed = make_url(chosen)
    except (ArgumentError, ValueError):  # ValueError: a port that is not a number
        # unparsed, so SQLAlchemy cannot hide the password: hide it here
        shown = re.sub(r"(://[^/@]*?:)[^/@]*@", r"\1***@", chosen)
        raise InputError(
            f"invalid database URL {shown!r}; expected e.g. sqlite:///results.db or "
            "postgresql://user@host/db",
            field="--db",
        ) from None
    if parsed.drivername in ("postgresql", "postgres"):
        return parsed.set(drivername="postgresql+psycopg").render_as_string(hide_password=False)
    database = parsed.database or ""
    # a URI filename (file:...?mode=ro) is left to the driver
    sqlite_file = parsed.get_backend_name() == "sqlite" and database not in ("", ":memory:")
    if sqlite_file and not database.startswith("file:"):
        _check_sqlite_path(Path(database).expanduser())
    return chosen


def _check_sqlite_path(path: Path) -> None:
    """Create the database's folder; one-line errors for a path that cannot hold a database.

    Raises:
        InputError: the path is a folder, lies under a regular file, or cannot be created.
    """
    if path.is_dir():
        raise InputError(f"{path} is a folder, not a database file", field="--db")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise InputError(
                    f"cannot create database {path}: {parent} is a file, not a folder",
                    field="--db",
                )
            break
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(
            f"cannot create the folder {path.parent} for the database: {exc.strerror or exc}",
            field="--db",
        ) from None
    if not path.exists() and not os.access(path.parent, os.W_OK):
        raise InputError(
            f"cannot create database {path}: the folder {path.parent} is not writable",
            field="--db",
        )


_PAGE_SIZE = 16384
"""Bytes per page of a new SQLite file (SQLite's default is 4096)."""

_BUSY_TIMEOUT_S = 30.0
"""How long a SQLite writer waits for another process's write to finish."""


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    # WAL lets readers go on while one writer writes; writers wait their turn for up to the busy
    # timeout.
    cur = dbapi_conn.cursor()
    cur.execute(f"PRAGMA busy_timeout={int(_BUSY_TIMEOUT_S * 1000)}")
    # 16 KB pages for a new file (a no-op on an existing one): a stored case of a 20-step
    # conversation spans one overflow page instead of four
    cur.execute(f"PRAGMA page_size={_PAGE_SIZE}")
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


CONNECT_TIMEOUT_S = 10


def connect_args(url: str) -> dict[str, Any]:
    """Driver options: PostgreSQL gives up connecting after ``CONNECT_TIMEOUT_S`` seconds
    (libpq's default is to wait forever on an address that drops packets), unless the URL
    sets its own ``connect_timeout``."""
    u = make_url(url)
    if u.get_backend_name() == "postgresql" and "connect_timeout" not in u.query:
        return {"connect_timeout": CONNECT_TIMEOUT_S}
    return {}
