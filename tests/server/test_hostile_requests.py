"""Every route of the app, listed from ``app.routes``, asked with what an attacker or a broken
client sends: a 64-bit-overflowing offset, a 60,000-character id, a body of the wrong type.
Each is a 4xx that names what was wrong, in the route's own shape (JSON from the API, the
error page from a page), and never echoes the input, names a file or reaches the database's
text."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from starlette.routing import BaseRoute, Mount, Route

import checkweigh.server._runs as runs_module
from checkweigh.server import create_app
from checkweigh.store import Store
from server.conftest import TOKEN, Stored
from support.html_page import parse

AUTH = {"Authorization": f"Bearer {TOKEN}"}
HUGE_ID = "r" * 60_000
OVERFLOWS = ["9223372036854775808", "-9223372036854775809", "1" + "0" * 40]
# every integer a page reads by hand (pages do not declare their parameters to FastAPI)
PAGE_INTEGERS = {
    "/runs": {"page"},
    "/runs/{run_id}": {"page"},
    "/runs/{run_id}/cases/{case_id:text}": {"repeat"},
    "/compare/cases/{case_id:text}": {"repeat"},
    "/runs/{run_id}/stability": {"sims", "seed"},
}
INTEGER_NAMES = sorted({"offset", "limit", "repeat", "page", "sims", "seed"})


def _walk(routes: Sequence[BaseRoute], prefix: str = "") -> Iterator[tuple[str, BaseRoute]]:
    """Every route with its full path, into included routers (which recent FastAPI keeps
    whole, with their prefix) and mounts."""
    for route in routes:
        included = getattr(route, "original_router", None)
        if included is not None:
            yield from _walk(included.routes, prefix + route.include_context.prefix)  # type: ignore[attr-defined]
        elif isinstance(route, Route | Mount):
            yield prefix + route.path, route


def routes_of(app: FastAPI) -> list[tuple[str, str, BaseRoute]]:
    """(method, path, route) for every route; a mount as GET of one of its files."""
    found: list[tuple[str, str, BaseRoute]] = []
    for path, route in _walk(app.routes):
        if isinstance(route, Mount):
            found.append(("GET", path + "/{path}", route))
            continue
        assert isinstance(route, Route)
        for method in sorted(route.methods or ()):
            if method != "HEAD":
                found.append((method, path, route))
    return found


def _filled(template: str, stored: Stored, **given: str) -> str:
    """``template`` with its parameters: a stored run and case, a file the mount serves."""
    file = "swagger-ui.css" if template.startswith("/static/swagger/") else "ui.css"
    values = {
        "run_id": stored.base,
        "case_id": "ok-1",
        "path": file,
        "check": "correct_time",
        "name": "airline-prod",  # a monitor's: this server runs none, so every one is a 404
    }
    values |= given
    for name, value in values.items():
        for spelled in (f"{{{name}:path}}", f"{{{name}:text}}", f"{{{name}}}"):
            template = template.replace(spelled, value)
    assert "{" not in template, template
    return template


def _declared_integers(route: BaseRoute) -> set[str]:
    """The integer query parameters an API route declares."""
    if not isinstance(route, APIRoute):
        return set()
    return {
        field.name for field in route.dependant.query_params if field.field_info.annotation is int
    }


@pytest.fixture(scope="module")
def app_and_client(stored: Stored) -> Iterator[tuple[FastAPI, TestClient]]:
    with Store(stored.url) as store:
        app = create_app(store, token=TOKEN, allowed_hosts=[])
        with TestClient(app, base_url="http://127.0.0.1:8000", headers=AUTH) as client:
            yield app, client


def assert_says_nothing_of(answer: Any, stored: Stored, *sent: str) -> None:
    """The answer is a 4xx in its route's shape, with no part of ``sent``, no path, no SQL."""
    assert 400 <= answer.status_code < 500, (answer.status_code, answer.text[:300])
    text = answer.text + str(answer.headers)
    for value in sent:
        for start in range(0, max(1, len(value) - 40), 40):
            assert value[start : start + 40] not in text
    for leak in (str(stored.folder), "runs.db", "sqlite", "SELECT", "Traceback"):
        assert leak not in text, leak
    if answer.request.url.path.startswith(("/api/", "/static/")):  # not a page: JSON
        assert answer.headers["content-type"] == "application/json"
        assert set(answer.json()) == {"error"}
    elif answer.request.url.path.startswith("/v1/"):  # OTLP: a google.rpc.Status as JSON
        assert answer.headers["content-type"] == "application/json"
        assert set(answer.json()) == {"code", "message"}
    else:
        assert answer.headers["content-type"].startswith("text/html")


