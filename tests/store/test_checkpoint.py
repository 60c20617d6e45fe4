"""While a run writes, a SQLite file's log is checkpointed on a second thread: the writer's
connection defers its own checkpoints then, and takes them up again after."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from checkweigh.core import CaseResult, Verdict, VerdictState
from checkweigh.store import Store


def _results(n: int, first: int = 0) -> list[CaseResult]:
    body = b'{"id":"c","trace":[{"kind":"assistant","content":"' + b"x" * 12_000 + b'"}]}'
    return [
        CaseResult(
            f"c{i}",
            0,
            {"ok": Verdict(VerdictState.PASSED, "fine")},
            {},
            1.0,
            position=i,
            body=body,
        )
        for i in range(first, first + n)
    ]


def _autocheckpoint(store: Store) -> int:
    with store.engine.connect() as conn:
        return int(conn.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar_one())


def test_a_run_s_log_is_checkpointed_beside_it_and_nothing_is_lost(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    with Store(f"sqlite:///{db}") as store:
        run_id = store.create_run("s", "s.yaml", {"rubrics": []}, 1)
        with store.writing():
            for start in range(0, 2000, 500):
                store.add_results(run_id, _results(2000)[start : start + 500])
            assert _autocheckpoint(store) == 0  # the thread does it meanwhile
        assert store.count_results(run_id) == 2000
        # after the run the log was moved into the file: a plain reader of the file alone sees
        # every row (the log may still exist, but holds nothing the file lacks)
        with sqlite3.connect(db) as conn:
            busy, logged, moved = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            assert busy == 0
            assert logged == moved
            assert conn.execute("SELECT count(*) FROM case_bodies").fetchone() == (2000,)
        store.add_results(run_id, _results(1, first=2000))
        assert _autocheckpoint(store) == 1000  # SQLite's own again outside a run
