"""The store on SQLite and PostgreSQL: runs, id look-ups, ordered results, batched writes,
concurrent writers."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import text

from checkweigh.core import (
    Case,
    CaseResult,
    CaseUsage,
    Rubric,
    RubricItem,
    RunAggregator,
    failed,
    passed,
    score_rubric,
)
from checkweigh.errors import InputError, StoreError
from checkweigh.store import ResultWriter, RunStatus, Store
from checkweigh.store._rows import TABLES

RUBRIC = Rubric.build(
    "completion",
    [RubricItem("correct_time", 0.6), RubricItem("clear_explanation", 0.4)],
)


def _result(case_id: str, index: int, time_ok: bool, repeat: int = 0) -> CaseResult:
    verdicts = {
        "correct_time": passed("10:00") if time_ok else failed("booked 11:00, expected 10:00"),
        "clear_explanation": passed("explained"),
    }
    scored = score_rubric(RUBRIC, verdicts, {"final_state": {"success": time_ok}})
    return CaseResult(case_id, repeat, verdicts, {"completion": scored}, 12.5, None, index)


def _config() -> dict[str, object]:
    return {
        "rubrics": [
            {"name": "completion", "weights": {"correct_time": 0.6, "clear_explanation": 0.4}}
        ]
    }


def test_runs_round_trip(store: Store) -> None:
    run_id = store.create_run("sched", "suite.yaml", _config(), repeat=2)
    results = [_result(f"c{i}", i, i % 3 != 0, r) for i in range(5) for r in range(2)]
    # written out of order, read back in input order
    store.add_results(run_id, list(reversed(results)))
    summary = RunAggregator([RUBRIC]).add_all(results).summary()
    store.finish_run(run_id, RunStatus.COMPLETE, summary)

    info = store.get_run(run_id[:10])
    assert info.status is RunStatus.COMPLETE
    assert info.executions == 10
    assert info.summary is not None
    assert info.summary.rubric("completion").outcomes["successful_completion"] == 6
    back = list(store.iter_results(run_id))
    assert [(r.case_id, r.repeat) for r in back] == [(r.case_id, r.repeat) for r in results]
    assert back[0].results["completion"].score == pytest.approx(0.4)
    assert (
        back[0]
        .results["completion"]
        .explanation.startswith(
            "completion: score 0.40, partial failure. failed: correct_time (booked 11:00"
        )
    )
    assert set(back[0].results["completion"].details) == {"correct_time", "clear_explanation"}


def test_latest_previous_and_bad_references(store: Store) -> None:
    first = store.create_run("sched", "s.yaml", _config(), 1)
    second = store.create_run("sched", "s.yaml", _config(), 1)
    assert store.get_run("latest").id == second
    assert store.get_run("previous").id == first
    with pytest.raises(InputError, match="no run 'zzz'"):
        store.get_run("zzz")
    with pytest.raises(InputError, match="ambiguous"):
        store.get_run(first[:4])
    assert [r.id for r in store.list_runs()] == [second, first]


def test_writer_batches_by_size_and_flushes_the_rest(store: Store) -> None:
    run_id = store.create_run("sched", "s.yaml", _config(), 1)
    with ResultWriter(store, run_id, batch_size=4, max_delay_s=3600) as writer:
        for i in range(10):
            writer.add(_result(f"c{i}", i, True))
        assert writer.written == 8
        assert len(list(store.iter_results(run_id))) == 8
    # leaving the block flushes the rest
    assert writer.written == 10
    assert len(list(store.iter_results(run_id))) == 10


def test_a_batch_that_cannot_be_written_raises_a_store_error(store: Store) -> None:
    # a run id that does not exist violates the foreign key: the batch write fails
    writer = ResultWriter(store, "no-such-run", batch_size=2, max_delay_s=3600)
    writer.add(_result("c0", 0, True))
    with pytest.raises(StoreError, match=r"(?i)foreign key"):
        writer.add(_result("c1", 1, True))
    assert writer.written == 0
    assert writer.pending == 2  # the failed batch stays queued, not dropped


def test_two_threads_writing_at_once_lose_nothing(store: Store) -> None:
    def write(name: str, ids: list[str]) -> None:
        with (
            Store(store.url) as own,
            ResultWriter(own, ids[0], batch_size=7, max_delay_s=3600) as writer,
        ):
            for i in range(200):
                writer.add(_result(f"{name}-{i}", i, i % 2 == 0))

    runs = [store.create_run(n, "s.yaml", _config(), 1) for n in ("a", "b")]
    threads = [
        threading.Thread(target=write, args=(n, [r])) for n, r in zip(("a", "b"), runs, strict=True)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for run_id in runs:
        assert len(list(store.iter_results(run_id))) == 200


def test_database_url_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHECKWEIGH_DB", f"sqlite:///{tmp_path / 'env' / 'e.db'}")
    store = Store()
    assert store.url.endswith("env/e.db")
    assert (tmp_path / "env" / "e.db").exists()


def test_default_database_lives_in_dot_checkweigh(tmp_path: Path) -> None:
    Store()
    assert (tmp_path / ".checkweigh" / "checkweigh.db").exists()


@pytest.mark.parametrize("path", ["dialect", "generic"])
def test_large_batches_are_stored_whole_and_in_order(store: Store, path: str) -> None:
    run_id = store.create_run("sched", "s.yaml", _config(), 1)
    results = [_result(f"case-{i:03d}", i, i % 3 != 0) for i in range(257)]
    # the dialect's own fast path (SQLite's multi-row INSERTs, PostgreSQL's COPY) or executemany
    write = store.add_results if path == "dialect" else store._add_results_generic
    write(run_id, results)  # three full 100-row statements would be 300: 257 ends mid-chunk
    back = list(store.iter_results(run_id))
    assert [r.case_id for r in back] == [r.case_id for r in results]
    assert [r.results["completion"].score for r in back] == [
        r.results["completion"].score for r in results
    ]
    assert back[3].verdicts["correct_time"].reason == "booked 11:00, expected 10:00"


def test_any_text_survives_the_round_trip(store: Store) -> None:
    # COPY's text format and the multi-row INSERTs must both carry escapes, tabs, newlines,
    # quotes, NUL and astral characters unchanged
    odd = 'tab\there\nnew "line" \\N \\ back\\slash \x00 nul, emoji 🗓, é'
    run_id = store.create_run("sched", "s.yaml", _config(), 1)
    verdicts = {"correct_time": failed(odd), "clear_explanation": passed(odd[::-1])}
    scored = score_rubric(RUBRIC, verdicts, {"final_state": {"success": False}})
    store.add_results(run_id, [CaseResult(odd, 0, verdicts, {"completion": scored}, None, None, 0)])
    (back,) = store.iter_results(run_id)
    assert back.case_id == odd
    assert back.verdicts["correct_time"].reason == odd
    assert back.verdicts["clear_explanation"].reason == odd[::-1]
    assert back.latency_ms is None


def test_times_read_back_in_utc(store: Store) -> None:
    before = datetime.now(UTC).replace(tzinfo=None)
    run_id = store.create_run("sched", "s.yaml", _config(), 1)
    store.finish_run(run_id, RunStatus.COMPLETE, RunAggregator([RUBRIC]).summary())
    info = store.get_run(run_id)
    after = datetime.now(UTC).replace(tzinfo=None)
    assert info.finished_at is not None
    assert before <= info.created_at <= info.finished_at <= after


def test_usage_and_its_summary_round_trip(store: Store) -> None:
    run_id = store.create_run("sched", "suite.yaml", _config(), repeat=1)
    results = [
        _result("c0", 0, True)._replace(usage=CaseUsage(1450, 38, 0.0041)),
        _result("c1", 1, False)._replace(usage=CaseUsage(2100, 99, None)),
        _result("c2", 2, True),  # a log without usage
    ]
    store.add_results(run_id, results)
    summary = RunAggregator([RUBRIC]).add_all(results).summary()
    store.finish_run(run_id, RunStatus.COMPLETE, summary)
    back = list(store.iter_results(run_id))
    assert [r.usage for r in back] == [r.usage for r in results]
    info = store.get_run(run_id)
    assert info.summary is not None
    assert info.summary.usage == summary.usage
    assert info.summary.usage is not None
    assert (info.summary.usage.input_tokens, info.summary.usage.cost_usd) == (3550, 0.0041)


def test_a_deleted_run_leaves_nothing_behind(store: Store) -> None:
    # a run refused for a bad case its workers met: as if it never started
    kept = store.create_run("sched", "suite.yaml", _config(), repeat=1)
    store.add_results(kept, [_result("c0", 0, True)])
    gone = store.create_run("sched", "suite.yaml", _config(), repeat=1)
    store.add_results(gone, [_result(f"c{i}", i, i % 2 == 0) for i in range(4)])
    store.delete_run(gone)
    assert [r.id for r in store.list_runs()] == [kept]
    assert store.count_results(gone) == 0
    assert [r.case_id for r in store.iter_results(kept)] == ["c0"]
    with store.engine.connect() as conn:
        for table in TABLES:
            count = text(f"SELECT count(*) FROM {table} WHERE run_id = :r")
            assert conn.execute(count, {"r": gone}).scalar_one() == 0


def test_a_result_no_encoder_takes_is_stored_errored_beside_the_others(store: Store) -> None:
    # past the boundary conversion (checkweigh._text), e.g. a Case built in Python: the one
    # result is kept as an errored case; the batch, and so the run, goes on
    run_id = store.create_run("sched", "s.yaml", _config(), 1)
    good = _result("c0", 0, True)
    lone = _result("c1\ud800", 1, False)
    lone = lone._replace(
        verdicts={**lone.verdicts, "correct_time": failed("booked \udc80")},
        case=Case(id="c1", input={"message": "book \ud800"}, final_state={"x": "\ud800"}),
    )
    store.add_results(run_id, [good, lone, _result("c2", 2, True)])
    stored = list(store.iter_results(run_id))
    assert [r.case_id for r in stored] == ["c0", "c1\\ud800", "c2"]
    assert stored[0] == good._replace(case=None)
    assert stored[1].errored
    assert stored[1].verdicts == {}
    assert stored[1].agent_error is not None
    assert stored[1].agent_error.startswith("the result cannot be stored: ")
    assert not stored[2].errored
