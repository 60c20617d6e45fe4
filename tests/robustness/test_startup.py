"""Bad input and faults at start-up, now that the commands import the store, the engine and
Alembic only when they use them: each is still one line and the same exit code, no traceback,
and nothing stored is lost."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import create_engine

from checkweigh.store._migrate import HEAD_REVISION, alembic_config
from support import cli_process as cli
from support.recorded_suite import standard_cases, write_suite


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write_suite(tmp_path, standard_cases())
    (tmp_path / "not-a-db.db").write_text("these are notes, not a database\n")
    return tmp_path


# (arguments, exit code, the one line on stderr; "" when the command succeeds)
ROWS = [
    (
        ["run", "suite.yaml", "--repeat", "0"],
        2,
        "error: --repeat: expected an integer >= 1, got 0 (see 'checkweigh run --help')",
    ),
    (
        ["run", "suite.yaml", "--judge-timeout", "abc"],
        2,
        "error: --judge-timeout: expected a number, got 'abc' (see 'checkweigh run --help')",
    ),
    (["nosuch"], 2, "error: no such command 'nosuch' (see 'checkweigh --help')"),
    (["run"], 2, "error: SUITE: missing argument (see 'checkweigh run --help')"),
    (
        ["stability", "latest", "--sims", "0"],
        2,
        "error: --sims: expected an integer >= 1, got 0 (see 'checkweigh stability --help')",
    ),
    (
        ["compare", "latest", "previous", "--alpha", "2", "--db", "sqlite:///{d}/runs.db"],
        2,
        "error: --alpha: expected a level between 0 and 1, got 2",
    ),
    (
        ["run", "suite.yaml", "--db", "sqlite:///{d}/not-a-db.db", "-q"],
        2,
        "error: cannot open database sqlite:///",
    ),
    (["--help", "--db", "x.db"], 2, "error: no such option --db (see 'checkweigh --help')"),
    # help and the version never open the database ($CHECKWEIGH_DB), however unusable it is
    (["--help"], 0, ""),
    (["run", "--help"], 0, ""),
    (["stability", "--help"], 0, ""),
    (["--version"], 0, ""),
]


@pytest.mark.parametrize(("args", "code", "line"), ROWS, ids=[" ".join(r[0]) for r in ROWS])
def test_bad_input_at_start_up(
    folder: Path, args: list[str], code: int, line: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # flags are checked before the database is opened: none of these reaches this file
    monkeypatch.setenv("CHECKWEIGH_DB", f"sqlite:///{folder / 'not-a-db.db'}")
    done = cli.run([a.replace("{d}", str(folder)) for a in args], folder)
    assert done.code == code, done.out + done.err
    assert "Traceback" not in done.err
    if line:
        assert len(done.err.strip().splitlines()) == 1, done.err
        assert done.err.startswith(line), done.err
    else:
        assert done.err == ""


def test_a_database_of_an_older_revision_is_migrated_with_its_runs(folder: Path) -> None:
    db = folder / "old.db"
    engine = create_engine(f"sqlite:///{db}")
    with engine.begin() as conn:  # the schema an older checkweigh made
        command.upgrade(alembic_config(conn), "0002")
    engine.dispose()
    with sqlite3.connect(db) as conn:
        conn.execute(
            "INSERT INTO runs (id, suite, suite_path, status, created_at, repeat, executions,"
            " config, abandoned) VALUES ('20260101-000000-abcdef', 'bookings', 'suite.yaml',"
            " 'complete', '2026-01-01 00:00:00', 1, 0, '{\"rubrics\": []}', 0)"
        )
    done = cli.run(["run", "suite.yaml", "--db", f"sqlite:///{db}", "-q"], folder)
    assert done.code == 0, done.out + done.err
    with sqlite3.connect(db) as conn:
        version = conn.execute("SELECT version_num FROM alembic_version").fetchall()
        assert version == [(HEAD_REVISION,)]
        runs = [row[0] for row in conn.execute("SELECT suite FROM runs ORDER BY created_at")]
    assert runs == ["bookings", "bookings"]


def test_a_database_from_a_newer_checkweigh_is_refused_in_one_line(folder: Path) -> None:
    db = folder / "new.db"
    assert cli.run(["run", "suite.yaml", "--db", f"sqlite:///{db}", "-q"], folder).code == 0
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '9999'")
    done = cli.run(["run", "suite.yaml", "--db", f"sqlite:///{db}", "-q"], folder)
    assert done.code == 2
    assert len(done.err.strip().splitlines()) == 1, done.err
    assert "revision '9999', which this version of checkweigh does not know" in done.err
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM case_results").fetchone() == (6,)
