"""Persisting runs and results with SQLAlchemy: SQLite by default, PostgreSQL (psycopg 3) or any
URL via --db; the schema is kept up to date by Alembic migrations that run on open."""

from ._connect import DB_ENV, DEFAULT_DB_PATH, resolve_url
from ._detail import ResultDetail, result_detail
from ._owner import STALE_AFTER
from ._pages import RunExists, RunPage, find_result, page_runs, results_at, store_run
from ._recover import gate_specs, rebuild_summary
from ._store import RunInfo, RunStatus, Store, database_file, in_memory
from ._writer import HEARTBEAT_S, ResultWriter

__all__ = [
    "DB_ENV",
    "DEFAULT_DB_PATH",
    "HEARTBEAT_S",
    "STALE_AFTER",
    "ResultDetail",
    "ResultWriter",
    "RunExists",
    "RunPage",
    "RunInfo",
    "RunStatus",
    "Store",
    "database_file",
    "find_result",
    "page_runs",
    "results_at",
    "store_run",
    "in_memory",
    "gate_specs",
    "rebuild_summary",
    "resolve_url",
    "result_detail",
]
