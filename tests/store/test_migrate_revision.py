"""Opening a store reads the database's revision without Alembic (tests/store/test_migrations.py
covers the databases behind and ahead of it, which still go through Alembic)."""

from __future__ import annotations

from sqlalchemy import text

from checkweigh.store import Store
from checkweigh.store._migrate import HEAD_REVISION, head_revision


def test_the_revision_read_without_alembic_is_alembics_head() -> None:
    # a new migration must move HEAD_REVISION too, or every open would run Alembic again
    assert head_revision() == HEAD_REVISION


def test_a_database_at_head_is_opened_as_it_is(db_url: str) -> None:
    with Store(db_url) as store:
        store.create_run("sched", "suite.yaml", {"rubrics": []}, 1)
    with Store(db_url) as store:
        with store.engine.connect() as conn:
            versions = [row[0] for row in conn.execute(text("SELECT * FROM alembic_version"))]
        assert versions == [HEAD_REVISION]
        assert [r.suite for r in store.list_runs()] == ["sched"]
