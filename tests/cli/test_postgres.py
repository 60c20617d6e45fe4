"""The CLI on PostgreSQL: `run` then `show latest` through a plain postgresql:// URL, and two
`checkweigh run` processes on one database at once (SQLite and PostgreSQL) lose nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from checkweigh.store import RunStatus, Store
from support.postgres import fresh_database

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scheduling" / "suite.yaml"
CASES = 43  # scenarios in the example suite


def _cli(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", "from checkweigh.cli import main; main()", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env={**os.environ, "COLUMNS": "200"},
    )


def _finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err


def _tcr_lines(report: str) -> list[str]:
    return [line for line in report.splitlines() if "TCR " in line]


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'runs.db'}"
    else:
        with fresh_database() as url:
            yield url


def test_run_then_show_latest_on_postgres(tmp_path: Path) -> None:
    with fresh_database() as url:
        code, out, err = _finish(_cli("run", str(EXAMPLE), "--db", url, "-q", cwd=tmp_path))
        assert code == 0, out + err
        assert f"{CASES} execution(s) of {CASES} case(s); 0 errored" in out
        assert "stored in postgresql+psycopg://" in out

        code, shown, err = _finish(_cli("show", "latest", "--db", url, cwd=tmp_path))
        assert code == 0, shown + err
        assert shown.splitlines()[0] == out.splitlines()[0]  # scheduling   run <id>
        assert _tcr_lines(shown) == _tcr_lines(out) != []

        code, listed, err = _finish(_cli("runs", "--db", url, cwd=tmp_path))
        assert code == 0, listed + err
        assert "complete" in listed
        with Store(url) as store:
            (info,) = store.list_runs()
            assert info.status is RunStatus.COMPLETE
            assert len(list(store.iter_results(info.id))) == CASES


def test_two_runs_at_once_on_one_database(db_url: str, tmp_path: Path) -> None:
    procs = [_cli("run", str(EXAMPLE), "--db", db_url, "-q", cwd=tmp_path) for _ in range(2)]
    finished = [_finish(p) for p in procs]
    assert [code for code, _, _ in finished] == [0, 0], [err for _, _, err in finished]
    with Store(db_url) as store:
        runs = store.list_runs()
        assert len(runs) == 2
        for info in runs:
            assert info.status is RunStatus.COMPLETE
            assert info.executions == CASES
            ids = [r.case_id for r in store.iter_results(info.id)]
            assert len(ids) == len(set(ids)) == CASES
