"""``checkweigh serve``: the HTTP server (API) over the results store.

FastAPI and uvicorn are imported only here, when the command runs: ``checkweigh --help`` and
the other commands never load them.
"""

from __future__ import annotations

import os
import re
import socket
from types import FrameType
from typing import Annotated

import typer

from ..errors import InputError, StoreError
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
) -> None:
    """Serve the store's runs, results and comparisons over HTTP (a JSON API).

    The OpenAPI document is at /openapi.json and its docs page at /docs.
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
        from ..store import Store

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
    served = create_app(
        store,
        token=token,
        warm=True,
        allowed_hosts=hosts,
        max_upload=max_upload * 1024 * 1024,
    )
    config = uvicorn.Config(served, log_level="warning", access_log=False, lifespan="off")

    class Server(uvicorn.Server):
        """uvicorn's server, which also tells the app's long work to stop on a signal: uvicorn
        waits for the requests in flight before it exits."""

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            served.state.stopping.set()
            super().handle_exit(sig, frame)

    Server(config).run(sockets=[sock])


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
