"""The pages' rendering: one Jinja2 environment with autoescape on for every template, the
filters the templates format numbers and links with, and the Content-Security-Policy every
HTML answer carries.

Everything a page shows from a run (case ids, check names, reasons, agent and judge text,
tool arguments) is data: autoescaped in the text, percent-encoded in a link's path and query.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from starlette.requests import Request
from starlette.responses import HTMLResponse

from ..reports import case_url

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)
"""The policy of every HTML answer: only this server's scripts and styles, no inline ones."""

_TEMPLATES = Path(__file__).parent / "templates"
_NOT_PAGES = ("/api/", "/static/")


def is_page(path: str) -> bool:
    """Whether ``path`` is a page (HTML for a browser) rather than the API or a file."""
    return not path.startswith(_NOT_PAGES) and path not in ("/api", "/openapi.json")


def _pct(value: float | None, digits: int = 1) -> str:
    """A share (0-1) as a percentage."""
    return "—" if value is None else f"{100 * value:.{digits}f}%"


def _num(value: float | None, fmt: str = ".1f") -> str:
    return (
        "—"
        if value is None or (isinstance(value, float) and math.isnan(value))
        else (format(value, fmt))
    )


def _p(value: float | None) -> str:
    if value is None:
        return "—"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def _when(value: datetime | None) -> str:
    return "—" if value is None else value.strftime("%Y-%m-%d %H:%M:%S UTC")


def _ms(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value / 1000:,.2f} s" if value >= 10_000 else f"{value:,.0f} ms"


def _json(value: Any) -> str:
    """``value`` as indented JSON for a ``<pre>`` (escaped by the template like any text)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _case_link(run_id: str, case_id: str, repeat: int = 0) -> str:
    """The case page: both ids percent-encoded (a ``/``, ``?`` or ``#`` stays in the id)."""
    return f"{case_url('', run_id, case_id)}?repeat={repeat}"


def _case_compare_link(base: str, candidate: str, case_id: str, repeat: int = 0) -> str:
    """The page of one case in two runs side by side (the case id percent-encoded)."""
    query = urlencode({"base": base, "candidate": candidate, "repeat": repeat})
    return f"/compare/cases/{quote(case_id, safe='')}?{query}"


def _run_link(run_id: str) -> str:
    return "/runs/" + quote(run_id, safe="")


def _query(path: str, params: Mapping[str, Any], **changes: Any) -> str:
    """``path`` with ``params`` (updated by ``changes``; empty values left out) as its query."""
    merged = {**params, **changes}
    pairs = [(k, str(v)) for k, v in merged.items() if v not in (None, "")]
    return f"{path}?{urlencode(pairs)}" if pairs else path


def _environment() -> Environment:
    # autoescape=True, not select_autoescape: every template escapes, whatever its name
    env = Environment(
        loader=FileSystemLoader(_TEMPLATES),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(pct=_pct, num=_num, p=_p, when=_when, ms=_ms, json=_json)
    env.globals.update(
        case_link=_case_link,
        case_compare_link=_case_compare_link,
        run_link=_run_link,
        query=_query,
    )
    return env


ENV = _environment()


def render(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    """The page ``template`` filled with ``context``."""
    # the header's sign-out button: on a page opened with a session (see _auth)
    signed_in = bool(request.scope.get("state", {}).get("session"))
    html = ENV.get_template(template).render(request=request, signed_in=signed_in, **context)
    return HTMLResponse(html, status_code=status)


def error_page(
    request: Request, status: int, message: str, headers: Mapping[str, str] | None = None
) -> HTMLResponse:
    """The error page: its status and one line on what was wrong."""
    titles = {
        401: "Not signed in",
        403: "Refused",
        404: "Not found",
        413: "Too large",
        415: "Unsupported content type",
        421: "Wrong host name",
        422: "Bad parameter",
        429: "Too many tries",
    }
    title = titles.get(status, "Error")
    page = render(request, "error.html", status, title=title, message=message, code=status)
    page.headers.update(headers or {})
    return page
