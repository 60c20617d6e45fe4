"""A report output: one CSV row per case execution.

``checkweigh run suite.yaml --output csv=results.csv`` writes::

    case_id,repeat,state,score_pct
    b1,0,passed,100.0
"""

from __future__ import annotations

import csv
from pathlib import Path

from checkweigh.service import StoredReport


class CsvOutput:
    """Each execution's case id, repeat, state (passed, failed or errored) and score."""

    name = "csv"
    help = "one CSV row per case execution: case id, repeat, state, score"
    flag = None

    def write(self, report: StoredReport, path: Path) -> str:
        """Write the rows and say how many."""
        rows = 0
        with path.open("w", newline="", encoding="utf-8") as f:
            out = csv.writer(f)
            out.writerow(["case_id", "repeat", "state", "score_pct"])
            for result in report.results(with_cases=False):
                verdict = report.policy.decide(result)
                score = "" if verdict.score_pct is None else f"{verdict.score_pct:.1f}"
                out.writerow([result.case_id, result.repeat, verdict.state.value, score])
                rows += 1
        return f"wrote {rows} row(s) to {path}"
