"""``serve`` prepares the cases tables of the newest runs in the background, so the first view
of a large run finds its rows ready; tests' apps do not start threads."""

from __future__ import annotations

import time
from pathlib import Path

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from checkweigh.cli import app as cli
from checkweigh.server import create_app
from checkweigh.server._case_index import IndexCache
from checkweigh.store import Store
from server.conftest import TOKEN, Stored

AUTH = {"Authorization": f"Bearer {TOKEN}"}


def test_warming_builds_the_finished_runs_indexes_once(stored: Stored) -> None:
    with Store(stored.url) as store:
        cache = IndexCache(size=4)
        runs = store.list_runs()
        thread = cache.warm(store, runs)
        assert thread is not None
        thread.join(timeout=30)
        for info in runs:
            ready = cache.get(store, info)  # from the cache now: the same object each time
            assert ready is cache.get(store, info)
            assert len(ready.rows) == info.executions
        assert cache.warm(store, runs) is None  # nothing left to build


def test_an_app_warms_only_when_asked(stored: Stored) -> None:
    with Store(stored.url) as store:
        quiet = create_app(store)
        assert quiet.state.warm_indexes is False
        assert quiet.state.warming is None
        assert quiet.state.case_indexes.warm(store, []) is None
        served = create_app(store, warm=True)
        assert served.state.warm_indexes is True
        served.state.warming.join(timeout=30)
        # the newest runs are being (or were) prepared by the app's own thread
        for info in store.list_runs(limit=4):
            index = served.state.case_indexes.get(store, info)
            assert len(index.rows) == info.executions


def test_a_served_app_prepares_a_run_as_it_is_listed_or_uploaded(
    stored: Stored, tmp_path: Path
) -> None:
    exported = tmp_path / "base.json"
    shown = CliRunner().invoke(
        cli, ["show", stored.base, "--db", stored.url, "--json", str(exported)]
    )
    assert shown.exit_code in (0, 1), shown.output
    with (
        Store(f"sqlite:///{tmp_path / 'team.db'}") as team,
        TestClient(create_app(team, token=TOKEN, warm=True)) as client,
    ):
        cache = client.app.state.case_indexes  # type: ignore[attr-defined]
        answer = client.post(
            "/api/runs",
            content=exported.read_bytes(),
            headers={**AUTH, "Content-Type": "application/json"},
        )
        assert answer.status_code == 201, answer.text
        deadline = time.monotonic() + 30
        while stored.base not in cache:  # built on the app's own thread
            assert time.monotonic() < deadline, "the uploaded run was never prepared"
            time.sleep(0.01)
        assert (
            len(cache.get(team, team.get_run(stored.base)).rows)
            == team.get_run(stored.base).executions
        )
