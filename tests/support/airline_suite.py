"""A suite over recorded airline conversations using many-valued paths, written into a folder
for CLI tests."""

from __future__ import annotations

import json
from pathlib import Path

from support.airline_traces import cancel_run

SUITE = """\
name: airline
cases: cases.jsonl
checks:
  facts_in_replies:
    type: contains
    path: trace[kind=assistant].content
    values_path: ground_truth.outputs
    mode: all
    within: any
    normalize: [thousands_separators, whitespace]
  cancelled:
    type: equals
    path: trace[kind=tool_call, error=null].name
    value: cancel_reservation
  no_card_number:
    type: contains
    path: trace[kind=assistant].content
    values: ["4421"]
    mode: none
    within: any
  replies_short:
    type: word_count
    path: trace[kind=assistant].content
    max: 40
    match: all
    when: {path: "trace[kind=tool_call].name", equals: cancel_reservation}
rubrics:
  task:
    weights:
      facts_in_replies: 0.4
      cancelled: 0.3
      no_card_number: 0.2
      replies_short: 0.1
gates:
  - {rubric: task, metric: tcr, min: 0.5}
"""


def write_airline_suite(folder: Path, suite: str = SUITE) -> Path:
    """The suite and three recorded runs: the reference run (passes every check), one whose
    second reply drops the refund amount, and one that never cancels."""
    folder.mkdir(parents=True, exist_ok=True)
    good = cancel_run()
    forgot = cancel_run(id="airline-cancel-015")
    forgot["trace"][5]["content"] = "Reservation NO6JO3 qualifies for a full refund. Cancel it?"
    stalled = cancel_run(id="airline-cancel-016")
    stalled["trace"] = stalled["trace"][:6]
    lines = [json.dumps(run) for run in (good, forgot, stalled)]
    (folder / "cases.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    path = folder / "suite.yaml"
    path.write_text(suite, encoding="utf-8")
    return path
