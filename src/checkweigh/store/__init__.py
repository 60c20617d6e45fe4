"""Persisting runs and results with SQLAlchemy: SQLite by default, PostgreSQL (psycopg 3) or any
URL via --db; the schema is kept up to date by Alembic migrations that run on open."""

import typing as _typing

from .. import _lazy

if _typing.TYPE_CHECKING:
    from ._batches import StoredBatch as StoredBatch
    from ._batches import record_batch as record_batch
    from ._batches import reopen_run as reopen_run
    from ._batches import stored_batches as stored_batches
    from ._calibrate import calibrate_run as calibrate_run
    from ._calibrate import calibration_of as calibration_of
    from ._calibrate import judge_checks_of as judge_checks_of
    from ._calibrate import trust_bars as trust_bars
    from ._connect import DB_ENV as DB_ENV
    from ._connect import DEFAULT_DB_PATH as DEFAULT_DB_PATH
    from ._connect import resolve_url as resolve_url
    from ._detail import ResultDetail as ResultDetail
    from ._detail import result_detail as result_detail
    from ._duration import parse_age as parse_age
    from ._handoff import Handoff as Handoff
    from ._handoff import Rows as Rows
    from ._labels import CheckLabels as CheckLabels
    from ._labels import JudgedExecution as JudgedExecution
    from ._labels import LabelledExecution as LabelledExecution
    from ._labels import add_labels as add_labels
    from ._labels import count_labels as count_labels
    from ._labels import criteria as criteria
    from ._labels import judged_executions as judged_executions
    from ._labels import label_for as label_for
    from ._labels import read_labels as read_labels
    from ._labels import run_labels as run_labels
    from ._live import Chunk as Chunk
    from ._live import Claimed as Claimed
    from ._live import Finished as Finished
    from ._live import QueueState as QueueState
    from ._live import Window as Window
    from ._live import budget_spent as budget_spent
    from ._live import claim_ready as claim_ready
    from ._live import finish_traces as finish_traces
    from ._live import keep_chunks as keep_chunks
    from ._live import note_alerts as note_alerts
    from ._live import open_window as open_window
    from ._live import prune as prune
    from ._live import queue_state as queue_state
    from ._live import renew_leases as renew_leases
    from ._live import reserve_budget as reserve_budget
    from ._live import spend_budget as spend_budget
    from ._live import take_closable as take_closable
    from ._live import trace_outcome as trace_outcome
    from ._live import window_at as window_at
    from ._live import window_ref as window_ref
    from ._live import window_run_id as window_run_id
    from ._live import windows as windows
    from ._owner import STALE_AFTER as STALE_AFTER
    from ._pages import RunExists as RunExists
    from ._pages import RunPage as RunPage
    from ._pages import find_result as find_result
    from ._pages import page_runs as page_runs
    from ._pages import results_at as results_at
    from ._pages import store_run as store_run
    from ._recover import gate_specs as gate_specs
    from ._recover import rebuild_summary as rebuild_summary
    from ._store import RunInfo as RunInfo
    from ._store import RunStatus as RunStatus
    from ._store import Store as Store
    from ._store import close_stores as close_stores
    from ._store import database_file as database_file
    from ._store import in_memory as in_memory
    from ._writer import HEARTBEAT_S as HEARTBEAT_S
    from ._writer import ResultWriter as ResultWriter
else:  # the names load when first read: see checkweigh._lazy
    __getattr__, __dir__ = _lazy.exports(__name__)
