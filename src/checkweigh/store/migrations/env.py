"""Alembic's environment for checkweigh's store.

checkweigh runs it itself (``Store(url)`` upgrades its database to head), handing over its own
connection in ``config.attributes["connection"]``; no ``alembic.ini`` is involved. To write a new
revision, autogenerate it against a database at head, then review it by hand::

    from alembic import command
    from checkweigh.store._migrate import alembic_config
    command.revision(
        alembic_config(url="sqlite:///dev.db"), message="what changes", autogenerate=True
    )
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, create_engine

from checkweigh.store._tables import Base


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        # SQLite alters most things by copying the table: batch mode writes migrations that way.
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


def _main() -> None:
    config = context.config
    if context.is_offline_mode():
        url = config.get_main_option("sqlalchemy.url")
        context.configure(url=url, target_metadata=Base.metadata, literal_binds=True)
        with context.begin_transaction():
            context.run_migrations()
        return
    connection: Connection | None = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("give alembic a connection or a sqlalchemy.url")
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            _run(conn)
    finally:
        engine.dispose()


_main()
