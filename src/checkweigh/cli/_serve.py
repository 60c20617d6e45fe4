"""``checkweigh serve``: the HTTP server (API) over the results store.

FastAPI and uvicorn are imported only here, when the command runs: ``checkweigh --help`` and
the other commands never load them.
"""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer

from ..errors import InputError, StoreError
from ..reports import clean
from ..server import MIN_TOKEN, TOKEN_ENV, is_loopback
from ._common import EXIT_INPUT, DbOption, app, consoles, fail_input, labelled

MAX_UPLOAD_MIB = 64
"""The default of ``--max-upload``: 64 MiB, a run of some 20,000 cases without their traces."""
# a DNS name or an address, IPv6 in brackets or not: what a browser puts in Host, minus port
_HOST_NAME = re.compile(r"\[?[A-Za-z0-9._:-]{1,253}\]?")


@app.command()
def serve(
    db: DbOption = None,
    host: Annotated[
        str,
        typer.Option(
            "--host", help=f"Address to listen on; anything but loopback needs ${TOKEN_ENV}."
        ),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port to listen on.")] = (
        8000
    ),
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-host",
            metavar="NAME",
            help="A host name browsers reach the server by, besides loopback names and --host "
            "(repeatable); requests naming any other host are refused (421).",
        ),
    ] = None,
    max_upload: Annotated[
        int,
        typer.Option(
            "--max-upload",
            metavar="MIB",
            min=1,
            max=4096,
            help="The largest request body (an uploaded run) read, in MiB; larger is a 413.",
        ),
    ] = MAX_UPLOAD_MIB,
    monitor: Annotated[
        list[Path] | None,
        typer.Option(
            "--monitor",
            metavar="FILE",
            help="A monitor file (YAML): score the traces received on /v1/traces with its "
            "suite, per time window (repeatable).",
        ),
    ] = None,
    quiet_window: Annotated[
        float,
        typer.Option(
            "--quiet-window",
            metavar="SECONDS",
            min=0.1,
            max=3600,
            help="A trace whose root span came is complete once no span came for this long.",
        ),
    ] = 5.0,
    max_trace_age: Annotated[
        float,
        typer.Option(
            "--max-trace-age",
            metavar="SECONDS",
            min=1,
            max=86400,
            help="A trace is scored this long after its first span, root span or not.",
        ),
    ] = 300.0,
    lease: Annotated[
        float,
        typer.Option(
            "--lease",
            metavar="SECONDS",
            min=1,
            max=3600,
            help="How long a process's claim on a trace holds unrenewed: over one database, "
            "a process that dies leaves its traces to the others after this.",
        ),
    ] = 60.0,
    retention: Annotated[
        float,
        typer.Option(
            "--retention",
            metavar="DAYS",
            min=0.001,
            max=36500,
            help="Received spans (and closed windows' case bodies) older than this are "
            "removed; windows keep their results and summaries.",
        ),
    ] = 30.0,
    max_otlp: Annotated[
        int,
        typer.Option(
            "--max-otlp",
            metavar="MIB",
            min=1,
            max=4096,
            help="The largest OTLP request once decompressed, in MiB; larger is a 413.",
        ),
    ] = 32,
) -> None:
    """Serve the store's runs, results and comparisons over HTTP (a JSON API and pages),
    and receive OpenTelemetry traces on /v1/traces and /v1/logs (OTLP/HTTP).

    With --monitor, each complete trace becomes a case scored by the monitors whose filter it
    passes; their results are stored per time window. The OpenAPI document is at
    /openapi.json and its docs page at /docs.
    """
    _, err = consoles()
    token = os.environ.get(TOKEN_ENV) or None
    try:
        if token is not None and len(token.strip()) < MIN_TOKEN:
            # the token itself is never printed, nor how long it is
            raise InputError(
                f"expected a token of at least {MIN_TOKEN} characters (python -c 'import "
                "secrets; print(secrets.token_urlsafe(32))' makes one)",
                field=TOKEN_ENV,
            )
        hosts = [host, *(allowed_host or ())]
        if bad := [h for h in hosts[1:] if not _HOST_NAME.fullmatch(h)]:
            raise InputError(
                f"expected a host name or address (no scheme, path or port), got {bad[0]!r}",
                field="--allowed-host",
            )
        if token is None and not is_loopback(host):
            raise InputError(
                f"listening on {host} needs a token: set {TOKEN_ENV} (clients then send "
                "Authorization: Bearer <token>), or listen on 127.0.0.1",
                field="--host",
            )
        try:
            import uvicorn

            from ..server import create_app
        except ImportError as exc:
            raise InputError(
                f"checkweigh serve needs the server extra ({exc.name} is not installed): "
                "pip install 'checkweigh[server]'"
            ) from None
        from ..live import LiveScorer, LiveSettings, load_monitor
        from ..store import Store

        monitors = [load_monitor(path) for path in monitor or ()]
        if len({m.name for m in monitors}) != len(monitors):
            names = [m.name for m in monitors]
            twice = next(n for n in names if names.count(n) > 1)
            raise InputError(
                f"two monitors are named {twice!r}; names must differ", field="--monitor"
            )
        store = Store(db)
        sock = _bind(host, port)
    except InputError as exc:
        fail_input(err, exc)
    except StoreError as exc:
        err.print(labelled("error:", str(exc)), soft_wrap=True)
        raise typer.Exit(EXIT_INPUT) from None
    where = sock.getsockname()
    err.print(
        f"serving {store.safe_url} on http://{host}:{where[1]} "
        f"({'token required' if token else 'no token: loopback only, uploads refused'})",
        soft_wrap=True,
        markup=False,
        highlight=False,
    )
    if host in ("0.0.0.0", "::") and not allowed_host:
        err.print(
            labelled(
                "warning:",
                f"--host {host} answers only requests for this machine's loopback names; "
                "give the names clients use with --allowed-host NAME",
            ),
            soft_wrap=True,
        )
    otlp = f"http://{host}:{where[1]}"
    err.print(
        f"OTLP/HTTP: point exporters at {otlp} (OTEL_EXPORTER_OTLP_ENDPOINT), with "
        "OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20<token>"
        if token
        else "OTLP/HTTP: traces are refused without a token (set CHECKWEIGH_TOKEN to receive them)",
        soft_wrap=True,
        markup=False,
        highlight=False,
    )
    settings = LiveSettings(
        quiet_s=quiet_window,
        max_age_s=max_trace_age,
        lease_s=lease,
        retention_s=retention * 86400,
    )

    def note(line: str) -> None:  # error text may quote a trace: shown inert
        err.print(clean(line), soft_wrap=True, markup=False, highlight=False)

    scorer = LiveScorer(store, monitors, settings, on_note=note)
    served = create_app(
        store,
        token=token,
        warm=True,
        allowed_hosts=hosts,
        max_upload=max_upload * 1024 * 1024,
        otlp_limit=max_otlp * 1024 * 1024,
        scorer=scorer,
    )
    for m in monitors:
        err.print(
            f"monitor {m.name}: suite {m.suite.name}, windows of {m.spec.window}, judge "
            f"{m.judge.name if m.judge is not None else 'none'}",
            soft_wrap=True,
            markup=False,
            highlight=False,
        )
    config = uvicorn.Config(served, log_level="warning", access_log=False, lifespan="off")

    class Server(uvicorn.Server):
        """uvicorn's server, which also tells the app's long work to stop on a signal: uvicorn
        waits for the requests in flight before it exits."""

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            served.state.stopping.set()
            super().handle_exit(sig, frame)

    from ..live import ScorerThread

    thread = ScorerThread(scorer)
    thread.start()
    try:
        Server(config).run(sockets=[sock])
    finally:
        thread.stop()


def _bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound here so that a taken port or an unknown address is one
    line and exit 2 (uvicorn would log it and exit 1, which means a failed gate)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise InputError(f"cannot listen on {host!r}: {exc.strerror}", field="--host") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise InputError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}", field="--port"
        ) from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock
