"""Alembic migrations on SQLite and PostgreSQL: a new database is created at head, a database
made by the old ``create_all`` is adopted with its runs, and the migrations build exactly the
tables the models describe."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Column, MetaData, String, create_engine, inspect, text

from checkweigh.errors import StoreError
from checkweigh.store import RunStatus, Store, result_detail
from checkweigh.store._migrate import (
    INITIAL_REVISION,
    alembic_config,
    current_revision,
    head_revision,
)
from checkweigh.store._tables import Base


def _version(store: Store) -> list[str]:
    with store.engine.connect() as conn:
        return [row[0] for row in conn.execute(text("SELECT version_num FROM alembic_version"))]


def _schema_diffs(store: Store, metadata: MetaData) -> list[Any]:
    with store.engine.connect() as conn:
        context = MigrationContext.configure(
            conn, opts={"compare_type": True, "compare_server_default": True}
        )
        return list(compare_metadata(context, metadata))


def test_a_new_database_is_created_at_head(db_url: str) -> None:
    with Store(db_url) as store:
        assert _version(store) == [head_revision()]
        tables = set(inspect(store.engine).get_table_names())
        assert tables == {
            "alembic_version",
            "runs",
            "case_results",
            "case_bodies",
            "verdicts_not_passed",
            "labels",
            "judge_batches",
            "live_traces",
            "live_chunks",
            "live_windows",
            "live_budget",
        }
    # opening it again changes nothing
    with Store(db_url) as store:
        assert _version(store) == [head_revision()]


def _migrated(db_url: str) -> Store:
    """A store on a database the migrations built, one by one from nothing."""
    engine = create_engine(db_url.replace("postgresql://", "postgresql+psycopg://"))
    with engine.begin() as conn:
        command.upgrade(alembic_config(conn), "head")
    engine.dispose()
    return Store(db_url)


def test_the_migrations_build_exactly_the_models_tables(db_url: str) -> None:
    with _migrated(db_url) as store:
        assert _version(store) == [head_revision()]
        assert _schema_diffs(store, Base.metadata) == []


def test_a_new_database_is_made_from_the_models_without_alembic(tmp_path: Path) -> None:
    # what a new database gets without Alembic is what the migrations build
    made = f"sqlite:///{tmp_path / 'made.db'}"
    code = (
        "import sys; from checkweigh.store import Store; "
        f"Store({made!r}).close(); print(sorted(m for m in sys.modules if 'alembic' in m))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    with _migrated(f"sqlite:///{tmp_path / 'migrated.db'}") as migrated, Store(made) as new:
        assert _version(new) == [head_revision()]
        assert _schema(new) == _schema(migrated)
        assert _schema_diffs(new, Base.metadata) == []


def _schema(store: Store) -> dict[str, Any]:
    """Every table's columns, keys and indexes as the database reports them."""
    found = inspect(store.engine)

    def named(items: list[Any]) -> list[Any]:
        return sorted((repr(sorted(i.items(), key=str)) for i in items), key=str)

    return {
        table: {
            "columns": [
                (c["name"], str(c["type"]), c["nullable"], c.get("default"))
                for c in found.get_columns(table)
            ],
            "primary": found.get_pk_constraint(table)["constrained_columns"],
            "foreign": named(found.get_foreign_keys(table)),
            "indexes": named(found.get_indexes(table)),
            "unique": named(found.get_unique_constraints(table)),
        }
        for table in sorted(found.get_table_names())
    }


def test_the_schema_comparison_notices_a_difference(store: Store) -> None:
    # the check above is only worth something if a model the migrations lack shows up
    changed = MetaData()
    for table in Base.metadata.tables.values():
        table.to_metadata(changed)
    changed.tables["runs"].append_column(Column("owner", String(40)))
    diffs = _schema_diffs(store, changed)
    assert [d[0] for d in diffs] == ["add_column"]
    assert diffs[0][3].name == "owner"


def test_a_database_made_by_create_all_is_adopted(db_url: str) -> None:
    # the store before migrations: the tables create_all made then (revision 0001's), no
    # alembic_version, and a run in it
    engine = create_engine(db_url.replace("postgresql://", "postgresql+psycopg://"))
    with engine.begin() as conn:
        command.upgrade(alembic_config(conn), INITIAL_REVISION)
        conn.execute(text("DROP TABLE alembic_version"))
    old = MetaData()
    old.reflect(engine)
    with engine.begin() as conn:
        conn.execute(
            old.tables["runs"].insert(),
            {
                "id": "20260101-000000-abcdef",
                "suite": "sched",
                "suite_path": "suite.yaml",
                "status": "complete",
                "created_at": datetime(2026, 1, 1, tzinfo=UTC),
                "repeat": 1,
                "executions": 0,
                "config": {"rubrics": []},
            },
        )
        assert current_revision(conn) is None
    engine.dispose()

    with Store(db_url) as store:
        assert _version(store) == [head_revision()]
        assert [r.id for r in store.list_runs()] == ["20260101-000000-abcdef"]
        assert store.get_run("latest").status is RunStatus.COMPLETE
        store.create_run("sched", "suite.yaml", {"rubrics": []}, 1)
        assert len(store.list_runs()) == 2
        assert _schema_diffs(store, Base.metadata) == []


def test_downgrade_to_nothing_and_back(store: Store) -> None:
    with store.engine.begin() as conn:
        command.downgrade(alembic_config(conn), "base")
        assert set(inspect(conn).get_table_names()) == {"alembic_version"}
        command.upgrade(alembic_config(conn), "head")
    assert _version(store) == [head_revision()]
    assert _schema_diffs(store, Base.metadata) == []


def test_a_database_from_a_newer_checkweigh_is_refused(store: Store) -> None:
    with store.engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    with pytest.raises(StoreError, match="revision '9999', which this version of checkweigh"):
        Store(store.url)


def test_the_migrations_ship_inside_the_package() -> None:
    # hatch builds the wheel from src/checkweigh: everything Alembic needs lives under it
    folder = resources.files("checkweigh.store") / "migrations"
    assert (folder / "env.py").is_file()
    assert (folder / "script.py.mako").is_file()
    assert (folder / "versions" / f"{INITIAL_REVISION}_initial.py").is_file()
    assert (folder / "versions" / "0002_run_owner.py").is_file()
    assert (folder / "versions" / "0003_cases_verdicts.py").is_file()
    assert (folder / "versions" / "0004_labels.py").is_file()
    assert (folder / "versions" / "0005_judge_batches.py").is_file()
    assert (folder / "versions" / "0006_live.py").is_file()
    assert head_revision() == "0006"


def test_revision_0003_gives_the_results_already_stored_their_verdict_rows(db_url: str) -> None:
    # a database at 0002 holding a run with two results, as the previous version wrote them
    engine = create_engine(db_url.replace("postgresql://", "postgresql+psycopg://"))
    with engine.begin() as conn:
        command.upgrade(alembic_config(conn), "0002")
    old = MetaData()
    old.reflect(engine)
    run_id = "20260101-000000-abcdef"
    verdicts = [
        {"grounded": {"state": "passed", "reason": "ok"}, "no_pii": {"state": "failed"}},
        {"grounded": {"state": "errored", "reason": "judge", "error": "timeout"}},
    ]
    with engine.begin() as conn:
        conn.execute(
            old.tables["runs"].insert(),
            {
                "id": run_id,
                "suite": "support",
                "suite_path": "suite.yaml",
                "status": "complete",
                "created_at": datetime(2026, 1, 1, tzinfo=UTC),
                "repeat": 1,
                "executions": 2,
                "config": {"rubrics": []},
                "abandoned": False,
            },
        )
        conn.execute(
            old.tables["case_results"].insert(),
            [
                {
                    "run_id": run_id,
                    "idx": i,
                    "case_id": f"c{i}",
                    "repeat": 0,
                    "errored": i == 1,
                    "latency_ms": None,
                    "record": {
                        "case_id": f"c{i}",
                        "repeat": 0,
                        "position": i,
                        "verdicts": v,
                        "scores": {},
                    },
                }
                for i, v in enumerate(verdicts)
            ],
        )
    engine.dispose()

    with Store(db_url) as store:
        assert _version(store) == [head_revision()]
        with store.engine.connect() as conn:
            rows = conn.execute(
                text('SELECT "check", state, idx FROM verdicts_not_passed ORDER BY idx, "check"')
            ).all()
        assert [tuple(r) for r in rows] == [  # a passed verdict has no row
            ("no_pii", "failed", 0),
            ("grounded", "errored", 1),
        ]
        detail = result_detail(store, store.get_run(run_id), "c0", 0)
        assert detail is not None
        assert detail.case is None
        assert detail.exchanges == ()
        assert detail.result.verdicts["no_pii"].state == "failed"
