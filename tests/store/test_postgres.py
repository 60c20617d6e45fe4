"""PostgreSQL URLs: plain ``postgresql://`` means psycopg 3, passwords never reach a message, and
a missing driver or an unreachable server is one line."""

from __future__ import annotations

import sys

import pytest
from sqlalchemy.engine import make_url

from checkweigh.errors import InputError, StoreError
from checkweigh.store import Store, resolve_url


@pytest.mark.parametrize(
    ("given", "resolved"),
    [
        ("postgresql://ann@db.internal/evals", "postgresql+psycopg://ann@db.internal/evals"),
        (
            "postgres://ann@db.internal:5433/evals",
            "postgresql+psycopg://ann@db.internal:5433/evals",
        ),
        ("postgresql+psycopg://ann@db/evals", "postgresql+psycopg://ann@db/evals"),
        ("postgresql+psycopg2://ann@db/evals", "postgresql+psycopg2://ann@db/evals"),
        # a password with reserved characters stays percent-encoded, and stays in the URL used
        (
            "postgresql://ann:p%40ss%2Fw%3Ard@db/evals",
            "postgresql+psycopg://ann:p%40ss%2Fw%3Ard@db/evals",
        ),
        (
            "postgresql:///evals?host=/run/postgresql",
            "postgresql+psycopg:///evals?host=/run/postgresql",
        ),
    ],
)
def test_postgres_urls_use_psycopg(given: str, resolved: str) -> None:
    assert make_url(resolve_url(given)) == make_url(resolved)


def test_the_password_survives_the_rewrite() -> None:
    url = make_url(resolve_url("postgresql://ann:p%40ss%2Fw%3Ard@db/evals"))
    assert url.password == "p@ss/w:rd"


def test_a_plain_url_opens_the_store_with_psycopg(pg_url: str) -> None:
    assert pg_url.startswith("postgresql://")
    with Store(pg_url) as store:
        assert store.engine.dialect.driver == "psycopg"
        assert store.url.startswith("postgresql+psycopg://")
        store.create_run("sched", "s.yaml", {"rubrics": []}, 1)
        assert len(store.list_runs()) == 1


def test_an_unreachable_server_is_one_line_without_the_password() -> None:
    with pytest.raises(StoreError) as caught:
        Store("postgresql://ann:s3cret@127.0.0.1:1/evals")
    message = str(caught.value)
    safe = "postgresql+psycopg://ann:***@127.0.0.1:1/evals"
    assert message.startswith(f"cannot open database {safe}: connection failed")
    assert "s3cret" not in message
    assert "\n" not in message


def test_a_missing_driver_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg now fails
    with pytest.raises(InputError) as caught:
        Store("postgresql://ann:s3cret@127.0.0.1:1/evals")
    message = caught.value.one_line()
    assert message.startswith("--db: the database driver for 'postgresql+psycopg://ann:***@")
    assert "pip install 'checkweigh[postgres]'" in message
    assert "s3cret" not in message


def test_postgres_connections_time_out_unless_the_url_says_otherwise() -> None:
    from checkweigh.store._connect import CONNECT_TIMEOUT_S, connect_args

    url = resolve_url("postgresql://ann:pw@db.internal/evals")
    assert connect_args(url) == {"connect_timeout": CONNECT_TIMEOUT_S}
    own = resolve_url("postgresql://ann:pw@db.internal/evals?connect_timeout=3")
    assert connect_args(own) == {}
    assert connect_args("sqlite:///x.db") == {}
