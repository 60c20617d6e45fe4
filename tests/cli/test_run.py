"""`checkweigh run`, `runs` and `show` end to end on recorded scheduling traces."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from checkweigh.cli import app
from checkweigh.store import RunStatus, Store
from support.recorded_suite import make_case, standard_cases, write_suite

runner = CliRunner()


def _run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_run_prints_report_stores_run_and_exports_json(suite_path: Path, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    out_json = tmp_path / "out" / "results.json"
    code, out, _ = _run("run", str(suite_path), "--db", db, "--json", str(out_json), "-q")
    assert code == 0, out
    # ok-1, ok-2 score 1; wrong-time 0.7 (required correct_time failed: graceful);
    # missing-bob 0.6 (graceful); crash 0 with stage failed (hard); terse 0.4 (partial).
    # TCR = 3.7 / 6 = 0.6167, shown truncated.
    assert "TCR 0.616" in out
    assert "successful completion       2" in out
    assert "graceful failure            2" in out
    assert "partial failure             1" in out
    assert "hard failure                1" in out
    assert (
        "top failing: correct_participants, correct_time, clear_explanation, checked_first" in out
    )
    assert "gate PASS  completion tcr >= 0.5" in out

    data = json.loads(out_json.read_text())
    assert [r["case_id"] for r in data["results"]] == [
        "ok-1",
        "ok-2",
        "wrong-time",
        "missing-bob",
        "crash",
        "terse",
    ]
    wrong = data["results"][2]
    assert wrong["scores"]["completion"]["required_failed"] == ["correct_time"]
    assert wrong["case"] == {
        "state": "failed",
        "score_pct": 70.0,
        "reason": "required check failed: correct_time: final_state.booking.time is '11:00', "
        "expected '10:00'",
    }
    assert data["results"][0]["case"]["state"] == "passed"
    assert wrong["scores"]["completion"]["outcome"] == "graceful_failure"
    assert wrong["verdicts"]["correct_time"]["reason"] == (
        "final_state.booking.time is '11:00', expected '10:00'"
    )
    assert data["summary"]["rubrics"][0]["outcomes"]["successful_completion"] == 2

    store = Store(db)
    (info,) = store.list_runs()
    assert info.status is RunStatus.COMPLETE
    assert info.executions == 6
    assert info.config["rubrics"][0]["weights"]["correct_time"] == 0.3

    code, out, _ = _run("runs", "--db", db)
    assert code == 0
    assert info.id in out
    assert "complete" in out

    code, out, _ = _run("show", info.id[:12], "--db", db)
    assert code == 0
    assert "TCR 0.616" in out


def test_failed_gate_exits_1(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "s", standard_cases(), gate=0.9)
    code, out, _ = _run("run", str(suite), "--db", f"sqlite:///{tmp_path / 'r.db'}", "-q")
    assert code == 1
    assert "gate FAIL  completion tcr >= 0.9  (actual 0.6167)" in out


def test_editing_the_suite_does_not_change_a_stored_run(suite_path: Path, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    assert _run("run", str(suite_path), "--db", db, "-q")[0] == 0
    suite_path.write_text(
        suite_path.read_text().replace("correct_participants: 0.4", "correct_participants: 0.9")
    )
    code, out, _ = _run("show", "latest", "--db", db)
    assert code == 0
    assert "TCR 0.616" in out
    info = Store(db).get_run("latest")
    assert info.config["rubrics"][0]["weights"]["correct_participants"] == 0.4


def test_a_bad_case_mid_file_is_one_line_before_the_run_starts(tmp_path: Path) -> None:
    # the whole cases file is validated (streamed) before the run: no agent call is spent and
    # no half run is stored for a file that cannot be run to the end
    suite = write_suite(tmp_path / "s", standard_cases())
    cases = suite.parent / "cases.jsonl"
    lines = cases.read_text().splitlines()
    lines.insert(3, '{"id": "broken", "trace": [{"kind": "robot"}]}')
    cases.write_text("\n".join(lines) + "\n")
    db = f"sqlite:///{tmp_path / 'r.db'}"
    code, _, err = _run("run", str(suite), "--db", db, "-q")
    assert code == 2
    assert err.strip().splitlines() == [
        f"error: {cases}:4: trace[0].kind: expected 'user', 'assistant', 'tool_call', "
        "'system' or 'event', got 'robot'"
    ]
    assert not (tmp_path / "r.db").exists()


def test_a_raising_check_is_reported_as_errored(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    suite = write_suite(folder, standard_cases())
    (folder / "flaky_checks.py").write_text(
        "from checkweigh.checks import check\n\n\n"
        "@check\n"
        "def polite(case):\n"
        "    if case.id == 'missing-bob':\n"
        "        raise KeyError('tone model unavailable')\n"
        "    return 'sorry' not in case.output.lower()\n"
    )
    text = suite.read_text()
    text = text.replace(
        "rubrics:\n",
        "  polite:\n    type: python\n    function: flaky_checks:polite\nrubrics:\n",
    ).replace("clear_explanation: 0.2\n", "clear_explanation: 0.2\n      polite: 0.1\n")
    suite.write_text(text)
    code, out, _ = _run("run", str(suite), "--db", f"sqlite:///{tmp_path / 'r.db'}", "-q")
    # default gates are replaced by the suite's; the errored case is still shown
    assert "1 errored" in out
    assert "missing-bob#0: completion: not scored (polite errored: KeyError:" in out
    assert "scored 5 of 6, errored 1" in out
    assert code == 0


def test_repeat_reports_per_case_variance(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "coin_agent.py").write_text(
        "calls = {'n': 0}\n\n\n"
        "def run(request):\n"
        "    calls['n'] += 1\n"
        "    late = calls['n'] % 2 == 0 and request['who'] == 'flaky'\n"
        "    time = '11:00' if late else '10:00'\n"
        "    return {\n"
        "        'trace': [\n"
        "            {'kind': 'tool_call', 'name': 'check_availability'},\n"
        "            {'kind': 'tool_call', 'name': 'book_meeting'},\n"
        "            {'kind': 'assistant', 'content': f'Booked Alice and Bob at {time} today.'},\n"
        "        ],\n"
        "        'final_state': {'success': True, 'booking': {\n"
        "            'participants': ['Alice', 'Bob'], 'time': time}},\n"
        "    }\n"
    )
    cases = [
        {
            "id": "steady",
            "input": {"who": "steady"},
            "ground_truth": {"participants": ["Alice", "Bob"], "time": "10:00"},
        },
        {
            "id": "flaky",
            "input": {"who": "flaky"},
            "ground_truth": {"participants": ["Alice", "Bob"], "time": "10:00"},
        },
    ]
    suite = write_suite(folder, cases)
    suite.write_text(
        suite.read_text().replace(
            "cases: cases.jsonl\n",
            "cases: cases.jsonl\ntarget:\n  agent: coin_agent:run\n  concurrency: 1\n",
        )
    )
    code, out, _ = _run(
        "run", str(suite), "--repeat", "4", "--db", f"sqlite:///{tmp_path / 'r.db'}", "-q"
    )
    assert code == 0, out
    assert "8 execution(s) of 2 case(s)" in out
    assert "least stable cases across repeats" in out
    assert "flaky" in out.split("least stable cases across repeats")[1]


def test_agent_exceptions_are_counted_as_errored(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "bad_agent.py").write_text(
        "async def run(request):\n    raise ConnectionError('calendar API down')\n"
    )
    suite = write_suite(folder, [{"id": "a", "input": {}}, {"id": "b", "input": {}}])
    suite.write_text(
        suite.read_text().replace(
            "cases: cases.jsonl\n", "cases: cases.jsonl\ntarget:\n  agent: bad_agent:run\n"
        )
    )
    code, out, _ = _run("run", str(suite), "--db", f"sqlite:///{tmp_path / 'r.db'}", "-q")
    assert code == 1  # tcr unmeasurable: the gate fails
    assert "(2 agent error(s))" in out
    assert "agent raised ConnectionError: calendar API down" in out


def test_make_case_helper_builds_valid_cases() -> None:
    from checkweigh.core import Case

    case = Case.model_validate(make_case("x", participants=["Alice"], time="10:00"))
    assert case.output.startswith("Booked")
