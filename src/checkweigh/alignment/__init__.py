"""Judge alignment at the edge: human labels from CSV or JSONL, and the report on a console or
as JSON. The figures themselves are computed by the pure core (:func:`checkweigh.core.align`)."""

import typing as _typing

from .. import _lazy

if _typing.TYPE_CHECKING:
    from ._labels import LabelFileError, load_labels
    from ._report import alignment_document, render_alignment, write_alignment_json
else:  # the names load when first read: see checkweigh._lazy
    __getattr__, __dir__ = _lazy.exports(
        __name__,
        {
            "LabelFileError": "._labels",
            "load_labels": "._labels",
            "alignment_document": "._report",
            "render_alignment": "._report",
            "write_alignment_json": "._report",
        },
    )

__all__ = [
    "LabelFileError",
    "alignment_document",
    "load_labels",
    "render_alignment",
    "write_alignment_json",
]
