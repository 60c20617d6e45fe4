"""The app factory: one FastAPI app over one store."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable

from fastapi import FastAPI
from fastapi.responses import RedirectResponse

from ..errors import InputError
from ..live import LiveScorer, OpenSummaries
from ..service import ComparisonMemo
from ..store import Store
from . import _docs, _errors
from ._analysis import router as analysis_router
from ._auth import BearerToken, SecurityHeaders
from ._case_index import IndexCache
from ._deps import DecidedRows
from ._guards import MAX_UPLOAD, BodyLimit, HostCheck
from ._host import MIN_TOKEN, AllowedHosts
from ._labels import router as labels_router
from ._monitors import router as monitors_router
from ._otlp import OTLP_LIMIT
from ._otlp import router as otlp_router
from ._results import router as results_router
from ._runs import router as runs_router
from ._sessions import Clock, Sessions, Throttle
from ._ui_analysis import router as ui_analysis_router
from ._ui_case import router as ui_case_router
from ._ui_case_compare import router as ui_case_compare_router
from ._ui_label import router as ui_label_router
from ._ui_login import router as ui_login_router
from ._ui_monitors import router as ui_monitors_router
from ._ui_runs import router as ui_runs_router


def create_app(
    store: Store,
    *,
    token: str | None = None,
    warm: bool = False,
    allowed_hosts: Iterable[str] | None = None,
    max_upload: int = MAX_UPLOAD,
    otlp_limit: int = OTLP_LIMIT,
    scorer: LiveScorer | None = None,
    clock: Clock = time.monotonic,
    wall_clock: Clock = time.time,
) -> FastAPI:
    """The server's app over ``store``.

    Args:
        store: the results store it reads (and ``POST /api/runs`` writes).
        token: with it, every request needs ``Authorization: Bearer <token>`` (or, to read,
            the cookie of a session the login page starts); without it,
            uploads are refused (403) and everything else is open, labels too (for
            loopback only: the ``serve`` command refuses other hosts without a token). At
            least 16 characters.
        warm: prepare the cases tables of the newest finished runs in the background now, and
            of the runs a runs-list page shows when it is shown (``serve`` does; a test that
            closes the store right after its requests does not want threads reading it).
        allowed_hosts: with it, a request is answered only when its ``Host`` is a loopback
            name or one of these (421 otherwise: no DNS rebinding); ``serve`` always gives it.
            None answers any ``Host`` (an app mounted behind something that checks it).
        max_upload: the largest request body read, in bytes (413 past it).
        otlp_limit: the largest OTLP body once decompressed, in bytes (413 past it).
        scorer: the live scorer beside the server (its monitors shown by the API and pages);
            None: received traces wait in the store for a server that scores them.
        clock: the time sessions expire and wrong tokens are slowed by.
        wall_clock: the time received spans are stamped with (seconds since the epoch).

    Set ``app.state.stopping`` (a :class:`threading.Event`) when the server begins to stop:
    stability simulations in flight then end at their next batch.

    Raises:
        InputError: the token is shorter than 16 characters.
    """
    if token is not None and len(token.strip()) < MIN_TOKEN:
        raise InputError(f"expected a token of at least {MIN_TOKEN} characters", field="token")
    app = FastAPI(
        title="checkweigh",
        summary="Runs, case results, comparisons and stability of a checkweigh store.",
        docs_url=None,  # our own page, its assets served here (see _docs)
        openapi_url="/openapi.json",
        redoc_url=None,
    )
    app.state.store = store
    # set when the server begins to stop: long work in flight (see _off_loop) ends at its next
    # step instead of holding the shutdown until it finishes
    app.state.stopping = threading.Event()
    app.state.token_set = token is not None
    # for the login page's check (never shown anywhere)
    app.state.token = None if token is None else token.encode("utf-8", "surrogateescape")
    app.state.case_indexes = IndexCache()
    app.state.comparisons = ComparisonMemo()
    app.state.decided_rows = DecidedRows()
    app.state.warm_indexes = warm
    app.state.otlp_limit = otlp_limit
    app.state.scorer = scorer
    app.state.wall_clock = wall_clock
    # a busy open window's figures read all its results: made at most every few seconds
    app.state.window_summaries = OpenSummaries(clock=clock)
    app.state.warming = (
        app.state.case_indexes.warm(store, store.list_runs(limit=4)) if warm else None
    )
    _errors.install(app)
    _docs.install(app)
    app.state.sessions = Sessions(clock)
    app.state.throttle = Throttle(clock)
    # the last added is the outermost: a body is read only once its sender is known
    app.add_middleware(BodyLimit, limit=max_upload)
    if token is not None:
        app.add_middleware(
            BearerToken,
            token=token,
            sessions=app.state.sessions,
            throttle=app.state.throttle,
        )
    if allowed_hosts is not None:
        app.add_middleware(HostCheck, allowed=AllowedHosts(allowed_hosts))
    # added last, so outermost: refusals carry the headers too
    app.add_middleware(SecurityHeaders)
    # the analysis routes first: /api/runs/compare must not be read as the run "compare"
    app.include_router(analysis_router, prefix="/api")
    app.include_router(labels_router, prefix="/api")
    app.include_router(runs_router, prefix="/api")
    app.include_router(results_router, prefix="/api")
    app.include_router(monitors_router, prefix="/api")
    # OTLP/HTTP's own paths, where an exporter given the server's address sends
    app.include_router(otlp_router)
    # the pages: server-rendered HTML over the same store and service calls
    app.include_router(ui_login_router)
    app.include_router(ui_analysis_router)
    app.include_router(ui_case_router)
    app.include_router(ui_case_compare_router)
    app.include_router(ui_label_router)
    app.include_router(ui_runs_router)
    app.include_router(ui_monitors_router)

    @app.get("/", include_in_schema=False)
    def home() -> RedirectResponse:
        return RedirectResponse("/runs", status_code=307)

    return app