def test_the_walk_finds_every_route(app_and_client: tuple[FastAPI, TestClient]) -> None:
    app, _ = app_and_client
    found = {(method, path) for method, path, _ in routes_of(app)}
    assert {
        ("GET", "/api/runs"),
        ("POST", "/api/runs"),
        ("GET", "/api/runs/{run_id}/results/{case_id:text}"),
        ("GET", "/api/runs/compare"),
        ("GET", "/runs/{run_id}/cases/{case_id:text}"),
        ("POST", "/login"),
        ("POST", "/logout"),
        ("GET", "/static/{path}"),
    } <= found
    assert len(found) >= 20


def test_a_huge_id_anywhere_is_a_404_that_quotes_none_of_it(
    app_and_client: tuple[FastAPI, TestClient], stored: Stored
) -> None:
    app, client = app_and_client
    asked = 0
    for method, path, _ in routes_of(app):
        names = [n for n in ("run_id", "case_id", "path", "check", "name") if f"{{{n}" in path]
        for name in names:
            url = _filled(path, stored, **{name: HUGE_ID})
            # the side-by-side page of one case names its two runs in the query
            runs = {"base": stored.base, "candidate": stored.candidate}
            params = runs if path.startswith("/compare/cases/") else None
            answer = client.request(method, url, params=params, follow_redirects=False)
            assert answer.status_code in (404, 405, 415), (method, path, name)
            assert_says_nothing_of(answer, stored, HUGE_ID)
            asked += 1
    # the ids given as query parameters
    for path in ("/api/runs/compare", "/compare", "/compare/cases/ok-1"):
        for field in ("base", "candidate"):
            refs = {"base": stored.base, "candidate": stored.candidate, field: HUGE_ID}
            answer = client.get(path, params=refs)
            assert answer.status_code == 404, (path, field)
            assert_says_nothing_of(answer, stored, HUGE_ID)
            asked += 1
    assert asked >= 12


def test_an_id_holding_a_nul_is_a_404(
    app_and_client: tuple[FastAPI, TestClient], stored: Stored
) -> None:
    _, client = app_and_client
    for path in (
        "/api/runs/a%00b",
        f"/api/runs/{stored.base}/results/ok%001",
        f"/runs/{stored.base}/cases/ok%001",
        "/runs/a%00b",
    ):
        answer = client.get(path)
        assert answer.status_code == 404, path
        assert_says_nothing_of(answer, stored)


@pytest.mark.parametrize("value", OVERFLOWS)
def test_an_out_of_range_integer_anywhere_is_a_422_naming_it(
    app_and_client: tuple[FastAPI, TestClient], stored: Stored, value: str
) -> None:
    app, client = app_and_client
    refused = 0
    for method, path, route in routes_of(app):
        if method != "GET" or "/label" in path:  # a judge check's: see test_labels_api
            continue
        reads = _declared_integers(route) | PAGE_INTEGERS.get(path, set())
        for name in INTEGER_NAMES:
            params = {"base": stored.base, "candidate": stored.candidate}
            if path.endswith("/stability"):
                # no judge samples stored to measure noise from; few reruns: quick
                params |= {"noise": "correct_time=0.1", "sims": "50"}
            params[name] = value
            answer = client.get(_filled(path, stored), params=params, follow_redirects=False)
            if name not in reads:  # a parameter the route does not take changes nothing
                # (a monitor's routes: this server runs none, so theirs is the 404 it was)
                same = (404,) if "/monitors/{name}" in path else ()
                status = answer.status_code
                assert status < 400 or status in same, (path, name, answer.text[:200])
                continue
            assert answer.status_code == 422, (path, name, answer.text[:200])
            assert_says_nothing_of(answer, stored, value)
            if path.startswith("/api/"):
                message = answer.json()["error"]
            else:
                message = parse(answer.text).by_id("error").text
            assert message.startswith((f"query parameter {name}: ", f"{name}: ")), message
            refused += 1
    assert refused >= 10  # offset, limit and repeat of the API, page, repeat, sims, seed...


