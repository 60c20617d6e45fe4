"""Importers: agent logs in the formats agents already write, turned into cases.

One module per format behind a small registry (:func:`get_format`); nothing in the engine
knows a format. Each format yields :class:`~checkweigh.core.Case` objects from a file;
:func:`import_cases` reads several files with one tally (:class:`ImportContext`), and
:func:`import_lines` gives them as the lines of a cases file (``checkweigh import``).
"""

import typing as _typing

from .. import _lazy

if _typing.TYPE_CHECKING:
    from ._base import (
        BadRecord,
        Format,
        ImportContext,
        OnBadRecord,
        import_cases,
        import_lines,
        iter_records,
    )
    from ._mapping import FieldMapping
    from ._registry import format_factory, format_names, get_format, register
else:  # the names load when first read: see checkweigh._lazy
    __getattr__, __dir__ = _lazy.exports(
        __name__,
        {
            "BadRecord": "._base",
            "Format": "._base",
            "ImportContext": "._base",
            "OnBadRecord": "._base",
            "import_cases": "._base",
            "import_lines": "._base",
            "iter_records": "._base",
            "FieldMapping": "._mapping",
            "format_factory": "._registry",
            "format_names": "._registry",
            "get_format": "._registry",
            "register": "._registry",
        },
    )

__all__ = [
    "BadRecord",
    "FieldMapping",
    "Format",
    "ImportContext",
    "OnBadRecord",
    "format_factory",
    "format_names",
    "get_format",
    "import_cases",
    "import_lines",
    "iter_records",
    "register",
]
