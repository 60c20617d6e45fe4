"""What a request passes before any route: a ``Host`` the server answers to (no DNS rebinding)
and a body no larger than the upload limit, refused before it is read whole."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from checkweigh.server import create_app
from checkweigh.store import Store
from server.conftest import TOKEN, Stored
from support.html_page import parse

AUTH = {"Authorization": f"Bearer {TOKEN}"}
REFUSED = (
    "this server does not answer to that host name: open it as 127.0.0.1 or localhost, "
    "or start it with --allowed-host NAME"
)


@pytest.fixture
def guarded(stored: Stored) -> Iterator[TestClient]:
    """A server told it is also reached as evals.internal."""
    with (
        Store(stored.url) as store,
        TestClient(
            create_app(store, allowed_hosts=["127.0.0.1", "Evals.Internal"]),
            base_url="http://127.0.0.1:8000",
        ) as c,
    ):
        yield c


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1:8000",
        "127.0.0.1",
        "localhost:8000",
        "LOCALHOST",
        "localhost.:8000",
        "[::1]:8000",
        "[::1]",
        "127.8.9.10:8000",
        "evals.internal",
        "evals.internal:443",
        "EVALS.INTERNAL.",
    ],
)
def test_loopback_names_and_the_allowed_ones_are_answered(
    guarded: TestClient, stored: Stored, host: str
) -> None:
    answer = guarded.get("/api/runs", headers={"Host": host})
    assert answer.status_code == 200, answer.text
    assert answer.json()["total"] == 2
    assert guarded.get(f"/runs/{stored.base}", headers={"Host": host}).status_code == 200


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",
        "evil.example:8000",
        "localhost.evil.example",
        "127.0.0.1.evil.example",
        "evals.internal.evil.example",
        "10.0.0.5:8000",
        "[::2]:8000",
        "",
        "testserver",
    ],
)
def test_any_other_host_name_gets_a_421_and_no_data(
    guarded: TestClient, stored: Stored, host: str
) -> None:
    for path in ("/api/runs", f"/api/runs/{stored.base}/results/ok-1", "/openapi.json"):
        answer = guarded.get(path, headers={"Host": host})
        assert answer.status_code == 421, path
        assert answer.json() == {"error": REFUSED}
        assert stored.base not in answer.text
        assert answer.headers["x-content-type-options"] == "nosniff"
    page = guarded.get(f"/runs/{stored.base}", headers={"Host": host})
    assert page.status_code == 421
    assert page.headers["content-type"].startswith("text/html")
    assert parse(page.text).by_id("error").text == REFUSED
    assert stored.base not in page.text
    upload = guarded.post("/api/runs", json={}, headers={"Host": host})
    assert upload.status_code == 421


def test_without_allowed_hosts_the_app_answers_any_name(client: TestClient) -> None:
    # an app mounted behind something else, which checks the name itself (serve always checks)
    assert client.get("/api/runs", headers={"Host": "anything.example"}).status_code == 200


def _upload_client(stored: Stored, limit: int) -> tuple[Store, httpx.AsyncClient]:
    store = Store(stored.url)
    app = create_app(store, token=TOKEN, max_upload=limit)
    transport = httpx.ASGITransport(app=app)
    return store, httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1")


async def _post_stream(
    stored: Stored, limit: int, chunks: int, chunk: bytes, length: int | None
) -> tuple[httpx.Response, int]:
    """POST ``chunks`` times ``chunk`` as a stream (with ``length`` as its Content-Length, or
    chunked without one); the answer and how many chunks the server pulled."""
    pulled = 0

    async def body() -> AsyncIterator[bytes]:
        nonlocal pulled
        for _ in range(chunks):
            pulled += 1
            yield chunk

    headers = {**AUTH, "Content-Type": "application/json"}
    if length is not None:
        headers["Content-Length"] = str(length)
    store, client = _upload_client(stored, limit)
    with store:
        async with client:
            answer = await client.post("/api/runs", content=body(), headers=headers)
    return answer, pulled


MIB = 1024 * 1024
TOO_LARGE = {"error": "body: larger than this server's limit of 1 MiB (--max-upload)"}


def test_a_body_declared_over_the_limit_is_a_413_before_any_of_it_is_read(
    stored: Stored,
) -> None:
    answer, pulled = asyncio.run(
        _post_stream(stored, MIB, chunks=300, chunk=b"x" * 65536, length=300 * 65536)
    )
    assert answer.status_code == 413
    assert answer.json() == TOO_LARGE
    assert pulled == 0


def test_a_chunked_body_over_the_limit_is_cut_off_at_the_limit(stored: Stored) -> None:
    # 200 MiB offered without a Content-Length: the server stops pulling just past 1 MiB
    answer, pulled = asyncio.run(
        _post_stream(stored, MIB, chunks=3200, chunk=b"x" * 65536, length=None)
    )
    assert answer.status_code == 413
    assert answer.json() == TOO_LARGE
    assert pulled == MIB // 65536 + 1


def test_a_body_within_the_limit_is_read_whole(stored: Stored, tmp_path: Path) -> None:
    # a real run's export just under a limit set to its size: stored, nothing cut off
    with Store(stored.url) as origin:
        run = TestClient(create_app(origin)).get(f"/api/runs/{stored.base}").json()
    body = json.dumps({"run": run, "summary": run["summary"], "results": []}).encode()

    async def post(limit: int) -> httpx.Response:
        store = Store(f"sqlite:///{tmp_path / f'team-{limit}.db'}")
        app = create_app(store, token=TOKEN, max_upload=limit)
        transport = httpx.ASGITransport(app=app)
        with store:
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:

                async def chunks() -> AsyncIterator[bytes]:
                    for start in range(0, len(body), 1000):
                        yield body[start : start + 1000]

                headers = {**AUTH, "Content-Type": "application/json"}
                return await c.post("/api/runs", content=chunks(), headers=headers)

    fits = asyncio.run(post(len(body)))
    # past the limit's check: the route read it all (the run holds results it does not list)
    assert fits.status_code == 422, fits.text
    assert fits.json()["error"].startswith("body.results: 0 result(s) but the summary counts")
    over = asyncio.run(post(len(body) - 1))
    assert over.status_code == 413
    assert over.json() == {
        "error": f"body: larger than this server's limit of {len(body) - 1} bytes (--max-upload)"
    }