def test_a_body_of_the_wrong_type_is_a_415_that_quotes_none_of_it(
    app_and_client: tuple[FastAPI, TestClient], stored: Stored
) -> None:
    app, client = app_and_client
    body = "HOSTILE-BODY-" + "<script>alert(1)</script>" * 400
    posts = [path for method, path, _ in routes_of(app) if method == "POST"]
    assert set(posts) == {
        "/api/runs",
        "/api/labels",
        "/login",
        "/logout",
        "/v1/traces",
        "/v1/logs",
        "/v1/metrics",
    }
    # metrics are refused whatever their type: a 404 saying where they belong
    metrics = client.post("/v1/metrics", content=body, headers={"Content-Type": "text/plain"})
    assert metrics.status_code == 404
    assert_says_nothing_of(metrics, stored, body)
    for path in (p for p in posts if p != "/v1/metrics"):
        for kind in ("text/plain", "application/xml", "multipart/form-data; boundary=x", None):
            headers = {"Content-Type": kind} if kind else {}
            answer = client.post(path, content=body, headers=headers, follow_redirects=False)
            assert answer.status_code == 415, (path, kind, answer.text[:200])
            assert_says_nothing_of(answer, stored, body)
        wrong = client.post(path, content=body, headers={"Content-Type": "text/plain"})
        if path.startswith("/v1/"):  # OTLP's own error shape: a google.rpc.Status as JSON
            assert wrong.json() == {
                "code": 3,
                "message": "Content-Type: expected application/x-protobuf or application/json, "
                "got 'text/plain'",
            }
        elif path.startswith("/api/"):
            assert wrong.json() == {"error": "body: expected JSON (Content-Type: application/json)"}
        else:
            error = parse(wrong.text).by_id("error").text
            assert error == "body: expected a form (application/x-www-form-urlencoded)"


def test_a_json_body_that_is_no_run_is_a_422_that_quotes_none_of_it(
    app_and_client: tuple[FastAPI, TestClient], stored: Stored
) -> None:
    _, client = app_and_client
    marker = "HOSTILE-VALUE-" + "x" * 200
    for body in (
        {"run": marker, "summary": marker, "results": marker},
        {"run": {"id": marker, "status": marker}, "summary": {}, "results": [marker]},
        [marker] * 50,
        marker,
    ):
        answer = client.post("/api/runs", json=body)
        assert answer.status_code == 422, answer.text[:200]
        assert_says_nothing_of(answer, stored, marker)
        assert answer.json()["error"].startswith("body")


def test_a_store_that_fails_is_a_503_naming_no_database(
    stored: Stored, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    copy = tmp_path / "broken.db"
    shutil.copy(stored.folder / "runs.db", copy)
    with Store(f"sqlite:///{copy}") as store:
        client = TestClient(create_app(store), base_url="http://127.0.0.1")
        assert client.get("/api/runs").status_code == 200
        store.engine.dispose()  # no connection keeps the good file's pages
        copy.write_bytes(b"this is not a database\n" * 1000)
        with caplog.at_level(logging.ERROR, logger="checkweigh.server"):
            for path in ("/api/runs", f"/api/runs/{stored.base}", "/runs"):
                answer = client.get(path)
                assert answer.status_code == 503, (path, answer.text[:200])
                text = answer.text
                assert str(tmp_path) not in text
                assert "broken.db" not in text
                assert "not a database" not in text
        message = "the results store could not answer; the server's log says why"
        assert client.get("/api/runs").json() == {"error": message}
        assert str(copy) in caplog.text  # the log, on the server's side, says which file


def test_an_unexpected_failure_is_a_500_saying_nothing_of_it(
    stored: Stored, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError(f"cannot read {stored.folder / 'runs.db'}: secret detail")

    monkeypatch.setattr(runs_module, "page_runs", broken)
    with Store(stored.url) as store:
        client = TestClient(create_app(store), raise_server_exceptions=False)
        answer = client.get("/api/runs")
    assert answer.status_code == 500
    assert answer.json() == {"error": "the server failed on this request; its log says why"}
