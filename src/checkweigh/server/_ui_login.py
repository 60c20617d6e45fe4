"""``/login``: the form that asks for the server's token once and keeps it in a cookie
(HttpOnly: no script reads it; SameSite=Strict: no other site's page sends it)."""

from __future__ import annotations

from urllib.parse import parse_qs

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ._auth import COOKIE, local_path, token_matches
from ._html import render

router = APIRouter(include_in_schema=False)
_MAX_FORM = 16_384  # a token and a path: anything longer is not this form


@router.get("/login")
def login_form(request: Request, next: str | None = None) -> Response:
    """The token form; ``next`` is where to go once signed in (a path on this server)."""
    if not request.app.state.token_set:
        return RedirectResponse(local_path(next), status_code=303)
    return render(request, "login.html", next=local_path(next), error=None)


@router.post("/login")
async def login(request: Request) -> Response:
    """Check the token; right, set the cookie and go on; wrong, the form again with 401."""
    body = await request.body()
    fields = parse_qs(body[:_MAX_FORM].decode("utf-8", "replace"), keep_blank_values=True)
    target = local_path(fields["next"][0] if fields.get("next") else None)
    token: bytes | None = request.app.state.token
    if token is None:
        return RedirectResponse(target, status_code=303)
    given = (fields.get("token") or [""])[0].strip()
    if not given or not token_matches(given, token):
        error = "enter the server's token" if not given else "wrong token"
        return render(request, "login.html", 401, next=target, error=error)
    answer = RedirectResponse(target, status_code=303)
    answer.set_cookie(
        COOKIE,
        given,
        httponly=True,
        samesite="strict",
        path="/",
        secure=request.url.scheme == "https",  # over plain http a Secure cookie never returns
    )
    return answer
