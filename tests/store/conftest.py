"""Store fixtures: every store test that takes ``db_url`` runs on SQLite and on PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from checkweigh.store import Store
from support.postgres import fresh_database


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A new, empty database: a SQLite file, or a fresh database on the test server."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'store.db'}"
    else:
        with fresh_database() as url:
            yield url


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A fresh database on the PostgreSQL test server."""
    with fresh_database() as url:
        yield url


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    """A store on ``db_url``, closed when the test ends (before its database is dropped)."""
    with Store(db_url) as opened:
        yield opened
