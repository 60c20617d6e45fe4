"""A page of a run's results read by the database: counted and cut there, so a page of a
10,000-case run decodes its own rows only."""

from __future__ import annotations

from typing import NamedTuple

from sqlalchemy import func, select

from ..core import CaseResult
from ._store import RunInfo, Store, _db_errors
from ._tables import ResultRow


class ResultPage(NamedTuple):
    """One page of a run's results in input order, and how many match in all."""

    total: int
    results: list[CaseResult]


def page_results(
    store: Store, run: RunInfo, *, errored: bool | None = None, limit: int = 50, offset: int = 0
) -> ResultPage:
    """``limit`` results of ``run`` from ``offset``, in input order (case, then repeat), only
    errored (or only not errored) ones when ``errored`` says so."""
    where = [ResultRow.run_id == run.id]
    if errored is not None:
        where.append(ResultRow.errored.is_(errored))
    count = select(func.count()).select_from(ResultRow).where(*where)
    # the page's row ids first (sorted on two integer columns), then only their records: the
    # sort never carries the other rows' records
    ids = (
        select(ResultRow.id)
        .where(*where)
        .order_by(ResultRow.idx, ResultRow.repeat)
        .limit(limit)
        .offset(offset)
        .scalar_subquery()
    )
    rows = (
        select(ResultRow.record)
        .where(ResultRow.id.in_(ids))
        .order_by(ResultRow.idx, ResultRow.repeat)
    )
    rubric_checks = {r["name"]: list(r["weights"]) for r in run.config.get("rubrics", [])}
    with _db_errors(f"read {store.safe_url}"), store.engine.connect() as conn:
        total = int(conn.execute(count).scalar_one())
        results = [CaseResult.from_record(rec, rubric_checks) for (rec,) in conn.execute(rows)]
    return ResultPage(total, results)
