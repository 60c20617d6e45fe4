"""The command-line interface."""

from ._app import app, main

__all__ = ["app", "main"]
