"""Worker processes score recorded cases exactly as the driver alone does: the same results
in the same order in the store, the same summary, the same errors at the same case."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from checkweigh.core import _seen
from checkweigh.errors import CaseFileError
from checkweigh.runs import RunStopped
from checkweigh.runs._engine import Evaluator
from checkweigh.runs._stop import Interrupted, StopToken
from checkweigh.runs.executors import Executor, ProcessExecutor
from checkweigh.runs.executors._blocks import block_lines
from checkweigh.runs.executors._blocks import blocks as cut_blocks
from checkweigh.runs.executors._chunks import _block_chunks as chunks_in_blocks
from checkweigh.runs.executors._worker import Chunk, WorkerSpec, score_chunk, store_chunk
from checkweigh.store import Handoff, RunStatus, Store
from checkweigh.store._rows import sqlite_rows
from checkweigh.suites import count_cases, load_suite, numbered_lines
from checkweigh.suites._text import BOM
from support.engine import run_into
from support.postgres import fresh_database
from support.worker_suite import case_line, write_worker_suite


def stored(suite_path: Path, db: Path, executor: Executor | None, repeat: int = 1) -> Any:
    """The run's outcome and every stored record, in the store's order."""
    store = Store(f"sqlite:///{db}")
    try:
        outcome = run_into(load_suite(suite_path), store, repeat=repeat, executor=executor)
    except RunStopped as stopped:
        outcome, cause = stopped.outcome, stopped.cause
    else:
        cause = None
    records = [r.to_record() for r in store.iter_results(outcome.run_id, with_cases=True)]
    cases = [
        r.case.id if r.case else None for r in store.iter_results(outcome.run_id, with_cases=True)
    ]
    return outcome, records, cases, cause


def same_runs(a: Any, b: Any) -> None:
    (out_a, rec_a, cases_a, cause_a), (out_b, rec_b, cases_b, cause_b) = a, b
    assert rec_a == rec_b
    assert cases_a == cases_b
    assert out_a.status is out_b.status
    assert out_a.kept == out_b.kept == len(rec_a)
    assert out_a.summary.model_dump(exclude={"notes"}) == out_b.summary.model_dump(
        exclude={"notes"}
    )
    assert type(cause_a) is type(cause_b)
    assert str(cause_a) == str(cause_b)


@pytest.mark.parametrize("async_check", [False, True], ids=["sync", "async-check"])
def test_two_workers_store_what_one_does(tmp_path: Path, async_check: bool) -> None:
    suite = write_worker_suite(tmp_path / "s", 1_050, async_check=async_check)
    local = stored(suite, tmp_path / "local.db", None, repeat=2)
    workers = stored(suite, tmp_path / "workers.db", ProcessExecutor(2, chunk=100), repeat=2)
    same_runs(local, workers)
    outcome, records, _, _ = workers
    assert outcome.status is RunStatus.COMPLETE
    assert len(records) == 2_100
    # in the cases' order, each case's repeats together
    assert [(r["position"], r["repeat"]) for r in records[:4]] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert outcome.summary.rubrics[0].tcr == pytest.approx(local[0].summary.rubrics[0].tcr)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": "booking-x", "input": {"message": "hi"}', "invalid JSON"),
        ('{"id": "booking-00003", "input": {"message": "hi"}}', "duplicate case id"),
        ('{"id": 7, "input": {"message": "hi"}}', "id"),
    ],
    ids=["broken-json", "duplicate-id", "id-not-a-string"],
)
def test_a_bad_case_stops_the_run_where_one_worker_stops(
    tmp_path: Path, line: str, message: str
) -> None:
    suite = write_worker_suite(tmp_path / "s", 700)
    cases = suite.parent / "cases.jsonl"
    lines = cases.read_text().splitlines()
    lines.insert(430, line)  # line 431, in the fifth chunk of 100
    cases.write_text("\n".join(lines) + "\n")
    local = stored(suite, tmp_path / "local.db", None)
    workers = stored(suite, tmp_path / "workers.db", ProcessExecutor(2, chunk=100))
    same_runs(local, workers)
    outcome, records, _, cause = workers
    assert outcome.status is RunStatus.INCOMPLETE
    assert len(records) == 430
    assert isinstance(cause, CaseFileError)
    assert cause.line == 431
    assert message in str(cause)


def test_blank_lines_and_a_bom_keep_positions(tmp_path: Path) -> None:
    suite = write_worker_suite(tmp_path / "s", 0)
    body = "\n".join(
        ("\ufeff" if i == 0 else "") + case_line(i) + ("\n   \u3000" if i % 97 == 0 else "")
        for i in range(450)
    )
    (suite.parent / "cases.jsonl").write_text(body + "\n\n")
    local = stored(suite, tmp_path / "local.db", None)
    workers = stored(suite, tmp_path / "workers.db", ProcessExecutor(3, chunk=64))
    same_runs(local, workers)
    assert [r["position"] for r in workers[1]] == list(range(450))


def test_cases_read_by_the_driver_go_to_workers_as_cases(tmp_path: Path) -> None:
    """A YAML cases file is read by the driver and its cases shipped to the workers."""
    suite = write_worker_suite(tmp_path / "s", 0)
    rows = [json.loads(case_line(i)) for i in range(230)]
    (suite.parent / "cases.yaml").write_text(json.dumps(rows))  # JSON is YAML
    text = suite.read_text().replace("cases: cases.jsonl", "cases: cases.yaml")
    suite.write_text(text)
    local = stored(suite, tmp_path / "local.db", None)
    workers = stored(suite, tmp_path / "workers.db", ProcessExecutor(2, chunk=50))
    same_runs(local, workers)
    assert len(workers[1]) == 230


def _raw_rows(db: Path) -> list[list[tuple[object, ...]]]:
    """Every stored row of the database's one run, as SQLite holds it (its run id and row ids
    left out: worker processes commit their chunks in the order they finish)."""
    with sqlite3.connect(db) as conn:
        return [
            conn.execute(f"SELECT {columns} FROM {table} ORDER BY {order}").fetchall()
            for table, columns, order in (
                (
                    "case_results",
                    "idx, case_id, repeat, errored, latency_ms, record",
                    "idx, repeat",
                ),
                ("case_bodies", "idx, repeat, body", "idx, repeat"),
                ("verdicts_not_passed", '"check", state, idx, repeat', '"check", state, idx'),
            )
        ]


def test_workers_store_the_rows_the_driver_would_write(tmp_path: Path) -> None:
    # the workers build and store the rows themselves: byte for byte those an in-process run
    # writes, failed verdicts and case bodies included
    suite = write_worker_suite(tmp_path / "s", 640)
    stored(suite, tmp_path / "local.db", None)
    stored(suite, tmp_path / "workers.db", ProcessExecutor(2, chunk=100))
    local, workers = _raw_rows(tmp_path / "local.db"), _raw_rows(tmp_path / "workers.db")
    assert [len(rows) for rows in local] == [640, 640, len(local[2])]
    assert local[2], "some verdicts fail in the worker suite"
    assert workers == local


def test_a_chunk_comes_back_with_its_rows_when_the_spec_names_the_run(tmp_path: Path) -> None:
    suite_path = write_worker_suite(tmp_path / "s", 5)
    suite = load_suite(suite_path)
    spec = WorkerSpec.of(suite, Evaluator.from_suite(suite), with_agent=False)
    lines = tuple(numbered_lines(suite.cases.path))
    chunk = Chunk(0, 1, lines=lines)
    assert score_chunk(spec, chunk).rows is None
    scored = score_chunk(replace(spec, handoff=Handoff("run-1")), chunk)
    assert scored.rows == sqlite_rows("run-1", scored.results)
    assert len(scored.rows.results) == 5 * 8  # eight columns a result


def test_a_file_with_a_bom_crlf_and_blank_lines_is_read_as_in_process(tmp_path: Path) -> None:
    # the workers read their own byte ranges: blank lines (Unicode's whitespace included) are
    # skipped and lines numbered as the driver's reader does
    suite = write_worker_suite(tmp_path / "s", 0)
    rows = [case_line(i) for i in range(300)]
    for at, blank in ((7, ""), (64, "  \t"), (65, "\u3000"), (200, "\x1c"), (299, "")):
        rows.insert(at, blank)
    text = "\ufeff" + "\r\n".join(rows) + "\r\n\r\n"
    (suite.parent / "cases.jsonl").write_bytes(text.encode())
    local = stored(suite, tmp_path / "local.db", None)
    workers = stored(suite, tmp_path / "workers.db", ProcessExecutor(2, chunk=64))
    same_runs(local, workers)
    assert len(workers[1]) == 300


def test_a_chunk_tried_again_replaces_what_its_first_try_stored(tmp_path: Path) -> None:
    # a worker killed after its transaction committed: the chunk's next try must not store
    # its cases twice
    suite_path = write_worker_suite(tmp_path / "s", 40)
    suite = load_suite(suite_path)
    db = tmp_path / "runs.db"
    store = Store(f"sqlite:///{db}")
    run_id = store.create_run(suite.name, str(suite_path), {}, 1)
    handoff = store.handoff(run_id, workers_store=True)
    assert handoff == Handoff(run_id, db)  # a SQLite file: its workers may store themselves
    spec = replace(
        WorkerSpec.of(suite, Evaluator.from_suite(suite), with_agent=False), handoff=handoff
    )
    chunk = next(chunks_in_blocks(1, cut_blocks(suite.cases.path, 25)))
    first = store_chunk(spec, chunk)
    again = store_chunk(spec, chunk.retried(suite.cases.path))
    assert again.case_ids == first.case_ids == [f"booking-{i:05d}" for i in range(25)]
    assert again.part == first.part
    assert [len(rows) for rows in _raw_rows(db)[:2]] == [25, 25]
    cut = store_chunk(spec, chunk.retried(suite.cases.path, 10))  # a repeated id at the 11th
    assert len(cut.case_ids) == 10
    assert [r.position for r in store.iter_results(run_id)] == list(range(25))  # once each


def test_an_in_memory_database_gets_the_results_from_the_driver(tmp_path: Path) -> None:
    # no file the workers could open: they send results with their rows, the driver stores them
    suite_path = write_worker_suite(tmp_path / "s", 700)
    lines = (suite_path.parent / "cases.jsonl").read_text().splitlines()
    lines.insert(600, lines[3])  # a repeated id, met in the driver
    (suite_path.parent / "cases.jsonl").write_text("\n".join(lines) + "\n")
    runs = []
    for executor in (None, ProcessExecutor(2, chunk=128)):
        store = Store("sqlite://")
        with pytest.raises(RunStopped) as stopped:
            run_into(load_suite(suite_path), store, executor=executor)
        outcome = stopped.value.outcome
        records = [r.to_record() for r in store.iter_results(outcome.run_id)]
        runs.append((outcome, records, str(stopped.value.cause)))
    (local, local_records, local_cause), (workers, worker_records, worker_cause) = runs
    assert worker_records == local_records
    assert len(worker_records) == workers.kept == 600
    assert worker_cause == local_cause
    assert ":601: id: duplicate case id 'booking-00003'" in worker_cause
    assert workers.summary.model_dump(exclude={"notes"}) == local.summary.model_dump(
        exclude={"notes"}
    )


def test_postgresql_gets_the_results_from_the_driver(tmp_path: Path) -> None:
    # the workers cannot write to PostgreSQL themselves: they send results, the driver stores
    # them (COPY), and a repeated id met in a byte range ends the run where one process does
    suite_path = write_worker_suite(tmp_path / "s", 700)
    lines = (suite_path.parent / "cases.jsonl").read_text().splitlines()
    lines.insert(600, lines[3])
    (suite_path.parent / "cases.jsonl").write_text("\n".join(lines) + "\n")
    runs = []
    for executor in (None, ProcessExecutor(2, chunk=128)):
        with fresh_database() as url:
            store = Store(url)
            try:
                with pytest.raises(RunStopped) as stopped:
                    run_into(load_suite(suite_path), store, executor=executor)
                outcome = stopped.value.outcome
                records = [r.to_record() for r in store.iter_results(outcome.run_id)]
                runs.append((outcome, records, str(stopped.value.cause)))
            finally:
                store.close()
    (local, local_records, local_cause), (workers, worker_records, worker_cause) = runs
    assert worker_records == local_records
    assert len(worker_records) == workers.kept == 600
    assert worker_cause == local_cause
    assert workers.summary.model_dump(exclude={"notes"}) == local.summary.model_dump(
        exclude={"notes"}
    )


def test_ids_sharing_a_hash_are_told_apart_by_reading_the_case_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the driver keeps the ids as hashes: made to collide all the time, only a true repeat
    # stops the run, where one process stops it
    monkeypatch.setattr(_seen, "id_hash", lambda text: len(text) % 5)
    suite_path = write_worker_suite(tmp_path / "s", 700)
    cases = suite_path.parent / "cases.jsonl"
    lines = cases.read_text().splitlines()
    db = tmp_path / "runs.db"
    whole = run_into(load_suite(suite_path), Store(f"sqlite:///{db}"), executor=ProcessExecutor(2))
    assert whole.summary.executions == 700
    lines.insert(600, lines[3])
    cases.write_text("\n".join(lines) + "\n")
    causes = []
    for executor in (None, ProcessExecutor(2, chunk=128)):
        store = Store(f"sqlite:///{db}")
        with pytest.raises(RunStopped) as stopped:
            run_into(load_suite(suite_path), store, executor=executor)
        assert stopped.value.outcome.kept == 600
        assert len(list(store.iter_results(stopped.value.outcome.run_id))) == 600
        causes.append(str(stopped.value.cause))
    assert causes[0] == causes[1]
    assert causes[0].endswith(":601: id: duplicate case id 'booking-00003'")


def test_the_workers_server_imports_the_workers_module() -> None:
    # the CLI starts the server from a module that imports nothing of checkweigh's
    from checkweigh._workers_server import WORKER_MODULE
    from checkweigh.runs.executors import _worker

    assert _worker.__name__ == WORKER_MODULE


def test_the_executor_counts_a_file_by_its_lines_and_hands_out_that_cut(tmp_path: Path) -> None:
    # what --workers counts before its workers validate every case: the non-blank lines,
    # whatever the blank ones hold (spaces, a CR, Unicode spaces) and wherever they are
    lines = [json.dumps({"id": f"c{i}", "input": {"message": "hi"}}) for i in range(5)]
    text = "\n".join(["", lines[0], "   ", lines[1], "\r", lines[2], "\u3000\u00a0", *lines[3:]])
    path = tmp_path / "cases.jsonl"
    path.write_bytes(BOM + text.encode())  # a BOM, and no newline at the end
    executor = ProcessExecutor(2, chunk=2)
    assert executor.count(path) == count_cases(path) == 5
    cut = executor._cut_before(path)
    assert cut is not None
    assert [n for _, n in cut] == [2, 2, 1]
    assert [lineno for lineno, _ in block_lines(path, *cut[1])] == [6, 8]
    assert executor._cut_before(path) is None  # one run's
    executor.count(path)
    path.write_bytes(BOM + text.encode() + b"\n")  # changed since: cut again
    assert executor._cut_before(path) is None
    (tmp_path / "blank.jsonl").write_bytes(b"\n \n")
    assert executor.count(tmp_path / "blank.jsonl") == 0
    # a broken line is counted (the run stops where a worker meets it)
    path.write_text(lines[0] + "\n" + '{"id": "x", "inp' + "\n")
    assert executor.count(path) == 2
    with pytest.raises(CaseFileError, match="cases file not found"):
        executor.count(tmp_path / "missing.jsonl")


SLOW = """\
import asyncio
import os
import time

