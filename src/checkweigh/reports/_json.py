"""The JSON report: the run's summary and every result, streamed to a file."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from ..core import CaseResult, RunSummary


def write_json_report(
    path: Path,
    *,
    run: dict[str, Any],
    summary: RunSummary,
    results: Iterable[CaseResult],
) -> int:
    """Write ``{"run": ..., "summary": ..., "results": [...]}``; return how many results."""
    count = 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        fh.write('{"run": ')
        json.dump(run, fh, default=str)
        fh.write(', "summary": ')
        fh.write(summary.model_dump_json())
        fh.write(', "results": [')
        for r in results:
            if count:
                fh.write(",\n")
            fh.write(orjson.dumps(r.to_record()).decode())
            count += 1
        fh.write("]}\n")
    return count
