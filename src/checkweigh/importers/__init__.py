"""Importers: agent logs in the formats agents already write, turned into cases.

One module per format behind one registry (:data:`FORMATS`: the built-ins' table, then other
packages' entry points in the group ``checkweigh.formats``); nothing in the engine knows a
format. A format that has ``read_reply`` also reads an HTTP or command agent's reply.
Each format yields :class:`~checkweigh.core.Case` objects from a file;
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
    from ._convert import RecordError, RecordFormat
    from ._formats import BUILTIN_FORMATS
    from ._mapping import FieldMapping
    from ._registry import FORMATS, format_factory, format_names, get_format
    from ._reply import Reply, ReplyError, ReplyFormat, missing_text
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
            "RecordError": "._convert",
            "RecordFormat": "._convert",
            "BUILTIN_FORMATS": "._formats",
            "FieldMapping": "._mapping",
            "FORMATS": "._registry",
            "format_factory": "._registry",
            "format_names": "._registry",
            "get_format": "._registry",
            "Reply": "._reply",
            "ReplyError": "._reply",
            "ReplyFormat": "._reply",
            "missing_text": "._reply",
        },
    )

__all__ = [
    "BUILTIN_FORMATS",
    "FORMATS",
    "RecordError",
    "RecordFormat",
    "Reply",
    "ReplyError",
    "ReplyFormat",
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
    "missing_text",
]
