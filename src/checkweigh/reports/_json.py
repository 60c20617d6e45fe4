"""The JSON report: the run's summary and every result, streamed to a file."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from ..core import CaseResult, CaseState, PassPolicy, RepeatTally, ResultRecord, RunSummary
from ._files import replaced_at
from ._safe import json_inert


def write_json_report(
    path: Path,
    *,
    run: dict[str, Any],
    summary: RunSummary,
    results: Iterable[CaseResult],
    policy: PassPolicy | None = None,
    cases: bool = False,
) -> int:
    """Write ``{"run": ..., "summary": ..., "results": [...]}``; return how many results.

    With ``policy`` and a case tried more than once, ``"tasks": [...]`` follows the results:
    each case's tries, passes, and pass@k and pass^k for every k up to its tries.

    The data is exact; control and bidi characters in it are written as ``\\u`` escapes.

    With ``policy`` (the run's snapshotted thresholds), each result also carries its case
    verdict: ``"case": {"state", "score_pct", "reason"}``. With ``cases``, each result whose
    case was stored carries it too, as ``"evaluated_case"`` (from ``Store.iter_results(...,
    with_cases=True)``): a server the file is uploaded to then shows its conversation.
    """
    count = 0
    tally = RepeatTally() if policy is not None else None
    with replaced_at(path) as part, part.open("w", encoding="utf-8") as fh:
        fh.write('{"run": ')
        fh.write(json_inert(json.dumps(run, default=str)))
        fh.write(', "summary": ')
        fh.write(json_inert(summary.model_dump_json()))
        fh.write(', "results": [')
        for r in results:
            if count:
                fh.write(",\n")
            added: dict[str, Any] = {}
            if policy is not None:
                v = policy.decide(r)
                added["case"] = {"state": v.state, "score_pct": v.score_pct, "reason": v.reason}
                if tally is not None:
                    tally.add(r.case_id, v.state is CaseState.PASSED)
            if cases and r.body is not None:
                added["evaluated_case"] = orjson.Fragment(r.body)  # stored JSON, as it is
            # the stored record, as the store writes it, with the additions after its fields
            item = ResultRecord.of(r).to_json()
            if added:
                item = item[:-1] + b"," + orjson.dumps(added)[1:]
            fh.write(json_inert(item.decode()))
            count += 1
        fh.write("]")
        if tally is not None and tally.summary() is not None:  # some case was tried twice
            tasks = [t.model_dump(mode="json") for t in tally.tasks()]
            fh.write(', "tasks": ')
            fh.write(json_inert(orjson.dumps(tasks).decode()))
        fh.write("}\n")
    return count
