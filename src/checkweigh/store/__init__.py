"""Persisting runs and results with SQLAlchemy: SQLite by default, PostgreSQL (psycopg 3) or any
URL via --db; the schema is kept up to date by Alembic migrations that run on open."""

import typing as _typing

from .. import _lazy

if _typing.TYPE_CHECKING:
    from ._connect import DB_ENV, DEFAULT_DB_PATH, resolve_url
    from ._detail import ResultDetail, result_detail
    from ._handoff import Handoff, Rows
    from ._owner import STALE_AFTER
    from ._pages import RunExists, RunPage, find_result, page_runs, results_at, store_run
    from ._recover import gate_specs, rebuild_summary
    from ._store import RunInfo, RunStatus, Store, close_stores, database_file, in_memory
    from ._writer import HEARTBEAT_S, ResultWriter
else:  # the names load when first read: see checkweigh._lazy
    __getattr__, __dir__ = _lazy.exports(
        __name__,
        {
            "DB_ENV": "._connect",
            "DEFAULT_DB_PATH": "._connect",
            "resolve_url": "._connect",
            "ResultDetail": "._detail",
            "result_detail": "._detail",
            "Handoff": "._handoff",
            "Rows": "._handoff",
            "STALE_AFTER": "._owner",
            "RunExists": "._pages",
            "RunPage": "._pages",
            "find_result": "._pages",
            "page_runs": "._pages",
            "results_at": "._pages",
            "store_run": "._pages",
            "gate_specs": "._recover",
            "rebuild_summary": "._recover",
            "RunInfo": "._store",
            "RunStatus": "._store",
            "Store": "._store",
            "close_stores": "._store",
            "database_file": "._store",
            "in_memory": "._store",
            "HEARTBEAT_S": "._writer",
            "ResultWriter": "._writer",
        },
    )

__all__ = [
    "DB_ENV",
    "DEFAULT_DB_PATH",
    "HEARTBEAT_S",
    "Handoff",
    "STALE_AFTER",
    "ResultDetail",
    "ResultWriter",
    "RunExists",
    "RunPage",
    "RunInfo",
    "RunStatus",
    "Rows",
    "Store",
    "close_stores",
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
