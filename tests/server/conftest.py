"""Stored runs made by the real engine from recorded scheduling traces, and an in-process
client of the server over them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from checkweigh.cli import app as cli
from checkweigh.server import create_app
from checkweigh.store import Store
from support import cli_process
from support.recorded_suite import make_case, standard_cases, write_suite

SCRIPT_ID = '<script>alert("x")</script>&amp;'
"""A case id an attacker chose: it must come back as the same data, never as markup."""


def base_cases() -> list[dict[str, Any]]:
    """The standard six recorded cases, six good ones and one with a hostile id."""
    good = [make_case(f"good-{i}", participants=["Alice", "Bob"], time="10:00") for i in range(6)]
    hostile = make_case(SCRIPT_ID, participants=["Alice", "Bob"], time="11:00")
    return [*standard_cases(), *good, hostile]


def candidate_cases() -> list[dict[str, Any]]:
    """The base cases with three good ones now booking the wrong time."""
    cases = base_cases()
    for i in (6, 7, 8):
        cases[i] = make_case(cases[i]["id"], participants=["Alice", "Bob"], time="11:00")
    return cases


class Stored(NamedTuple):
    """A database holding a base run and a candidate run of the same suite."""

    url: str
    base: str
    candidate: str
    folder: Path


def run_suite(folder: Path, cases: list[dict[str, Any]], db: str, *extra: str) -> str:
    """Run the suite through the real CLI; return the run's id."""
    suite = write_suite(folder, cases, thresholds={"cases_pass_threshold": 0.0})
    args = ["run", str(suite), "--db", db, "-q", *extra]
    if db.startswith("sqlite"):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code in (0, 1), result.output
    else:
        # in a process of its own: the command leaves its connection pool open, and a
        # PostgreSQL connection left to the garbage collector is a ResourceWarning
        done = cli_process.run(args, folder)
        assert done.code in (0, 1), done.out + done.err
    with Store(db) as store:
        return store.get_run("latest").id


def store_two_runs(folder: Path, db: str) -> Stored:
    base = run_suite(folder / "base", base_cases(), db)
    candidate = run_suite(folder / "candidate", candidate_cases(), db)
    return Stored(db, base, candidate, folder)


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Stored:
    folder = tmp_path_factory.mktemp("server")
    return store_two_runs(folder, f"sqlite:///{folder / 'runs.db'}")


@pytest.fixture
def client(stored: Stored) -> Iterator[TestClient]:
    with Store(stored.url) as store, TestClient(create_app(store)) as c:
        yield c


TOKEN = "s3cret-token-for-tests"


@pytest.fixture
def token_client(stored: Stored) -> Iterator[TestClient]:
    with Store(stored.url) as store, TestClient(create_app(store, token=TOKEN)) as c:
        yield c
