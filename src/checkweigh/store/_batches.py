"""The provider batches of a batch-judged run, and reopening such a run to resume it.

A run in ``judge: {mode: batch}`` records each batch (its id, the judge, the items it holds)
before it polls it: a run stopped while waiting (Ctrl-C, SIGTERM, a crash) is resumed by
``checkweigh run --resume RUN``, which polls the same batches again instead of paying twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import insert, select, text, update

from ..errors import InputError
from ._owner import Owner
from ._rows import TABLES
from ._store import RunStatus, Store, _db_errors
from ._tables import JudgeBatchRow, RunRow


@dataclass(frozen=True, slots=True)
class StoredBatch:
    """A batch a run submitted."""

    judge: str
    """``provider:model`` of the judge it was submitted to."""
    batch_id: str
    """The provider's id for it."""
    custom_ids: tuple[str, ...]
    """The items it holds."""


def record_batch(
    store: Store, run_id: str, judge: str, batch_id: str, custom_ids: Sequence[str]
) -> None:
    """Keep ``batch_id`` with the run (before it is polled).

    Raises:
        StoreError: the database cannot be written.
    """
    with _db_errors(f"record the judge batch in {store.safe_url}"), store.engine.begin() as conn:
        conn.execute(
            insert(JudgeBatchRow).values(
                run_id=run_id,
                judge=judge,
                batch_id=batch_id,
                custom_ids=list(custom_ids),
                submitted_at=datetime.now(UTC),
            )
        )


def stored_batches(store: Store, run_id: str) -> list[StoredBatch]:
    """The batches the run submitted, oldest first."""
    stmt = (
        select(JudgeBatchRow.judge, JudgeBatchRow.batch_id, JudgeBatchRow.custom_ids)
        .where(JudgeBatchRow.run_id == run_id)
        .order_by(JudgeBatchRow.id)
    )
    with _db_errors(f"read {store.safe_url}"), store.engine.connect() as conn:
        return [StoredBatch(j, b, tuple(ids)) for j, b, ids in conn.execute(stmt)]


def reopen_run(store: Store, ref: str) -> str:
    """Make the stopped run ``ref`` running again in this process, its results cleared (the
    resumed run evaluates every case again, answering from the judge cache and its stored
    batches); return its id.

    Raises:
        InputError: no such run, or it is not an incomplete run (``--resume``).
    """
    info = store.get_run(ref)
    if info.status is RunStatus.COMPLETE:
        raise InputError(f"run {info.id} is complete: there is nothing to resume", field="--resume")
    if info.status is RunStatus.RUNNING:
        raise InputError(
            f"run {info.id} is still running in another process; resume it once it has stopped",
            field="--resume",
        )
    owner = Owner.current()
    now = datetime.now(UTC)
    with _db_errors(f"update the run in {store.safe_url}"), store.engine.begin() as conn:
        for table in TABLES:  # named parameters: the same SQL on SQLite and PostgreSQL
            conn.execute(text(f"DELETE FROM {table} WHERE run_id = :run"), {"run": info.id})
        conn.execute(
            update(RunRow)
            .where(RunRow.id == info.id)
            .values(
                status=RunStatus.RUNNING.value,
                finished_at=None,
                executions=0,
                gates_passed=None,
                summary=None,
                abandoned=False,
                pid=owner.pid,
                host=owner.host,
                process_start=owner.start,
                heartbeat_at=now,
            )
        )
    return info.id
