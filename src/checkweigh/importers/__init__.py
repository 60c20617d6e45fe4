"""Importers: agent logs in the formats agents already write, turned into cases.

One module per format behind a small registry (:func:`get_format`); nothing in the engine
knows a format. Each format yields :class:`~checkweigh.core.Case` objects from a file.
"""

from ._base import BadRecord, Format, ImportContext, OnBadRecord, iter_records
from ._registry import format_names, get_format, register

__all__ = [
    "BadRecord",
    "Format",
    "ImportContext",
    "OnBadRecord",
    "format_names",
    "get_format",
    "iter_records",
    "register",
]
