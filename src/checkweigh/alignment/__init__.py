"""Judge alignment at the edge: human labels from CSV or JSONL, and the report on a console or
as JSON. The figures themselves are computed by the pure core (:func:`checkweigh.core.align`)."""

import typing as _typing

from .. import _lazy

if _typing.TYPE_CHECKING:
    from ._labels import LabelFileError as LabelFileError
    from ._labels import LabelLine as LabelLine
    from ._labels import load_label_file as load_label_file
    from ._labels import load_labels as load_labels
    from ._report import alignment_document as alignment_document
    from ._report import render_alignment as render_alignment
    from ._report import write_alignment_json as write_alignment_json
    from ._roles import check_grades as check_grades
    from ._roles import check_roles as check_roles
    from ._roles import refuse_grades as refuse_grades
    from ._stored import EXPORT_COLUMNS as EXPORT_COLUMNS
    from ._stored import export_rows as export_rows
    from ._stored import export_text as export_text
    from ._stored import labels_of_file as labels_of_file
    from ._stored import stored_pairs as stored_pairs
else:  # the names load when first read: see checkweigh._lazy
    __getattr__, __dir__ = _lazy.exports(__name__)
