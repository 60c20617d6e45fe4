"""Judge alignment at the edge: human labels from CSV or JSONL, and the report on a console or
as JSON. The figures themselves are computed by the pure core (:func:`checkweigh.core.align`)."""

from ._labels import LabelFileError, load_labels
from ._report import alignment_document, render_alignment, write_alignment_json

__all__ = [
    "LabelFileError",
    "alignment_document",
    "load_labels",
    "render_alignment",
    "write_alignment_json",
]
