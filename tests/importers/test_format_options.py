"""A format's own settings from the suite (``cases: {format: otel, options: {...}}``), checked
when the suite loads: a wrong name or value is one line naming ``cases.options``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from checkweigh.cli import app

FIXTURE = Path(__file__).parent / "fixtures" / "otel_airline.jsonl"
runner = CliRunner()

SUITE = """\
name: airline-otel
cases:
  path: spans.jsonl
  format: otel
  options: {options}
checks:
  answered:
    type: word_count
    path: output
    min: 5
rubrics:
  support:
    weights: {{answered: 1.0}}
"""


def _suite(tmp_path: Path, options: str) -> Path:
    shutil.copy(FIXTURE, tmp_path / "spans.jsonl")
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE.format(options=options), encoding="utf-8")
    return suite


def test_the_case_id_can_come_from_the_conversation_id(tmp_path: Path) -> None:
    suite = _suite(tmp_path, "{case_id_attribute: gen_ai.conversation.id}")
    out = tmp_path / "run.json"
    result = runner.invoke(
        app, ["run", str(suite), "--db", f"sqlite:///{tmp_path / 'r.db'}", "--json", str(out)]
    )
    assert result.exit_code in (0, 1), result.output
    ids = [r["case_id"] for r in json.loads(out.read_text())["results"]]
    assert "conv_5501" in ids
    assert "cancel-ZFA04Y-basic-economy" not in ids


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            "{case_id: x}",
            "suite.yaml:5: cases.options: format otel has no option 'case_id'; it takes: "
            "case_id_attribute, flush_after_lines",
        ),
        (
            "{flush_after_lines: 0}",
            "suite.yaml:5: cases.options: flush_after_lines: expected a whole number >= 1, got 0",
        ),
        (
            "{flush_after_lines: many}",
            "suite.yaml:5: cases.options: flush_after_lines: expected a whole number >= 1, "
            "got 'many'",
        ),
        (
            "{case_id_attribute: ''}",
            "suite.yaml:5: cases.options: case_id_attribute: expected an attribute name, got ''",
        ),
    ],
)
def test_a_wrong_option_is_one_line_before_anything_runs(
    tmp_path: Path, options: str, message: str
) -> None:
    suite = _suite(tmp_path, options)
    result = runner.invoke(app, ["run", str(suite), "--db", f"sqlite:///{tmp_path / 'r.db'}"])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].endswith(message), lines[0]
    assert not (tmp_path / "r.db").exists()
