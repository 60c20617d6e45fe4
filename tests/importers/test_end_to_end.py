"""Logs imported with ``checkweigh import`` (or read by a suite directly) and scored with
``checkweigh run`` using built-in checks only."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from checkweigh.cli import app
from checkweigh.store import Store
from checkweigh.suites import load_suite
from checkweigh.testing import SuiteTester, assert_case_passes
from support.importing import FIXTURES

runner = CliRunner()


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Notes naming long temporary paths are asserted on unwrapped lines."""
    monkeypatch.setenv("COLUMNS", "1000")


AIRLINE_SUITE = """\
name: airline
cases: CASES
checks:
  looked_up_reservation:
    type: tool_called
    step: get_reservation_details
  changed_or_cancelled:
    type: tool_called
    step: {name: cancel_reservation, arguments: {reservation_id: ZFA04Y}}
  success:
    type: equals
    path: final_state.success
    value: true
  reached_user:
    type: equals
    path: metadata.domain
    value: airline
rubrics:
  airline:
    weights:
      looked_up_reservation: 1
      changed_or_cancelled: 1
      success: 2
      reached_user: 1
thresholds: {metrics_pass_threshold: 0, cases_pass_threshold: 0}
gates:
  - {rubric: airline, metric: tcr, min: 0.1}
"""


