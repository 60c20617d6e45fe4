"""``checkweigh serve``: the HTTP server (API) over the results store.

FastAPI and uvicorn are imported only here, when the command runs: ``checkweigh --help`` and
the other commands never load them.
"""

from __future__ import annotations

import os
import socket
from types import FrameType
from typing import Annotated

import typer

from ..errors import InputError, StoreError
from ..server import TOKEN_ENV, is_loopback
from ._common import EXIT_INPUT, DbOption, app, consoles, fail_input, labelled


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
) -> None:
    """Serve the store's runs, results and comparisons over HTTP (a JSON API).

    The OpenAPI document is at /openapi.json and its docs page at /docs.
    """
    _, err = consoles()
    token = os.environ.get(TOKEN_ENV) or None
    try:
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
    served = create_app(store, token=token, warm=True)
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
