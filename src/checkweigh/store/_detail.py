"""One stored execution in full: its verdicts and scores, the case that was evaluated and the
judge exchanges behind its verdicts, for the case page and ``GET .../results/{case}``."""

from __future__ import annotations

from typing import NamedTuple

from pydantic import ValidationError
from sqlalchemy import select

from ..core import Case, CaseResult, JudgeExchange, ResultRecord
from ..errors import StoreError
from ._pages import result_row, rubric_checks
from ._rows import ALL_REPEATS
from ._store import RunInfo, Store, _db_errors
from ._tables import CaseBodyRow


class ResultDetail(NamedTuple):
    """An execution with what a reader needs beside its verdicts."""

    result: CaseResult
    """Its verdicts and rubric scores."""
    case: Case | None
    """The case as it was evaluated (input, trace, final state, ground truth, metadata);
    None for runs stored without it (uploaded results, results older than revision 0003)."""
    exchanges: tuple[JudgeExchange, ...]
    """Every judge call made for it, in the order made (empty without judge checks)."""


def result_detail(store: Store, run: RunInfo, case_id: str, repeat: int) -> ResultDetail | None:
    """``case_id``'s execution number ``repeat`` in ``run`` in full; None when not stored.

    Raises:
        StoreError: the database cannot be read, or holds a case that is not one.
    """
    with _db_errors(f"read {store.safe_url}"), store.engine.connect() as conn:
        row = result_row(conn, store, run, case_id, repeat)
        if row is None:
            return None
        record, idx, exchanges = row.record, row.idx, row.exchanges
        # its own execution's case (an agent ran it), else the one all repeats evaluated
        bodies = (
            select(CaseBodyRow.body)
            .where(
                CaseBodyRow.run_id == run.id,
                CaseBodyRow.idx == idx,
                CaseBodyRow.repeat.in_((repeat, ALL_REPEATS)),
            )
            .order_by(CaseBodyRow.repeat.desc())
            .limit(1)
        )
        body = conn.execute(bodies).scalar_one_or_none()
    result = ResultRecord.read(record).result(rubric_checks(run))
    try:
        case = None if body is None else Case.model_validate_json(body)
        asked = tuple(JudgeExchange.model_validate(e) for e in exchanges or ())
    except ValidationError as exc:
        raise StoreError(
            f"the stored case {case_id!r} of run {run.id} cannot be read: {exc.errors()[0]['msg']}"
        ) from None
    return ResultDetail(result, case, asked)
