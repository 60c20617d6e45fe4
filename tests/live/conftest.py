"""Live-scoring fixtures: a store on SQLite and on PostgreSQL (the work queue's two ways of
claiming traces)."""

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
        yield f"sqlite:///{tmp_path / 'live.db'}"
    else:
        with fresh_database() as url:
            yield url


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    """A store on ``db_url``, closed when the test ends (before its database is dropped)."""
    with Store(db_url) as opened:
        yield opened
