"""Signing in and out: the cookie holds a session id (never the token), sign-out ends it, a
sign-in lasts 12 hours at most, another site's page can neither sign in nor out, wrong tokens
are slowed per client, and a short token is refused. Time is a clock the test moves."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from checkweigh.errors import InputError
from checkweigh.server import create_app
from checkweigh.store import Store
from server.conftest import TOKEN, Stored
from support.html_page import parse

AUTH = {"Authorization": f"Bearer {TOKEN}"}
ORIGIN = "http://127.0.0.1:8000"


class Clock:
    """Seconds that pass only when the test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def app(stored: Stored, clock: Clock) -> Iterator[FastAPI]:
    with Store(stored.url) as store:
        yield create_app(store, token=TOKEN, allowed_hosts=[], clock=clock)


def browser(app: FastAPI, peer: str = "127.0.0.1") -> TestClient:
    return TestClient(app, base_url=ORIGIN, client=(peer, 50000))


def sign_in(client: TestClient, token: str = TOKEN, **headers: str) -> TestClient:
    answer = client.post(
        "/login", data={"token": token, "next": "/runs"}, headers=headers, follow_redirects=False
    )
    assert answer.status_code == 303, answer.text
    return client


def test_the_cookie_is_a_random_session_and_sign_out_ends_it(app: FastAPI, stored: Stored) -> None:
    client = sign_in(browser(app))
    session = client.cookies["checkweigh_session"]
    assert len(session) >= 43  # 256 random bits
    assert TOKEN not in session
    other = sign_in(browser(app)).cookies["checkweigh_session"]
    assert other != session  # one session per sign-in

    page = client.get(f"/runs/{stored.base}")
    assert page.status_code == 200
    button = parse(page.text).by_id("sign-out")
    assert (button.get("method"), button.get("action")) == ("post", "/logout")
    assert button.one(id="sign-out-button").text == "Sign out"
    assert client.get("/api/runs").status_code == 200  # the session reads the API too

    out = sign_out(client)
    assert (out.status_code, out.headers["location"]) == (303, "/login")
    assert 'checkweigh_session=""' in out.headers["set-cookie"]
    assert "Max-Age=0" in out.headers["set-cookie"]

    # the old cookie, kept by someone who copied it, opens nothing any more
    copied = browser(app)
    copied.cookies.set("checkweigh_session", session)
    again = copied.get(f"/runs/{stored.base}", follow_redirects=False)
    assert again.status_code == 303
    assert again.headers["location"].startswith("/login?next=")
    assert copied.get("/api/runs").status_code == 401
    # the other browser's session is its own: still signed in
    still = browser(app)
    still.cookies.set("checkweigh_session", other)
    assert still.get("/api/runs").status_code == 200


def test_a_page_without_a_session_has_no_sign_out(app: FastAPI, stored: Stored) -> None:
    by_header = browser(app).get(f"/runs/{stored.base}", headers=AUTH)
    assert by_header.status_code == 200
    assert parse(by_header.text).all(id="sign-out") == []
    form = browser(app).get("/login")
    assert parse(form.text).all(id="sign-out") == []


def test_a_sign_in_ends_after_twelve_hours(app: FastAPI, clock: Clock) -> None:
    client = sign_in(browser(app))
    clock.now += 12 * 3600 - 1
    assert client.get("/api/runs").status_code == 200
    clock.now += 2
    assert client.get("/api/runs").status_code == 401
    assert client.get("/runs", follow_redirects=False).status_code == 303


def test_a_made_up_session_opens_nothing(app: FastAPI) -> None:
    client = browser(app)
    for value in (TOKEN, "x" * 43, ""):
        client.cookies.set("checkweigh_session", value)
        assert client.get("/api/runs").status_code == 401


def test_another_sites_page_can_neither_sign_in_nor_out(app: FastAPI) -> None:
    client = browser(app)
    for origin in (
        "http://evil.example",
        "null",
        "http://127.0.0.1:9999",
        "https://127.0.0.1:8000",
    ):
        answer = client.post(
            "/login",
            data={"token": TOKEN, "next": "/runs"},
            headers={"Origin": origin},
            follow_redirects=False,
        )
        assert answer.status_code == 403, origin
        assert "set-cookie" not in answer.headers
        assert parse(answer.text).by_id("error").text == (
            "a sign-in or sign-out must come from this server's own page"
        )
    signed = sign_in(browser(app), Origin=ORIGIN)  # its own page names its own origin
    refused = sign_out(signed, Origin="http://evil.example")
    assert refused.status_code == 403
    assert signed.get("/api/runs").status_code == 200  # still signed in