MARKS = os.path.join(os.path.dirname(__file__), "begun")


def _mark():
    fd = os.open(MARKS, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    os.write(fd, b".")
    os.close(fd)


def slow(case):
    _mark()
    time.sleep(0.02)
    return True


async def aslow(case):
    _mark()
    await asyncio.sleep(0.02)
    return True
"""


@pytest.mark.parametrize("async_check", [False, True], ids=["sync", "async-check"])
@pytest.mark.parametrize("url", ["file", "memory"])
def test_a_stop_ends_the_chunks_in_flight_and_keeps_their_finished_prefix(
    tmp_path: Path, async_check: bool, url: str
) -> None:
    # chunks of 2,048 cases at 20 ms: a stop must not wait for a chunk's end (40 s), and
    # keeps the first chunk's finished cases, stored by the worker or by the driver
    suite_path = write_worker_suite(tmp_path / "s", 6_000)
    (suite_path.parent / "slow_check.py").write_text(SLOW)
    name = "aslow" if async_check else "slow"
    suite_path.write_text(
        suite_path.read_text()
        .replace(
            "  polite: {type: python",
            f"  slow: {{type: python, function: 'slow_check:{name}'}}\n  polite: {{type: python",
        )
        .replace("      polite: 0.2", "      polite: 0.1\n      slow: 0.1")
    )
    marks = suite_path.parent / "begun"
    token = StopToken()
    asked: list[float] = []

    def stop_once_under_way() -> None:
        while not marks.exists() or marks.stat().st_size < 60:
            time.sleep(0.02)
        asked.append(time.monotonic())
        token.request("SIGINT")

    threading.Thread(target=stop_once_under_way, daemon=True).start()
    store = Store(f"sqlite:///{tmp_path / 'runs.db'}" if url == "file" else "sqlite://")
    with pytest.raises(RunStopped) as stopped:
        run_into(load_suite(suite_path), store, executor=ProcessExecutor(2), stop=token)
    assert time.monotonic() - asked[0] < 2
    assert isinstance(stopped.value.cause, Interrupted)
    outcome = stopped.value.outcome
    assert outcome.status is RunStatus.INCOMPLETE
    assert 10 <= outcome.kept < 2_048
    results = list(store.iter_results(outcome.run_id))
    assert [r.case_id for r in results] == [f"booking-{i:05d}" for i in range(outcome.kept)]
    assert all(r.verdicts["slow"].state == "passed" for r in results)
