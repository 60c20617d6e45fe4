"""Persisting runs and results with SQLAlchemy: SQLite by default, any URL via --db."""

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
