"""``/login`` and ``/logout``: the form that asks for the server's token once and starts a
session, and the button that ends it. The browser keeps only the session's random id, in a
cookie (HttpOnly: no script reads it; SameSite=Strict: no other site's page sends it)."""

from __future__ import annotations

import math
from urllib.parse import parse_qs

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ._auth import COOKIE, client_of, local_path, same_origin, token_matches
from ._errors import error_answer
from ._html import render
from ._sessions import Sessions, Throttle

router = APIRouter(include_in_schema=False)
_MAX_FORM = 16_384  # a token and a path: anything longer is not this form
_FORM = "application/x-www-form-urlencoded"
_OTHER_SITE = "a sign-in or sign-out must come from this server's own page"


def _refused(request: Request) -> Response | None:
    """403 for a post from another site's page, 415 for one that is not this page's form."""
    if not same_origin(request):
        return error_answer(request, 403, _OTHER_SITE)
    kind = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if kind != _FORM:
        return error_answer(request, 415, f"body: expected a form ({_FORM})")
    return None


@router.get("/login")
def login_form(request: Request, next: str | None = None) -> Response:
    """The token form; ``next`` is where to go once signed in (a path on this server)."""
    if not request.app.state.token_set:
        return RedirectResponse(local_path(next), status_code=303)
    return render(request, "login.html", next=local_path(next), error=None)


@router.post("/login")
async def login(request: Request) -> Response:
    """Check the token; right, start a session and go on; wrong, the form again with 401."""
    if refused := _refused(request):
        return refused
    body = await request.body()
    fields = parse_qs(body[:_MAX_FORM].decode("utf-8", "replace"), keep_blank_values=True)
    target = local_path(fields["next"][0] if fields.get("next") else None)
    token: bytes | None = request.app.state.token
    if token is None:
        return RedirectResponse(target, status_code=303)
    throttle: Throttle = request.app.state.throttle
    client = client_of(request)
    if wait := throttle.wait(client):
        seconds = max(1, math.ceil(wait))
        error = f"too many wrong tokens: try again in {seconds} s"
        page = render(request, "login.html", 429, next=target, error=error)
        page.headers["Retry-After"] = str(seconds)
        return page
    given = (fields.get("token") or [""])[0].strip()
    if not given or not token_matches(given, token):
        if given:
            throttle.failed(client)
        error = "enter the server's token" if not given else "wrong token"
        return render(request, "login.html", 401, next=target, error=error)
    throttle.succeeded(client)
    sessions: Sessions = request.app.state.sessions
    answer = RedirectResponse(target, status_code=303)
    answer.set_cookie(
        COOKIE,
        sessions.start(),
        httponly=True,
        samesite="strict",
        path="/",
        secure=request.url.scheme == "https",  # over plain http a Secure cookie never returns
    )
    return answer


@router.post("/logout")
async def logout(request: Request) -> Response:
    """End this browser's session and forget its cookie; then the login form (or, on a
    server without a token, the runs)."""
    if refused := _refused(request):
        return refused
    sessions: Sessions = request.app.state.sessions
    sessions.end(request.cookies.get(COOKIE))
    target = "/login" if request.app.state.token_set else "/runs"
    answer = RedirectResponse(target, status_code=303)
    answer.delete_cookie(
        COOKIE, path="/", httponly=True, samesite="strict", secure=request.url.scheme == "https"
    )
    return answer