def _cli(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def _results(report: Path) -> dict[str, dict[str, Any]]:
    data = json.loads(report.read_text())
    return {r["case_id"]: r for r in data["results"]}


def _verdicts(result: dict[str, Any]) -> dict[str, str]:
    return {name: v["state"] for name, v in result["verdicts"].items()}


def test_openai_logs_imported_then_scored(tmp_path: Path) -> None:
    out = tmp_path / "cases.jsonl"
    code, stdout, stderr = _cli(
        "import", "openai", str(FIXTURES / "openai_airline.jsonl"), "--out", str(out)
    )
    assert (code, stderr) == (0, "")
    assert stdout == f"read 3 record(s) from 1 file(s); wrote 3 case(s) to {out}\n"
    suite = tmp_path / "suite.yaml"
    suite.write_text(AIRLINE_SUITE.replace("CASES", "cases.jsonl"))
    report = tmp_path / "r.json"
    code, stdout, _ = _cli(
        "run", str(suite), "--db", f"sqlite:///{tmp_path / 'r.db'}", "--json", str(report), "-q"
    )
    assert code == 0, stdout
    results = _results(report)
    assert {k: _verdicts(v) for k, v in results.items()} == {
        "airline-cancel-ZFA04Y": {
            "looked_up_reservation": "passed",
            "changed_or_cancelled": "passed",
            "success": "passed",
            "reached_user": "passed",
        },
        "airline-change-NO6JO3": {
            "looked_up_reservation": "passed",
            "changed_or_cancelled": "failed",
            "success": "passed",
            "reached_user": "passed",
        },
        "airline-baggage-parallel": {
            "looked_up_reservation": "passed",
            "changed_or_cancelled": "failed",
            "success": "failed",
            "reached_user": "passed",
        },
    }
    assert results["airline-cancel-ZFA04Y"]["verdicts"]["changed_or_cancelled"]["reason"] == (
        "cancel_reservation(reservation_id='ZFA04Y') at step 8"
    )


RESPONSES_SUITE = """\
name: shop
cases: {path: LOGS, format: openai-responses}
checks:
  looked_up:
    type: tool_called
    step: lookup_order
  refunded_in_full:
    type: tool_called
    step: {name: issue_refund, arguments: {amount: 64.5}}
  reasoned:
    type: count
    step: {kind: event, name: reasoning}
    min: 1
  told_tracking:
    type: contains
    path: output
    values: [1Z999AA10123456784]
rubrics:
  shop:
    weights: {looked_up: 1, refunded_in_full: 1, reasoned: 1, told_tracking: 1}
thresholds: {metrics_pass_threshold: 0, cases_pass_threshold: 0}
gates:
  - {rubric: shop, metric: tcr, min: 0.1}
"""


def test_a_suite_reads_responses_logs_directly(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "responses_shop.jsonl", tmp_path / "logs.jsonl")
    suite = tmp_path / "suite.yaml"
    suite.write_text(RESPONSES_SUITE.replace("LOGS", "logs.jsonl"))
    report = tmp_path / "r.json"
    db = tmp_path / "r.db"
    code, stdout, _ = _cli(
        "run", str(suite), "--db", f"sqlite:///{db}", "--json", str(report), "-q"
    )
    assert code == 0, stdout
    results = _results(report)
    assert {k: _verdicts(v) for k, v in results.items()} == {
        "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b": {
            "looked_up": "passed",
            "refunded_in_full": "failed",
            "reasoned": "passed",
            "told_tracking": "passed",
        },
        "logs-2": {
            "looked_up": "passed",
            "refunded_in_full": "passed",
            "reasoned": "passed",
            "told_tracking": "failed",
        },
    }
    (run,) = Store(f"sqlite:///{db}").list_runs()
    config = Store(f"sqlite:///{db}").get_run(run.id).config
    assert config["cases_format"] == "openai-responses"
    assert config["on_bad_record"] == "fail"


ANTHROPIC_SUITE = """\
name: helpdesk
cases: {path: logs.jsonl, format: anthropic, on_bad_record: skip}
checks:
  unlocked:
    type: tool_called
    step: {name: unlock_account, arguments: {ticket_id: T-90817}}
  ticket_category:
    type: equals
    path: trace[7].arguments.category
    expected_path: ground_truth.ticket_category
  account_unlocked:
    type: equals
    path: final_state.account.locked
    value: false
rubrics:
  helpdesk:
    weights: {unlocked: 1, ticket_category: 1, account_unlocked: 1}
thresholds: {metrics_pass_threshold: 0, cases_pass_threshold: 0}
gates:
  - {rubric: helpdesk, metric: tcr, min: 0.1}
"""


def test_skipped_records_are_counted_in_every_report(tmp_path: Path) -> None:
    logs = tmp_path / "logs.jsonl"
    lines = (FIXTURES / "anthropic_helpdesk.jsonl").read_text().splitlines()
    # a stray line, then the last line cut short (the logger was killed mid-write)
    logs.write_text(f'{lines[0]}\n{{"messages": [{{"role": "robot"}}]}}\n{lines[1][:70]}\n')
    suite = tmp_path / "suite.yaml"
    suite.write_text(ANTHROPIC_SUITE)
    report, markdown = tmp_path / "r.json", tmp_path / "r.md"
    code, stdout, _ = _cli(
        "run",
        str(suite),
        "--db",
        f"sqlite:///{tmp_path / 'r.db'}",
        "--json",
        str(report),
        "--markdown",
        str(markdown),
        "-q",
    )
    assert code == 0, stdout
    note = (
        f"2 bad record(s) of 3 skipped (on_bad_record: skip): {logs}:2: messages[0].role: "
        f"unknown role 'robot'; expected user or assistant; {logs}:3: invalid JSON: EOF while "
        "parsing a string at column 70 (the record is cut short)"
    )
    assert f"note: {note}" in stdout
    data = json.loads(report.read_text())
    assert note in data["summary"]["notes"]
    md = markdown.read_text()
    assert "> note: 2 bad record(s) of 3 skipped (on\\_bad\\_record: skip): " in md
    assert "unknown role 'robot'" in md
    assert _verdicts(data["results"][0]) == {
        "unlocked": "passed",
        "ticket_category": "passed",
        "account_unlocked": "passed",
    }
    # the same file under fail: the run does not start, one line names the line
    strict = tmp_path / "strict.yaml"
    strict.write_text(ANTHROPIC_SUITE.replace("on_bad_record: skip", "on_bad_record: fail"))
    code, _, stderr = _cli("run", str(strict), "--db", f"sqlite:///{tmp_path / 's.db'}", "-q")
    assert code == 2
    assert (
        stderr
        == f"error: {logs}:2: messages[0].role: unknown role 'robot'; expected user or assistant\n"
    )
    # --on-bad-record overrides the suite's choice
    code, stdout, _ = _cli(
        "run",
        str(strict),
        "--db",
        f"sqlite:///{tmp_path / 's.db'}",
        "-q",
        "--on-bad-record",
        "skip",
    )
    assert code == 0
    assert "2 bad record(s) of 3 skipped" in stdout


def test_cases_flag_reads_another_log_in_the_suites_format(tmp_path: Path) -> None:
    (tmp_path / "logs.jsonl").write_text("")  # the suite's own file is empty...
    suite = tmp_path / "suite.yaml"
    suite.write_text(RESPONSES_SUITE.replace("LOGS", "logs.jsonl"))
    db = f"sqlite:///{tmp_path / 'r.db'}"
    code, _, stderr = _cli("run", str(suite), "--db", db, "-q")
    assert (code, stderr) == (
        2,
        f"error: {tmp_path / 'logs.jsonl'}: the cases file holds no cases\n",
    )
    # ... --cases points the run at another log, read as the suite's format says
    other = tmp_path / "elsewhere" / "march.jsonl"
    other.parent.mkdir()
    shutil.copy(FIXTURES / "responses_shop.jsonl", other)
    report = tmp_path / "r.json"
    code, stdout, _ = _cli(
        "run", str(suite), "--db", db, "-q", "--cases", str(other), "--json", str(report)
    )
    assert code == 0, stdout
    assert list(_results(report)) == [
        "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b",
        "march-2",
    ]
    (run,) = Store(db).list_runs()
    assert Store(db).get_run(run.id).config["cases_path"] == str(other)


def test_cases_flag_on_a_checkweigh_cases_file(tmp_path: Path) -> None:
    out = tmp_path / "imported" / "airline.jsonl"
    code, _, _ = _cli("import", "openai", str(FIXTURES / "openai_airline.jsonl"), "-o", str(out))
    assert code == 0
    suite = tmp_path / "suite.yaml"
    suite.write_text(AIRLINE_SUITE.replace("CASES", "missing-until-overridden.jsonl"))
    (tmp_path / "missing-until-overridden.jsonl").write_text("")
    report = tmp_path / "r.json"
    args = [
        "run",
        str(suite),
        "--db",
        f"sqlite:///{tmp_path / 'r.db'}",
        "-q",
        "--json",
        str(report),
    ]
    code, stdout, _ = _cli(*args, "--cases", str(out))
    assert code == 0, stdout
    assert len(_results(report)) == 3
    code, _, stderr = _cli(*args, "--on-bad-record", "skip")
    assert code == 2
    assert stderr.startswith(
        "error: --on-bad-record: skipping bad records applies to imported logs"
    )


MAPPING_SUITE = """\
name: tau
cases:
  path: tau_runs.json
  format: mapping
  mapping:
    id: [task_id, trial]
    messages: traj
    final_state: info.reward_info
    ground_truth: info.task
checks:
  booked:
    type: tool_called
    step: {name: book_reservation, arguments: {flight_number: HAT045, date: "2024-05-25"}}
  rewarded:
    type: equals
    path: final_state.reward
    value: 1.0
rubrics:
  tau:
    weights: {booked: 1, rewarded: 1}
thresholds: {metrics_pass_threshold: 0, cases_pass_threshold: 0}
gates:
  - {rubric: tau, metric: tcr, min: 0.1}
"""


@pytest.mark.parametrize("how", ["suite", "import"])
def test_a_custom_log_through_a_mapping(tmp_path: Path, how: str) -> None:
    shutil.copy(FIXTURES / "tau_runs.json", tmp_path / "tau_runs.json")
    suite = tmp_path / "suite.yaml"
    if how == "suite":
        suite.write_text(MAPPING_SUITE)
    else:
        code, stdout, stderr = _cli(
            "import",
            "mapping",
            str(tmp_path / "tau_runs.json"),
            "--mapping",
            str(FIXTURES / "mapping_tau.yaml"),
            "--out",
            str(tmp_path / "cases.jsonl"),
        )
        assert (code, stderr) == (0, ""), stdout
        _, _, tail = MAPPING_SUITE.partition("checks:")
        suite.write_text("name: tau\ncases: cases.jsonl\nchecks:" + tail)
    report = tmp_path / "r.json"
    code, stdout, _ = _cli(
        "run", str(suite), "--db", f"sqlite:///{tmp_path / 'r.db'}", "-q", "--json", str(report)
    )
    assert code == 0, stdout
    assert {k: _verdicts(v) for k, v in _results(report).items()} == {
        "42-0": {"booked": "passed", "rewarded": "passed"},
        "42-1": {"booked": "failed", "rewarded": "failed"},
    }


def test_the_pytest_helpers_read_a_suite_of_logs(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "responses_shop.jsonl", tmp_path / "logs.jsonl")
    suite = tmp_path / "suite.yaml"
    suite.write_text(RESPONSES_SUITE.replace("LOGS", "logs.jsonl"))
    tester = SuiteTester(load_suite(suite))
    assert [c.id for c in tester.cases()] == [
        "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b",
        "logs-2",
    ]
    result = assert_case_passes(suite, "logs-2")
    assert result.verdicts["refunded_in_full"].state.value == "passed"
