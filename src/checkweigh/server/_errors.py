"""Errors with the status that says what was wrong: JSON ``{"error": "..."}`` from the API,
an HTML page with the same one line from a page."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..errors import InputError, StoreError
from ..store import RunExists
from ._html import error_page, is_page


class ApiError(Exception):
    """An answer other than success: its HTTP status and one line on what was wrong."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


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


def _answer(
    request: Request, status: int, message: str, headers: Mapping[str, str] | None = None
) -> Response:
    """The error as a page for a page, as JSON for the API."""
    if is_page(request.url.path):
        return error_page(request, status, message)
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def _validation(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    first = exc.errors()[0]
    if first.get("type") == "json_invalid":
        reason = first.get("ctx", {}).get("error", "invalid JSON")
        return _answer(request, 422, f"body: expected JSON: {reason}")
    got = f" (got {first['input']!r})" if "input" in first and first["type"] != "missing" else ""
    message = f"{_where(tuple(first.get('loc', ())))}: {first.get('msg', 'invalid')}{got}"
    if len(exc.errors()) > 1:
        message += f" (and {len(exc.errors()) - 1} more)"
    return _answer(request, 422, message)


def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return _answer(request, exc.status, exc.message)


def _http(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message = str(exc.detail)
    if exc.status_code == 404:
        what = "page" if is_page(request.url.path) else "endpoint"
        message = f"no such {what}: {request.method} {request.url.path}"
    elif exc.status_code == 405:
        message = f"{request.method} is not allowed on {request.url.path} (read-only)"
    return _answer(request, exc.status_code, message, exc.headers)


def _store(request: Request, exc: Exception) -> Response:
    return _answer(request, 503, str(exc))


def install(app: FastAPI) -> None:
    """Answer every error of ``app``: as JSON from the API, as a page from a page."""
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(HTTPException, _http)
    app.add_exception_handler(StoreError, _store)
