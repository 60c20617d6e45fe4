"""The log formats by name, each in its own module, imported only when used."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any

from ..errors import InputError
from ._base import Format

_FORMATS: dict[str, str] = {}
"""Format name -> ``module:factory`` (the module relative to this package)."""


def register(name: str, target: str) -> None:
    """Name a format: ``register("otel", "._otel:OtelFormat")``; the module loads on first use."""
    _FORMATS[name] = target


def format_names() -> tuple[str, ...]:
    """The registered formats, in the order they were registered."""
    return tuple(_FORMATS)


def format_factory(name: str) -> Callable[..., Format]:
    """The class (or factory) of the format called ``name``, imported on first use.

    Raises:
        InputError: no such format.
    """
    target = _FORMATS.get(name)
    if target is None:
        raise InputError(
            f"unknown log format {name!r}; expected one of {', '.join(_FORMATS)}",
            field="format",
        )
    module, _, attr = target.partition(":")
    factory: Callable[..., Format] = getattr(import_module(module, __package__), attr)
    return factory


def get_format(name: str, **options: Any) -> Format:
    """The format called ``name``, built with ``options`` (e.g. a field mapping).

    Raises:
        InputError: no such format.
    """
    return format_factory(name)(**options)


# the formats, by name (each module is imported on first use)
register("openai", "._openai:OpenAIFormat")
register("openai-responses", "._responses:ResponsesFormat")
register("anthropic", "._anthropic:AnthropicFormat")
register("otel", "._otel:OtelFormat")
register("mapping", "._mapping:MappingFormat")
