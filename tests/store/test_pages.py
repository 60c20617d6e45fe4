"""The store's page queries for the server (SQLite and PostgreSQL): runs filtered and counted,
one result found by case id and repeat, a run made elsewhere stored whole or not at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from checkweigh.errors import InputError
from checkweigh.store import RunExists, RunStatus, Store, find_result, page_runs, store_run
from server.conftest import base_cases, candidate_cases, run_suite


def _two_runs(db_url: str, tmp_path: Path) -> tuple[str, str]:
    base = run_suite(tmp_path / "base", base_cases(), db_url)
    candidate = run_suite(tmp_path / "cand", candidate_cases(), db_url, "--repeat", "2")
    return base, candidate


def test_runs_are_paged_newest_first_with_the_filtered_total(db_url: str, tmp_path: Path) -> None:
    base, candidate = _two_runs(db_url, tmp_path)
    with Store(db_url) as store:
        page = page_runs(store)
        assert page.total == 2
        assert [r.id for r in page.runs] == [candidate, base]
        second = page_runs(store, limit=1, offset=1)
        assert (second.total, [r.id for r in second.runs]) == (2, [base])
        assert page_runs(store, status=RunStatus.COMPLETE).total == 2
        assert page_runs(store, status=RunStatus.RUNNING) == (0, [])
        assert page_runs(store, suite="bookings", limit=1).total == 2
        assert page_runs(store, suite="other").total == 0
        # list_runs keeps its behaviour
        assert [r.id for r in store.list_runs(limit=1)] == [candidate]


def test_one_result_is_found_by_case_id_and_repeat(db_url: str, tmp_path: Path) -> None:
    _, candidate = _two_runs(db_url, tmp_path)
    with Store(db_url) as store:
        run = store.get_run(candidate)
        stored = {(r.case_id, r.repeat): r for r in store.iter_results(candidate)}
        for key in [
            ("wrong-time", 0),
            ("wrong-time", 1),
            ("good-0", 1),
            (base_cases()[-1]["id"], 0),
        ]:
            assert find_result(store, run, *key) == stored[key]
        assert find_result(store, run, "wrong-time", 2) is None
        assert find_result(store, run, "wrong", 0) is None


def test_a_run_made_elsewhere_is_stored_whole(db_url: str, tmp_path: Path) -> None:
    origin = f"sqlite:///{tmp_path / 'origin.db'}"
    run_id = run_suite(tmp_path / "s", base_cases(), origin)
    with Store(origin) as source:
        info = source.get_run(run_id)
        results = list(source.iter_results(run_id))
    with Store(db_url) as store:
        store_run(store, info, results)
        copied = store.get_run(run_id)
        assert copied == info
        assert list(store.iter_results(run_id)) == results
        with pytest.raises(RunExists, match=f"run {run_id} is already stored"):
            store_run(store, info, results)
        assert store.count_results(run_id) == len(results)


def test_a_running_run_is_not_stored(tmp_path: Path) -> None:
    origin = f"sqlite:///{tmp_path / 'origin.db'}"
    run_id = run_suite(tmp_path / "s", base_cases(), origin)
    with Store(origin) as source:
        info = source.get_run(run_id).model_copy(update={"status": RunStatus.RUNNING})
        with pytest.raises(InputError, match="only a finished run can be stored"):
            store_run(source, info.model_copy(update={"id": "other"}), [])
        assert page_runs(source).total == 1
