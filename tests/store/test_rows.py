"""Rows built away from the store (a worker process) are stored exactly as the store builds
them itself, and a batch of them that cannot be written stays queued, as results do."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from checkweigh.core import CaseResult, Rubric, RubricItem, failed, passed, score_rubric
from checkweigh.errors import StoreError
from checkweigh.store import ResultWriter, Store
from checkweigh.store._rows import sqlite_rows

RUBRIC = Rubric.build(
    "completion", [RubricItem("correct_time", 0.6), RubricItem("clear_explanation", 0.4)]
)
CONFIG = {"rubrics": [{"name": "completion", "weights": {"correct_time": 0.6}}]}


def _results(count: int) -> list[CaseResult]:
    out = []
    for i in range(count):
        ok = i % 3 != 0
        verdicts = {
            "correct_time": passed("10:00") if ok else failed("booked 11:00, expected 10:00"),
            "clear_explanation": passed("explained"),
        }
        scored = score_rubric(RUBRIC, verdicts, {"final_state": {"success": ok}})
        body = f'{{"id":"c{i}","input":{{"message":"book {i}"}}}}'.encode()
        out.append(
            CaseResult(f"c{i}", 0, verdicts, {"completion": scored}, 12.5 + i, None, i, body=body)
        )
    return out


def _tables(db: Path, run_id: str) -> dict[str, list[tuple[object, ...]]]:
    with sqlite3.connect(db) as conn:
        return {
            table: conn.execute(
                f"SELECT {cols} FROM {table} WHERE run_id = ? ORDER BY {order}", (run_id,)
            ).fetchall()
            for table, cols, order in (
                (
                    "case_results",
                    "idx, case_id, repeat, errored, latency_ms, record, exchanges",
                    "id",
                ),
                ("case_bodies", "idx, repeat, body", "id"),
                ("verdicts_not_passed", '"check", state, idx, repeat', "idx"),
            )
        }


def test_rows_built_elsewhere_are_stored_as_the_store_builds_them(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    results = _results(250)
    with Store(f"sqlite:///{db}") as store:
        assert store.takes_rows
        own = store.create_run("sched", "s.yaml", CONFIG, 1)
        built = store.create_run("sched", "s.yaml", CONFIG, 1)
        store.add_results(own, results)
        with ResultWriter(store, built, max_delay_s=3600) as writer:
            writer.add(results[0])  # queued first: stored before the rows that follow it
            writer.add_rows(results[1:], sqlite_rows(built, results[1:]))
            assert writer.written == 250
        assert [r.to_record() for r in store.iter_results(built)] == [
            r.to_record() for r in results
        ]
    mine, theirs = _tables(db, own), _tables(db, built)
    assert len(mine["verdicts_not_passed"]) == 84  # c0, c3, ... failed correct_time
    assert mine == theirs


def test_rows_that_cannot_be_written_stay_queued_as_results(tmp_path: Path) -> None:
    results = _results(3)
    with Store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        # a run id that does not exist violates the foreign key: the insert fails
        writer = ResultWriter(store, "no-such-run", max_delay_s=3600)
        with pytest.raises(StoreError, match=r"(?i)foreign key"):
            writer.add_rows(results, sqlite_rows("no-such-run", results))
        assert writer.written == 0
        assert writer.pending == 3  # kept, to be counted as lost or written again
