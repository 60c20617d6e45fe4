"""The command-line interface: one module per command group, all on one typer app."""

from . import (
    _app,  # noqa: F401  (registers run, runs, show)
    _compare,  # noqa: F401  (registers compare)
    _import,  # noqa: F401  (registers import)
    _plugins,  # noqa: F401  (registers plugins)
    _serve,  # noqa: F401  (registers serve)
    _stability,  # noqa: F401  (registers stability)
)
from ._align import align_command as _align_command  # noqa: F401  (registers align)
from ._app import main
from ._common import app
from ._schema import schema_command as _schema_command  # noqa: F401  (registers schema)

__all__ = ["app", "main"]
