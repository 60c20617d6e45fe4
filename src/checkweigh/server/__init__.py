"""The HTTP server: a FastAPI app over a results store, with a JSON API under ``/api``.

FastAPI is an optional dependency (``pip install 'checkweigh[server]'``): it is imported only
when :func:`create_app` is first used, so the CLI starts (and checks its flags) without it.
"""

from __future__ import annotations

import typing as _typing

from .. import _lazy

if _typing.TYPE_CHECKING:
    from ._app import create_app as create_app
    from ._host import MIN_TOKEN as MIN_TOKEN
    from ._host import TOKEN_ENV as TOKEN_ENV
    from ._host import is_loopback as is_loopback
else:  # the names load when first read (create_app with FastAPI): see checkweigh._lazy
    __getattr__, __dir__ = _lazy.exports(__name__)
