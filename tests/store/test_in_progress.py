"""A run still going counts what it stored so far: a reader mid-run (``checkweigh runs``, the
REST API, the web UI) sees 21 executions where 21 results are stored, not 0. On SQLite and
PostgreSQL."""

from __future__ import annotations

from fastapi.testclient import TestClient

from checkweigh.server import create_app
from checkweigh.store import ResultWriter, RunStatus, Store, page_runs, rebuild_summary

from .test_abandoned import CONFIG, _result


def test_a_running_run_counts_its_stored_results(store: Store) -> None:
    finished = store.create_run("sched", "suite.yaml", CONFIG, 1)
    done = [_result(f"done-{i}", i, time_ok=True) for i in range(5)]
    store.add_results(finished, done)
    store.finish_run(
        finished, RunStatus.COMPLETE, rebuild_summary(CONFIG, 1, done, "finished in the test")
    )
    running = store.create_run("sched", "suite.yaml", CONFIG, 1)  # this process: alive
    writer = ResultWriter(store, running, batch_size=7)
    for i in range(21):
        writer.add(_result(f"book-{i}", i, time_ok=i % 3 != 0))
    assert store.count_results(running) == 21

    info = store.get_run(running)
    assert (info.status, info.executions, info.summary) == (RunStatus.RUNNING, 21, None)
    assert [(r.id, r.executions) for r in store.list_runs()] == [(running, 21), (finished, 5)]
    page = page_runs(store, status=RunStatus.RUNNING)
    assert [(r.id, r.status, r.executions) for r in page.runs] == [(running, RunStatus.RUNNING, 21)]
    with TestClient(create_app(store)) as client:
        api = client.get(f"/api/runs/{running}").json()
        assert (api["status"], api["executions"], api["summary"]) == ("running", 21, None)
        listed = client.get("/api/runs").json()["items"]
        assert [(r["status"], r["executions"]) for r in listed] == [
            ("running", 21),
            ("complete", 5),
        ]

    writer.flush()
    summary = rebuild_summary(CONFIG, 1, store.iter_results(running), "finished in the test")
    assert store.finish_run(running, RunStatus.COMPLETE, summary) == 21
    info = store.get_run(running)
    assert (info.status, info.executions) == (RunStatus.COMPLETE, 21)
    assert info.summary is not None
    assert info.summary.executions == 21
