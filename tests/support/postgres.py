"""A fresh PostgreSQL database for each test, on the server `scripts/with_postgres.sh` started.

`make test` (and so CI) runs pytest through that script, which sets CHECKWEIGH_TEST_PG_URL to the
server's maintenance database and CHECKWEIGH_REQUIRE_PG=1. Without a URL the PostgreSQL tests are
skipped, with the reason, unless CHECKWEIGH_REQUIRE_PG=1: then they fail, so that a run which
was meant to test PostgreSQL never passes by skipping it.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from sqlalchemy.engine import make_url

URL_ENV = "CHECKWEIGH_TEST_PG_URL"
REQUIRE_ENV = "CHECKWEIGH_REQUIRE_PG"


def server_url() -> str:
    """The test server's URL; skips (or, when required, fails) the test if there is none."""
    url = os.environ.get(URL_ENV)
    if not url:
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{REQUIRE_ENV}=1 but {URL_ENV} is not set: no PostgreSQL server to test")
        pytest.skip(
            f"no PostgreSQL server: {URL_ENV} is not set "
            "(`make test` starts one with scripts/with_postgres.sh)"
        )
    host = make_url(url).host or "localhost"
    if not _is_loopback(host):
        pytest.fail(f"{URL_ENV} must name a server on loopback, not {host!r}")
    return url


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@contextmanager
def fresh_database() -> Iterator[str]:
    """Create an empty database on the test server; yield its URL; drop it afterwards."""
    import psycopg
    from psycopg import sql

    admin = server_url()
    name = f"checkweigh_test_{secrets.token_hex(6)}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield make_url(admin).set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))
