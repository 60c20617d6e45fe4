"""One stored execution in full: its verdicts and scores, the case that was evaluated and the
judge exchanges behind its verdicts, for the case page and ``GET .../results/{case}``."""

from __future__ import annotations

from typing import NamedTuple

from ..core import Case, CaseResult, JudgeExchange
from ._pages import find_result
from ._store import RunInfo, Store


class ResultDetail(NamedTuple):
    """An execution with what a reader needs beside its verdicts."""

    result: CaseResult
    """Its verdicts and rubric scores."""
    case: Case | None
    """The case as it was evaluated (input, trace, final state, ground truth, metadata);
    None for runs stored without it (uploaded results, databases older than revision 0003)."""
    exchanges: tuple[JudgeExchange, ...]
    """Every judge call made for it, in the order made (empty without judge checks)."""


def result_detail(store: Store, run: RunInfo, case_id: str, repeat: int) -> ResultDetail | None:
    """``case_id``'s execution number ``repeat`` in ``run`` in full; None when not stored."""
    result = find_result(store, run, case_id, repeat)
    if result is None:
        return None
    return ResultDetail(result, None, ())
