"""Importers: agent logs in the formats agents already write, turned into cases.

One module per format behind a small registry (:func:`get_format`); nothing in the engine
knows a format. Each format yields :class:`~checkweigh.core.Case` objects from a file;
:func:`import_cases` reads several files with one tally (:class:`ImportContext`), and
:func:`import_lines` gives them as the lines of a cases file (``checkweigh import``).
"""

import typing as _typing

from .. import _lazy

if _typing.TYPE_CHECKING:
    from ._base import BadRecord as BadRecord
    from ._base import Format as Format
    from ._base import ImportContext as ImportContext
    from ._base import OnBadRecord as OnBadRecord
    from ._base import import_cases as import_cases
    from ._base import import_lines as import_lines
    from ._base import iter_records as iter_records
    from ._convert import RecordError as RecordError
    from ._convert import RecordFormat as RecordFormat
    from ._formats import BUILTIN_FORMATS as BUILTIN_FORMATS
    from ._mapping import FieldMapping as FieldMapping
    from ._otlp_split import SplitRequest as SplitRequest
    from ._otlp_split import TraceChunk as TraceChunk
    from ._otlp_split import TraceItems as TraceItems
    from ._otlp_split import split_request as split_request
    from ._otlp_split import trace_case as trace_case
    from ._otlp_split import trace_items as trace_items
    from ._registry import FORMATS as FORMATS
    from ._registry import format_factory as format_factory
    from ._registry import format_names as format_names
    from ._registry import get_format as get_format
    from ._reply import Reply as Reply
    from ._reply import ReplyError as ReplyError
    from ._reply import ReplyFormat as ReplyFormat
    from ._reply import missing_text as missing_text
else:  # the names load when first read: see checkweigh._lazy
    __getattr__, __dir__ = _lazy.exports(__name__)
