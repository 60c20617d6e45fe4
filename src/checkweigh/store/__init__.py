"""Persisting runs and results with SQLAlchemy: SQLite by default, PostgreSQL (psycopg 3) or any
URL via --db; the schema is kept up to date by Alembic migrations that run on open."""

from ._store import DB_ENV, DEFAULT_DB_PATH, ResultWriter, RunInfo, RunStatus, Store, resolve_url

__all__ = [
    "DB_ENV",
    "DEFAULT_DB_PATH",
    "ResultWriter",
    "RunInfo",
    "RunStatus",
    "Store",
    "resolve_url",
]
