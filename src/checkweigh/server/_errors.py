"""Errors with the status that says what was wrong: JSON ``{"error": "..."}`` from the API,
an HTML page with the same one line from a page.

An answer names what was wrong, never repeats what was sent: no body, no long value (a
request can be megabytes), and never the database's text (its URL, a file path, SQL).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..errors import CheckweighError, InputError, StoreError
from ..store import RunExists
from ._html import error_page, is_page

_log = logging.getLogger("checkweigh.server")
_SHOWN = 100  # the longest value an answer quotes: an id, a check name, not a payload
_LONGEST = 1000  # the longest message: what is wrong fits in it, a quoted payload does not


class ApiError(CheckweighError):
    """An answer other than success: its HTTP status and one line on what was wrong."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def quoted(value: str) -> str:
    """``value`` quoted for a message when it is short, else only how long it is."""
    if len(value) <= _SHOWN:
        return repr(value)
    return f"<{len(value):,} characters>"


def not_found(what: str) -> ApiError:
    """404 naming what is not there."""
    return ApiError(404, what)


def bad_parameter(name: str, message: str) -> ApiError:
    """422 naming the parameter and what was expected."""
    return ApiError(422, f"{name}: {message}")


def from_input_error(exc: InputError) -> ApiError:
    """An input error of the store or the service: unknown runs are 404, the rest 422."""
    if isinstance(exc, RunExists):
        return ApiError(409, exc.one_line())
    if exc.message.startswith("no run "):
        ref = exc.message.split(" in ", 1)[0]  # not the database's URL: that is the server's
        return ApiError(404, f"{exc.field}: {ref}" if exc.field not in (None, "RUN") else ref)
    if exc.field == "RUN":  # the CLI's argument: here the run is in the path
        return ApiError(422, exc.message)
    return ApiError(422, exc.one_line())


def _where(loc: tuple[Any, ...]) -> str:
    """``query parameter limit``, ``body results[2].case_id``..."""
    kind, *rest = loc or ("request",)
    path = ""
    for part in rest:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return (
        f"{kind} parameter {path}"
        if kind in ("query", "path", "header")
        else (f"{kind}.{path}" if path and not path.startswith("[") else f"{kind}{path}")
    )


def error_answer(
    request: Request, status: int, message: str, headers: Mapping[str, str] | None = None
) -> Response:
    """The error as a page for a page, as JSON for the API."""
    if len(message) > _LONGEST:  # a message that long quotes a payload: never all of it
        message = message[:_LONGEST] + " …"
    if is_page(request.url.path):
        return error_page(request, status, message, headers)
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def _validation(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    first = exc.errors()[0]
    if first.get("type") == "json_invalid":
        reason = first.get("ctx", {}).get("error", "invalid JSON")
        return error_answer(request, 422, f"body: expected JSON: {reason}")
    # pydantic's own answer quotes the value (``input``): the message names only what is expected
    message = f"{_where(tuple(first.get('loc', ())))}: {first.get('msg', 'invalid')}"
    if len(exc.errors()) > 1:
        message += f" (and {len(exc.errors()) - 1} more)"
    return error_answer(request, 422, message)


def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return error_answer(request, exc.status, exc.message)


def _http(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message = str(exc.detail)
    if exc.status_code == 404:
        what = "page" if is_page(request.url.path) else "endpoint"
        message = f"no such {what}: {request.method} {_path(request)}"
    elif exc.status_code == 405:
        message = f"{request.method} is not allowed on {_path(request)} (read-only)"
    return error_answer(request, exc.status_code, message, exc.headers)


def _path(request: Request) -> str:
    path = request.url.path
    return path if len(path) <= _SHOWN else f"a path {quoted(path)}"


def _store(request: Request, exc: Exception) -> Response:
    # the store's message names its database (a file, a host) and quotes SQL: the log has it
    _log.error("%s %s: %s", request.method, request.url.path[:_SHOWN], exc)
    message = "the results store could not answer; the server's log says why"
    return error_answer(request, 503, message)


def _internal(request: Request, exc: Exception) -> Response:
    return error_answer(request, 500, "the server failed on this request; its log says why")


def install(app: FastAPI) -> None:
    """Answer every error of ``app``: as JSON from the API, as a page from a page."""
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(HTTPException, _http)
    app.add_exception_handler(StoreError, _store)
    # anything else: still this answer's shape, and nothing of the exception in it
    app.add_exception_handler(Exception, _internal)
