"""A page of a run's results cut by the database (SQLite and PostgreSQL): the same results,
in the same order, as reading the whole run and slicing it."""

from __future__ import annotations

from pathlib import Path

from checkweigh.store import Store, page_results, store_run
from server.conftest import base_cases, run_suite


def test_a_page_is_the_slice_of_the_whole_run(db_url: str, tmp_path: Path) -> None:
    run_id = run_suite(tmp_path / "run", base_cases(), db_url, "--repeat", "3")
    with Store(db_url) as store:
        run = store.get_run(run_id)
        whole = list(store.iter_results(run_id))
        assert len(whole) == 39  # 13 cases, 3 times: case by case, then repeat
        for limit, offset in [(5, 0), (5, 5), (50, 0), (4, 37), (10, 39), (10, 500)]:
            page = page_results(store, run, limit=limit, offset=offset)
            assert page.total == 39
            assert page.results == whole[offset : offset + limit], (limit, offset)


def test_errored_results_are_filtered_and_counted_by_the_database(
    db_url: str, tmp_path: Path
) -> None:
    run_id = run_suite(tmp_path / "run", base_cases(), db_url, "--repeat", "2")
    with Store(db_url) as store:
        run = store.get_run(run_id)
        # the run again, as uploaded, with the agent failing on every third execution
        results = [
            r._replace(agent_error="TimeoutError: agent took over 30 s") if i % 3 == 0 else r
            for i, r in enumerate(store.iter_results(run_id))
        ]
        copy = run.model_copy(update={"id": "copy-" + run.id[-6:]})
        store_run(store, copy, results)
        errored = [r for r in results if r.errored]
        fine = [r for r in results if not r.errored]
        assert len(errored) == 9
        page = page_results(store, copy, errored=True, limit=4, offset=4)
        assert (page.total, page.results) == (9, errored[4:8])
        page = page_results(store, copy, errored=False, limit=50)
        assert (page.total, page.results) == (len(fine), fine)
        # the original run is not mixed in
        assert page_results(store, run, errored=True).total == 0
