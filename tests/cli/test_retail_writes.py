"""tau-bench's retail rule in YAML, scored through ``checkweigh run``: exchanges name their
items in any order (``unordered``), and an order's corrected modification counts once, as the
agent last sent it (``dedupe``)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from checkweigh.cli import app
from support.retail_cases import (
    KEYBOARD,
    NEW_KEYBOARD,
    NEW_LAMP,
    NEW_THERMOSTAT,
    THERMOSTAT,
    exchange_case,
    modify_case,
)

SUITE = """\
name: retail-writes
cases: cases.jsonl
checks:
  expected_writes:
    type: trajectory_match
    reference_path: ground_truth.actions
    mode: unordered
    select:
      name: [exchange_delivered_order_items, modify_pending_order_items]
      error: false
    unordered: [item_ids, new_item_ids]
    dedupe: {key: arguments.order_id, keep: last}
rubrics:
  reward:
    weights:
      expected_writes: 1
thresholds:
  pass_threshold: 100
  metrics_pass_threshold: 50
  cases_pass_threshold: 50
"""


def test_retail_writes_in_any_order_and_corrected_calls(tmp_path: Path) -> None:
    cases = [
        exchange_case("in-order", [KEYBOARD, THERMOSTAT], [NEW_KEYBOARD, NEW_THERMOSTAT]),
        exchange_case("swapped", [THERMOSTAT, KEYBOARD], [NEW_THERMOSTAT, NEW_KEYBOARD]),
        # the lamp's new variant where the thermostat's belongs: a wrong exchange
        exchange_case("wrong-item", [THERMOSTAT, KEYBOARD], [NEW_LAMP, NEW_KEYBOARD]),
        modify_case("modified", corrected=False),
        modify_case("corrected", corrected=True),
    ]
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (tmp_path / "suite.yaml").write_text(SUITE)
    out_json = tmp_path / "r.json"
    db = f"sqlite:///{tmp_path / 'r.db'}"
    args = ["run", str(tmp_path / "suite.yaml"), "--db", db, "--json", str(out_json), "-q"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.stderr
    data = json.loads(out_json.read_text())
    verdicts = {r["case_id"]: r["verdicts"]["expected_writes"] for r in data["results"]}
    assert {k: v["state"] for k, v in verdicts.items()} == {
        "in-order": "passed",
        "swapped": "passed",
        "wrong-item": "failed",
        "modified": "passed",
        "corrected": "passed",
    }
    assert (
        f"differs at new_item_ids[1]: '{NEW_LAMP}' vs expected '{NEW_THERMOSTAT}'"
        in (verdicts["wrong-item"]["reason"])
    )
    assert data["summary"]["unheld_paths"] == []  # every path the check reads was held
