"""``checkweigh run`` on recorded airline conversations with whole-conversation checks."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from checkweigh.cli import app
from support.airline_suite import write_airline_suite

runner = CliRunner()


def test_a_suite_of_conversation_checks_scores_recorded_runs(tmp_path: Path) -> None:
    suite = write_airline_suite(tmp_path / "airline")
    out_json = tmp_path / "results.json"
    db = f"sqlite:///{tmp_path / 'r.db'}"
    result = runner.invoke(app, ["run", str(suite), "--db", db, "--json", str(out_json), "-q"])
    # TCR = (1.0 + 0.6 + 0.2 / 0.9) / 3 (the stalled run's n/a check leaves the denominator):
    # the tcr gate passes, the default case gates do not
    assert result.exit_code == 1, result.stdout
    assert "TCR 0.607" in result.stdout
    verdicts = {
        r["case_id"]: {name: (v["state"], v["reason"]) for name, v in r["verdicts"].items()}
        for r in json.loads(out_json.read_text())["results"]
    }
    replies = "trace[kind=assistant].content"
    assert verdicts["airline-cancel-014"] == {
        "facts_in_replies": ("passed", f"all 2 values found in 4 texts at {replies}"),
        "cancelled": ("passed", "trace[7].name == 'cancel_reservation'"),
        "no_card_number": ("passed", f"none of ['4421'] in 4 texts at {replies}"),
        "replies_short": ("passed", f"all 4 values at {replies} pass"),
    }
    assert verdicts["airline-cancel-015"]["facts_in_replies"] == (
        "failed",
        f"['1234'] not in any of 4 texts at {replies}",
    )
    stalled = verdicts["airline-cancel-016"]
    assert stalled["facts_in_replies"] == (
        "failed",
        f"['5-7 business days'] not in any of 2 texts at {replies}",
    )
    assert stalled["cancelled"] == (
        "failed",
        "none of 2 values at trace[kind=tool_call, error=null].name passes; first: "
        "trace[3].name is 'get_user_details', expected 'cancel_reservation'",
    )
    # the when guard on a many-valued path: no cancel call, so not applicable
    assert stalled["replies_short"] == (
        "not_applicable",
        "not trace[kind=tool_call].name == 'cancel_reservation'",
    )
