"""The command-line interface: one module per command group, all on one typer app."""

import typing as _typing

from .. import _lazy
from . import (
    _app,  # noqa: F401  (registers run, runs, show)
    _compare,  # noqa: F401  (registers compare)
    _import,  # noqa: F401  (registers import)
    _labels,  # noqa: F401  (registers labels import|export)
    _plugins,  # noqa: F401  (registers plugins)
    _serve,  # noqa: F401  (registers serve)
    _stability,  # noqa: F401  (registers stability)
)
from ._align import align_command as _align_command  # noqa: F401  (registers align)
from ._app import main as main
from ._common import app as app
from ._schema import schema_command as _schema_command  # noqa: F401  (registers schema)

if not _typing.TYPE_CHECKING:  # __all__ is read from the imports above: see checkweigh._lazy
    __getattr__, __dir__ = _lazy.exports(__name__)
