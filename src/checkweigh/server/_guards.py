"""What every request passes before any route sees it: a ``Host`` this server answers to
(no DNS rebinding) and a body no larger than the upload limit (read at most that far)."""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ._errors import error_answer
from ._host import AllowedHosts

MAX_UPLOAD = 64 * 1024 * 1024
"""The largest request body the server reads, in bytes, unless told otherwise (64 MiB: a run
of some 20,000 cases with their verdicts, without their traces)."""


class HostCheck:
    """421 for a request whose ``Host`` is not a name this server answers to."""

    def __init__(self, app: ASGIApp, allowed: AllowedHosts) -> None:
        self._app = app
        self._allowed = allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._allowed.allows(Headers(scope=scope).get("host")):
            # the name is not echoed: it is the other site's, and says nothing to a reader
            message = (
                "this server does not answer to that host name: open it as 127.0.0.1 or "
                "localhost, or start it with --allowed-host NAME"
            )
            await error_answer(Request(scope), 421, message)(scope, receive, send)
            return
        await self._app(scope, receive, send)


class BodyLimit:
    """413 for a body over ``limit`` bytes: by its ``Content-Length`` before reading any of
    it, else (a chunked body) as soon as what arrived passes the limit. What is read is held
    and handed on whole, so a route never reads more than the limit."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self._app = app
        self._limit = limit

    def _too_large(self, scope: Scope) -> ASGIApp:
        mib = self._limit / (1024 * 1024)
        size = f"{mib:g} MiB" if mib >= 1 else f"{self._limit} bytes"
        return error_answer(
            Request(scope), 413, f"body: larger than this server's limit of {size} (--max-upload)"
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self._app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self._limit:
            await self._too_large(scope)(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunk: bytes = message.get("body", b"")
            size += len(chunk)
            if size > self._limit:
                await self._too_large(scope)(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        del chunks
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if delivered:
                return await receive()  # after the body: a disconnect, when it comes
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self._app(scope, replay, send)
