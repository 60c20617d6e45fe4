"""Who may ask (a bearer token compared in constant time) and how answers are marked."""

from __future__ import annotations

import hmac

from starlette.datastructures import MutableHeaders
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send


def unauthorized(message: str) -> JSONResponse:
    """A 401 in the API's error shape, telling the client how to authenticate."""
    return JSONResponse({"error": message}, status_code=401, headers={"WWW-Authenticate": "Bearer"})


class BearerToken(BaseHTTPMiddleware):
    """Every request must carry ``Authorization: Bearer <token>``. The token is never echoed:
    not in a response, not in an error."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        super().__init__(app)
        self._token = token.encode()

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        header = request.headers.get("authorization")
        if header is None:
            return unauthorized("this server needs a token: send Authorization: Bearer <token>")
        scheme, _, given = header.partition(" ")
        if scheme.lower() != "bearer" or not given.strip():
            return unauthorized("expected the header Authorization: Bearer <token>")
        # constant time: how long a refusal takes says nothing about how much of it matched
        if not hmac.compare_digest(given.strip().encode(), self._token):
            return unauthorized("wrong token")
        return await call_next(request)


class NoSniff:
    """``X-Content-Type-Options: nosniff`` on every answer: a browser never reads the JSON that
    carries an agent's text (case ids, reasons) as HTML."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return

        async def send_with_header(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message).append("X-Content-Type-Options", "nosniff")
            await send(message)

        await self._app(scope, receive, send_with_header)
