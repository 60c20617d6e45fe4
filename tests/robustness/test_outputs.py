"""Robustness of the outputs: hostile text from the data stays inert in every output, and every
output counts the same errored executions and paired cases.

Each row of a catalogue is a realistic fault and the exact outcome expected through the real
CLI: the exit code, what is printed or written, and never a traceback.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from checkweigh.cli import app
from checkweigh.testing import Reply, fake_llm_server
from support.recorded_suite import make_case, write_suite

runner = CliRunner()


def _cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args), env={"COLUMNS": "200", **(env or {})})
    return result.exit_code, result.stdout, result.stderr


# --- errored expected-outcome checks count as errored executions in every output ---------------

OUTCOMES_SUITE = """\
  outcomes:
    type: expected_outcomes
rubrics:
"""
ERRORED_GATE = "gates:\n  - {metric: errored_executions, max: 0}\n"


def _outcome_suite(tmp_path: Path) -> Path:
    """Three cases; only ``needs-judge`` has an expected outcome, judged by the run's judge.
    The thresholds are lenient so that only the errored_executions gate can fail the run."""
    judged = make_case("needs-judge", participants=["Alice", "Bob"], time="10:00")
    judged["ground_truth"]["expected_outcomes"] = ["A meeting is booked at 10:00."]
    cases = [
        make_case("ok-1", participants=["Alice", "Bob"], time="10:00"),
        judged,
        make_case("ok-2", participants=["Bob", "Alice"], time="10:00"),
    ]
    suite = write_suite(
        tmp_path / "s",
        cases,
        thresholds={"metrics_pass_threshold": 0.0, "cases_pass_threshold": 0.0},
    )
    text = suite.read_text().replace("rubrics:\n", OUTCOMES_SUITE, 1)
    suite.write_text(text[: text.index("gates:")] + ERRORED_GATE)
    return suite


@pytest.mark.parametrize(
    ("fault", "flags", "why"),
    [
        # the judge answers junk to the statement and to the repair request
        ("invalid judge answer", [], "invalid judge answer after one repair"),
        # --replay with a cold cache: the statement's call is a replay miss
        ("replay miss", ["--replay"], "no cached answer for this call"),
    ],
)
def test_an_errored_expected_outcome_is_an_errored_execution_everywhere(
    tmp_path: Path, fault: str, flags: list[str], why: str
) -> None:
    suite = _outcome_suite(tmp_path)
    db = f"sqlite:///{tmp_path / 'r.db'}"
    files = {ext: tmp_path / "out" / f"report.{ext}" for ext in ("json", "xml", "md")}
    with fake_llm_server([], default=Reply("I think so, yes.")) as server:
        env = {
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "sk-test",
            "CHECKWEIGH_CACHE_DIR": str(tmp_path / "cache"),
        }
        code, out, err = _cli(
            "run",
            str(suite),
            "--db",
            db,
            "-q",
            "--judge",
            "openai:gpt-test",
            *flags,
            "--json",
            str(files["json"]),
            "--junit",
            str(files["xml"]),
            "--markdown",
            str(files["md"]),
            env=env,
        )
    assert code == 1, fault + out + err
    assert "Traceback" not in out + err
    assert "3 execution(s) of 3 case(s); 1 errored" in out
    assert "cases 2 passed, 0 failed, 1 errored of 3" in out
    assert re.search(r"gate FAIL  errored_executions.*\(actual 1\)", out), out
    assert "errored needs-judge#0: errored: outcomes: " in out
    assert why in out
    assert "gates FAILED" in out

    report = json.loads(files["json"].read_text())
    assert report["summary"]["errored_executions"] == 1
    assert report["summary"]["case_gates"]["errored"] == 1
    assert report["run"]["gates_passed"] is False
    states = {r["case_id"]: r["case"]["state"] for r in report["results"]}
    assert states == {"ok-1": "passed", "needs-judge": "errored", "ok-2": "passed"}

    cases = ET.parse(files["xml"]).getroot().find("testsuite")
    assert cases is not None
    assert (cases.get("tests"), cases.get("errors"), cases.get("failures")) == ("3", "1", "0")

    markdown = files["md"].read_text()
    assert markdown.startswith("## checkweigh: bookings ❌ failed")
    assert "3 execution(s) of 3 case(s), 1 errored." in markdown

    # the stored summary says the same to everyone who reads it later
    code, shown, _ = _cli("show", "latest", "--db", db)
    assert code == 1
    assert "3 execution(s) of 3 case(s); 1 errored" in shown
