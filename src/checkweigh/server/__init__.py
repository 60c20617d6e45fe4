"""The HTTP server: a FastAPI app over a results store, with a JSON API under ``/api``.

FastAPI is an optional dependency (``pip install 'checkweigh[server]'``): it is imported only
when :func:`create_app` is first used, so the CLI starts (and checks its flags) without it.
"""

from __future__ import annotations

import typing as _typing

from ._host import MIN_TOKEN, TOKEN_ENV, is_loopback

if _typing.TYPE_CHECKING:
    from ._app import create_app

__all__ = ["MIN_TOKEN", "TOKEN_ENV", "create_app", "is_loopback"]


def __getattr__(name: str) -> object:
    """``create_app``, imported (with FastAPI) on first use."""
    if name == "create_app":
        from ._app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
