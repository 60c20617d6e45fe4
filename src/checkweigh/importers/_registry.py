"""The log formats by name: one :class:`~checkweigh.plugins.Registry`, built-ins first, then
other packages' entry points (group ``checkweigh.formats``), each imported on first use."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..plugins import Registry
from ._base import Format
from ._formats import BUILTIN_FORMATS


def _format_class(value: object) -> Callable[..., Any]:
    if not callable(value):
        raise TypeError("expected a format class (or a factory of one)")
    if isinstance(value, type) and not callable(getattr(value, "cases", None)):
        raise TypeError("expected a format class with a cases(path, ctx) method")
    return value


FORMATS: Registry[Callable[..., Any]] = Registry(
    "formats",
    BUILTIN_FORMATS,
    package="checkweigh.importers",
    label="log format",
    accept=_format_class,
)
"""The log formats, by name: each a class (or factory) built with the format's options,
whose instances read files (:class:`~checkweigh.importers.Format`) and, when they have
``read_reply``, an agent's reply (:class:`~checkweigh.importers.ReplyFormat`)."""


def format_names() -> tuple[str, ...]:
    """Every format's name: the built-ins, then the installed plugins'."""
    return FORMATS.names()


def format_factory(name: str) -> Callable[..., Any]:
    """The class (or factory) of the format called ``name``, imported on first use.

    Raises:
        InputError: no such format (naming every known one).
        PluginError: a plugin's format that does not load.
    """
    return FORMATS.get(name, field="format")


def get_format(name: str, **options: Any) -> Format:
    """The format called ``name``, built with ``options`` (e.g. a field mapping).

    Raises:
        InputError: no such format.
    """
    made: Format = format_factory(name)(**options)
    return made
