"""Who may ask (a bearer token compared in constant time, or for reading the session the
login page starts), how fast a client may guess, and how answers are marked (nosniff
everywhere, a CSP on every page)."""

from __future__ import annotations

import hmac
import math
from urllib.parse import quote, urlsplit

from starlette.datastructures import MutableHeaders
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ._html import CSP, is_page
from ._sessions import Sessions, Throttle

COOKIE = "checkweigh_session"
"""The cookie the login page sets: a session's random id (never the token), HttpOnly and
SameSite=Strict."""
_READ = ("GET", "HEAD")
_OPEN = ("/login", "/logout")  # they check what they are sent themselves
SESSION_WRITES = ("/api/labels",)
"""The writes a signed-in page may make with its session: labels, posted as JSON by the
labelling page from this server's origin."""


def client_of(request: Request) -> str:
    """Who is asking, as the throttle counts them: the peer's address."""
    return request.client.host if request.client else "unknown"


def too_many(wait: float) -> JSONResponse:
    """A 429 for a client that must wait ``wait`` seconds before its token is checked again."""
    seconds = max(1, math.ceil(wait))
    return JSONResponse(
        {"error": f"too many wrong tokens: try again in {seconds} s"},
        status_code=429,
        headers={"Retry-After": str(seconds)},
    )


def same_origin(request: Request) -> bool:
    """Whether a form post comes from this server's own pages: a browser names the page's
    origin in ``Origin``; another site's page cannot post a guess or a sign-out here. A
    client that sends no ``Origin`` (curl, a script) is not a browser on another site."""
    origin = request.headers.get("origin")
    return origin is None or origin == f"{request.url.scheme}://{request.url.netloc}"


def unauthorized(message: str) -> JSONResponse:
    """A 401 in the API's error shape, telling the client how to authenticate."""
    return JSONResponse({"error": message}, status_code=401, headers={"WWW-Authenticate": "Bearer"})


def token_matches(given: str, token: bytes) -> bool:
    """Whether ``given`` is the token, in constant time: how long a refusal takes says nothing
    about how much of it matched."""
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), token)


def local_path(target: str | None) -> str:
    """``target`` when it is a path on this server (``/runs/x?y``), else ``/runs``: a login
    never sends the browser to another site (``//host``, ``/\\host``, ``https://host``)."""
    if (
        not target
        or not target.startswith("/")
        or target.startswith("//")
        or "\\" in target
        or any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in target)
    ):
        return "/runs"
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or parts.path.startswith("/login"):
        return "/runs"
    return target


def _to_login(request: Request) -> RedirectResponse:
    asked = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse("/login?next=" + quote(local_path(asked), safe=""), status_code=303)


class BearerToken(BaseHTTPMiddleware):
    """Every request must carry ``Authorization: Bearer <token>``, or, to read (GET, HEAD)
    and to post labels from this server's own pages (``Origin``), the cookie of a session the
    login page started; a page asked for without either opens
    the login page. A client past its free wrong tries waits (429) before its next is checked.
    The token is never echoed: not in a response, not in an error."""

    def __init__(self, app: ASGIApp, token: str, sessions: Sessions, throttle: Throttle) -> None:
        super().__init__(app)
        self._token = token.encode("utf-8", "surrogateescape")
        self._sessions = sessions
        self._throttle = throttle

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        path = request.url.path
        if path in _OPEN or path.startswith("/static/"):  # the login form and its files
            return await call_next(request)
        header = request.headers.get("authorization")
        if header is None:
            # the cookie reads, and writes only labels from this server's own pages: an
            # upload needs the header (no cross-site POST can ride on a browser's cookie,
            # SameSite or not; a label's Origin must be this server)
            session = request.cookies.get(COOKIE)
            if request.method in _READ and self._sessions.valid(session):
                request.state.session = session  # the page shows its sign-out button
                return await call_next(request)
            if (
                request.method == "POST"
                and path in SESSION_WRITES
                and request.headers.get("origin") is not None  # a browser's own page says so
                and same_origin(request)
                and self._sessions.valid(session)
            ):
                return await call_next(request)
            if request.method in _READ and is_page(path):
                return _to_login(request)
            return unauthorized("this server needs a token: send Authorization: Bearer <token>")
        scheme, _, given = header.partition(" ")
        if scheme.lower() != "bearer" or not given.strip():
            return unauthorized("expected the header Authorization: Bearer <token>")
        client = client_of(request)
        if wait := self._throttle.wait(client):
            return too_many(wait)
        if not token_matches(given.strip(), self._token):
            self._throttle.failed(client)
            return unauthorized("wrong token")
        self._throttle.succeeded(client)
        return await call_next(request)


class SecurityHeaders:
    """``X-Content-Type-Options: nosniff`` on every answer (a browser never reads the JSON
    that carries an agent's text as HTML) and, on every HTML answer, the Content-Security-
    Policy (no inline script or style, nothing from another site, no framing) and a
    Referrer-Policy that keeps a page's address (case ids) on this server."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return

        async def send_with_header(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.append("X-Content-Type-Options", "nosniff")
                if headers.get("content-type", "").startswith("text/html"):
                    headers.append("Content-Security-Policy", CSP)
                    headers.append("Referrer-Policy", "same-origin")
            await send(message)

        await self._app(scope, receive, send_with_header)
