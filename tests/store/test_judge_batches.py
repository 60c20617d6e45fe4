"""The judge batches kept with a batch-judged run, and reopening it for ``--resume``: on SQLite
and PostgreSQL."""

from __future__ import annotations

import pytest

from checkweigh.errors import InputError
from checkweigh.store import (
    RunStatus,
    Store,
    rebuild_summary,
    record_batch,
    reopen_run,
    stored_batches,
)

from .test_abandoned import CONFIG, _result


def test_batches_are_kept_in_order_and_a_stopped_run_reopens_empty(store: Store) -> None:
    run_id = store.create_run("sched", "suite.yaml", CONFIG, 1)
    first = [f"{'a' * 48}-{i}" for i in range(3)]
    record_batch(store, run_id, "openai:gpt-4o-mini", "batch_abc", first)
    record_batch(store, run_id, "openai:gpt-4o-mini", "batch_def", [f"{'b' * 48}-0"])
    other = store.create_run("sched", "suite.yaml", CONFIG, 1)
    assert stored_batches(store, other) == []
    kept = stored_batches(store, run_id)
    assert [(b.judge, b.batch_id, b.custom_ids) for b in kept] == [
        ("openai:gpt-4o-mini", "batch_abc", tuple(first)),
        ("openai:gpt-4o-mini", "batch_def", (f"{'b' * 48}-0",)),
    ]

    done = [_result(f"book-{i}", i, time_ok=True) for i in range(4)]
    store.add_results(run_id, done)
    with pytest.raises(InputError, match="still running in another process"):
        reopen_run(store, run_id)
    store.finish_run(run_id, RunStatus.INCOMPLETE, rebuild_summary(CONFIG, 1, done, "stopped"))

    assert reopen_run(store, run_id) == run_id
    info = store.get_run(run_id)
    assert (info.status, info.executions, info.summary) == (RunStatus.RUNNING, 0, None)
    assert store.count_results(run_id) == 0
    assert len(stored_batches(store, run_id)) == 2  # the batches stay with the run

    store.finish_run(run_id, RunStatus.COMPLETE, rebuild_summary(CONFIG, 1, [], "resumed"))
    with pytest.raises(InputError, match="is complete: there is nothing to resume"):
        reopen_run(store, run_id)
