"""Schema migrations with Alembic, run by the store itself: opening a Store brings its database
to the newest revision. No ``alembic.ini`` is needed; the configuration is built here.

Alembic (and Mako, which it loads) is imported only when a migration is due: opening a database
that is already at :data:`HEAD_REVISION` reads its version with one query, and a database
without any table is given the newest schema from the models directly.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, inspect, text

from ..errors import StoreError

if TYPE_CHECKING:
    from alembic.config import Config

INITIAL_REVISION = "0001"
"""The revision whose schema ``Base.metadata.create_all`` made before there were migrations."""
HEAD_REVISION = "0006"
"""The newest revision in ``migrations/versions`` (a test keeps it equal to Alembic's head): a
database already at it is opened without importing Alembic."""
_VERSION_TABLE = "alembic_version"

_SCRIPTS = "checkweigh.store:migrations"
_PG_LOCK = 0x636B77_7374_6F72  # any fixed number: the advisory lock all checkweigh stores share


def alembic_config(connection: Connection | None = None, *, url: str | None = None) -> Config:
    """An Alembic configuration for the store's migrations, built in code.

    Args:
        connection: the connection to migrate on (env.py uses it, in its open transaction).
        url: a database URL, for Alembic's own commands when there is no connection.
    """
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", _SCRIPTS)
    if url is not None:
        config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


@functools.cache
def head_revision() -> str:
    """The newest revision of the schema, as Alembic reads it from the migration scripts."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:  # pragma: no cover - the package ships its revisions
        raise StoreError("checkweigh's store migrations are missing")
    return head


def current_revision(conn: Connection) -> str | None:
    """The revision the database is at; None if it has no ``alembic_version`` table."""
    from alembic.runtime.migration import MigrationContext

    return MigrationContext.configure(conn).get_current_revision()


def upgrade(engine: Engine) -> None:
    """Bring the database to the newest revision.

    A database made before migrations existed (the tables, no ``alembic_version``) is stamped at
    the initial revision first, then upgraded. Concurrent callers are serialized (a PostgreSQL
    advisory lock; an immediate transaction on SQLite), so two runs opening a new database at
    once both find it ready.

    Raises:
        StoreError: the database is at a revision this version of checkweigh does not know.
    """
    with engine.connect() as conn:
        if _stored_revision(conn) == HEAD_REVISION:
            return
    if _created_at_head(engine):
        return
    from alembic import command
    from alembic.util import CommandError

    head = head_revision()
    with _migration_transaction(engine) as conn:
        current = current_revision(conn)
        if current == head:
            return
        config = alembic_config(conn)
        try:
            if current is None and inspect(conn).has_table("runs"):
                command.stamp(config, INITIAL_REVISION)
            command.upgrade(config, "head")
        except CommandError as exc:
            raise StoreError(
                f"the database's schema is at revision {current!r}, which this version of "
                f"checkweigh does not know (its newest is {head!r}); upgrade checkweigh: {exc}"
            ) from None


def _created_at_head(engine: Engine) -> bool:
    """Give a database without any table the newest schema in one transaction, from the
    models, stamped at :data:`HEAD_REVISION`, without importing Alembic (the migrations build
    exactly these tables: a test compares them); False, and nothing done, when it has tables
    (Alembic then decides what to do)."""
    from ._tables import Base

    with _migration_transaction(engine) as conn:
        if inspect(conn).get_table_names():
            return False
        Base.metadata.create_all(conn)
        # the version table as Alembic makes it
        conn.execute(
            text(
                f"CREATE TABLE {_VERSION_TABLE} (version_num VARCHAR(32) NOT NULL, "
                f"CONSTRAINT {_VERSION_TABLE}_pkc PRIMARY KEY (version_num))"
            )
        )
        conn.execute(
            text(f"INSERT INTO {_VERSION_TABLE} (version_num) VALUES (:head)"),
            {"head": HEAD_REVISION},
        )
    return True


def _stored_revision(conn: Connection) -> str | None:
    """The one revision in the database's version table, read without Alembic; None when
    there is no table, or not exactly one row (Alembic then decides what to do)."""
    if not inspect(conn).has_table(_VERSION_TABLE):
        return None
    rows = conn.execute(text(f"SELECT version_num FROM {_VERSION_TABLE}")).all()
    return str(rows[0][0]) if len(rows) == 1 else None


@contextmanager
def _migration_transaction(engine: Engine) -> Iterator[Connection]:
    """A connection in a transaction that only one migrating process holds at a time."""
    sqlite = engine.dialect.name == "sqlite"
    with engine.connect() as conn:
        if sqlite:
            # Batch migrations copy a table and drop the old one: with foreign keys enforced,
            # dropping `runs` would cascade into `case_results`. The pragma is ignored inside a
            # transaction, so it is set before the transaction begins.
            conn.exec_driver_sql("PRAGMA foreign_keys=OFF")
            conn.commit()
            # pysqlite starts transactions lazily, at the first INSERT; DDL before it would run
            # outside any transaction. BEGIN IMMEDIATE takes the write lock now, so a second
            # process waits here (busy_timeout) instead of creating the same tables.
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        elif engine.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK})
        try:
            yield conn
            conn.commit()
        finally:
            conn.rollback()
            if sqlite:
                conn.exec_driver_sql("PRAGMA foreign_keys=ON")
                conn.commit()
