"""Who may ask: a bearer token compared in constant time; loopback needs none."""

from __future__ import annotations

import hmac

from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp


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