def test_the_cookie_is_secure_over_https(stored: Stored) -> None:
    with Store(stored.url) as store:
        client = TestClient(create_app(store, token=TOKEN), base_url="https://127.0.0.1")
        answer = client.post("/login", data={"token": TOKEN}, follow_redirects=False)
    flags = {part.strip().lower() for part in answer.headers["set-cookie"].split(";")[1:]}
    assert {"httponly", "samesite=strict", "secure", "path=/"} <= flags


def sign_out(client: TestClient, **headers: str) -> httpx.Response:
    """The header's button: a form with no fields, as a browser posts it."""
    form = {"Content-Type": "application/x-www-form-urlencoded", **headers}
    return client.post("/logout", content=b"", headers=form, follow_redirects=False)


def _login(client: TestClient, token: str) -> int:
    answer = client.post("/login", data={"token": token}, follow_redirects=False)
    return answer.status_code


def test_wrong_tokens_are_slowed_per_client_doubling_the_wait(app: FastAPI, clock: Clock) -> None:
    guesser = browser(app, "10.0.0.7")
    # five free tries; the sixth wrong one starts the wait
    assert [_login(guesser, f"guess-{i}-xxxxxxxxxxxx") for i in range(6)] == [401] * 6
    waited = guesser.post("/login", data={"token": TOKEN}, follow_redirects=False)
    assert waited.status_code == 429  # not even the right token is checked while it waits
    assert waited.headers["retry-after"] == "1"
    assert parse(waited.text).by_id("login-error").text == "too many wrong tokens: try again in 1 s"
    assert "set-cookie" not in waited.headers
    header = guesser.get("/api/runs", headers=AUTH)
    assert header.status_code == 429
    assert header.json() == {"error": "too many wrong tokens: try again in 1 s"}

    # another client is not slowed by this one's guesses
    assert _login(browser(app, "10.0.0.8"), "wrong-but-first-try") == 401

    for wait in (1, 2, 4, 8):
        clock.now += wait - 0.01
        assert _login(guesser, "still-guessing-xxxxx") == 429
        clock.now += 0.01
        assert _login(guesser, "still-guessing-xxxxx") == 401  # checked, wrong: twice as long

    # the header's wrong tokens count the same
    clock.now += 16
    bearer = guesser.get("/api/runs", headers={"Authorization": "Bearer wrong-token-here"})
    assert bearer.status_code == 401
    refused = guesser.get("/api/runs", headers=AUTH)
    assert (refused.status_code, refused.headers["retry-after"]) == (429, "32")

    # the right token, once the wait is over, forgets the client's wrong tries
    clock.now += 32
    assert guesser.get("/api/runs", headers=AUTH).status_code == 200
    assert [_login(guesser, f"again-{i}-xxxxxxxxxxxx") for i in range(6)] == [401] * 6


def test_the_wait_stops_growing_at_five_minutes(app: FastAPI, clock: Clock) -> None:
    guesser = browser(app, "10.0.0.9")
    for _ in range(30):
        assert _login(guesser, "guess-xxxxxxxxxxxxxxxx") == 401
        clock.now += 301
    assert _login(guesser, "guess-xxxxxxxxxxxxxxxx") == 401
    refused = guesser.get("/api/runs", headers=AUTH)
    assert (refused.status_code, refused.headers["retry-after"]) == (429, "300")
    clock.now += 300
    assert guesser.get("/api/runs", headers=AUTH).status_code == 200  # never locked for good


@pytest.mark.parametrize("token", ["short", "fifteen-chars-x", " " * 20, "   padded-12ch  "])
def test_a_token_under_sixteen_characters_is_refused(stored: Stored, token: str) -> None:
    with Store(stored.url) as store, pytest.raises(InputError) as refused:
        create_app(store, token=token)
    assert str(refused.value) == "token: expected a token of at least 16 characters"
