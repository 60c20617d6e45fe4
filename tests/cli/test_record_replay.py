"""``checkweigh run --record-agent DIR`` then ``--replay-agent DIR``: a replayed run scores as
the recorded one did, with zero agent calls, and re-scores changed checks and weights."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from checkweigh.cli import app
from checkweigh.store import RunStatus, Store
from support import cli_process as cli

runner = CliRunner()

# counts every call in calls.txt beside it; the "flaky" case books 11:00 on every second call
# of it (whichever repeat makes it: two run at once), the "down" case's calendar is unreachable
AGENT = """\
import threading
from pathlib import Path

HERE = Path(__file__).parent
COUNTING = threading.Lock()


def run(request):
    with COUNTING:
        with (HERE / "calls.txt").open("a") as f:
            f.write(request["who"] + "\\n")
        seen = (HERE / "calls.txt").read_text().split().count(request["who"])
    if request["who"] == "down":
        raise ConnectionError("calendar API down")
    time = "11:00" if request["who"] == "flaky" and seen % 2 == 0 else "10:00"
    return {
        "trace": [
            {"kind": "tool_call", "name": "check_availability", "arguments": {}},
            {"kind": "tool_call", "name": "book_meeting", "arguments": {"time": time}},
            {"kind": "assistant", "content": f"Booked Alice and Bob at {time} on Tuesday."},
        ],
        "final_state": {
            "success": True, "booking": {"participants": ["Alice", "Bob"], "time": time}
        },
    }
"""

SUITE = """\
name: bookings
cases: cases.jsonl
target:
  agent: AGENT_MODULE:run
  concurrency: 2
checks:
  correct_time: {type: equals, path: final_state.booking.time, expected_path: ground_truth.time}
  checked_first: {type: before, first: check_availability, then: book_meeting}
EXTRA_CHECK
rubrics:
  completion:
    weights:
      correct_time: TIME_WEIGHT
      checked_first: 0.3
EXTRA_WEIGHT
thresholds: {metrics_pass_threshold: 10, cases_pass_threshold: 10}
"""

CASES = [
    {"id": "steady", "input": {"who": "steady"}, "ground_truth": {"time": "10:00"}},
    {"id": "flaky", "input": {"who": "flaky"}, "ground_truth": {"time": "10:00"}},
    {"id": "down", "input": {"who": "down"}, "ground_truth": {"time": "10:00"}},
]


def _module(folder: Path) -> str:
    """The agent's module name, one per test: CliRunner runs in this process, where a module
    imported by an earlier test would be reused."""
    return f"booking_agent_{folder.parent.name}"


def _suite(folder: Path, name: str = "suite.yaml", *, changed: bool = False) -> Path:
    text = SUITE.replace("TIME_WEIGHT", "0.2" if changed else "0.7")
    text = text.replace("AGENT_MODULE", _module(folder))
    if changed:  # a check added, a weight changed: what a replay is for
        text = text.replace(
            "EXTRA_CHECK", "  says_tuesday: {type: contains, path: output, values: [Tuesday]}"
        ).replace("EXTRA_WEIGHT", "      says_tuesday: 0.5")
    else:
        text = text.replace("EXTRA_CHECK\n", "").replace("EXTRA_WEIGHT\n", "")
    (folder / name).write_text(text)
    return folder / name


def _project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / f"{_module(folder)}.py").write_text(AGENT)
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES))
    _suite(folder)
    return folder


def _run(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


def _calls(folder: Path) -> int:
    path = folder / "calls.txt"
    return len(path.read_text().split()) if path.exists() else 0


def _records(store: Store, run_id: str) -> list[dict[str, Any]]:
    return [r.to_record() for r in store.iter_results(run_id)]


def _stop_the_agent(folder: Path) -> None:
    """From now on a call of the agent fails the test: it raises, and it cannot be imported."""
    (folder / f"{_module(folder)}.py").write_text("raise RuntimeError('the agent was called')\n")


def test_a_replayed_run_scores_as_the_recorded_one_with_zero_agent_calls(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    rec = tmp_path / "rec"
    code, out = _run(
        "run", str(folder / "suite.yaml"), "--repeat", "3", "--record-agent", str(rec),
        "--db", db, "-q",
    )  # fmt: skip
    assert code == 0, out
    assert f"note: agent calls recorded to {rec}" in out
    assert _calls(folder) == 9
    assert len((rec / "calls.jsonl").read_text().splitlines()) == 9

    _stop_the_agent(folder)
    code, replay_out = _run(
        "run", str(folder / "suite.yaml"), "--repeat", "3", "--replay-agent", str(rec),
        "--db", db, "-q",
    )  # fmt: skip
    assert code == 0, replay_out
    assert _calls(folder) == 9  # zero agent calls
    assert f"note: agent replayed from {rec}, recorded " in replay_out
    assert "; 9 calls" in replay_out
    assert "agent raised ConnectionError: calendar API down" in replay_out

    store = Store(db)
    replayed, recorded = store.list_runs(limit=2)
    assert replayed.status is recorded.status is RunStatus.COMPLETE
    # every record equal: verdicts, scores, agent errors, and the latencies the recording took
    assert _records(store, replayed.id) == _records(store, recorded.id)
    flaky = [r for r in _records(store, recorded.id) if r["case_id"] == "flaky"]
    # the second call of it failed, whichever repeat it was (the repeats run two at once)
    states = sorted(r["verdicts"]["correct_time"]["state"] for r in flaky)
    assert states == ["failed", "passed", "passed"]
    assert store.get_run(recorded.id).config["agent_source"] == {
        "mode": "recorded",
        "dir": str(rec),
        "recorded_at": None,
        "target_kind": "python",
    }
    source = store.get_run(replayed.id).config["agent_source"]
    assert source["mode"] == "replayed"
    assert source["dir"] == str(rec)
    assert source["recorded_at"].startswith(
        json.loads((rec / "manifest.json").read_text())["created_at"][:19]
    )
    # the two reports tell the same story, bar the run id and the note
    assert _body(out) == _body(replay_out)


def _body(report: str) -> list[str]:
    return [
        line
        for line in report.splitlines()
        if not line.startswith(("bookings", "note: agent")) and "latency" not in line
    ]


def test_a_replay_rescored_with_a_changed_suite_keeps_the_unchanged_verdicts(
    tmp_path: Path,
) -> None:
    folder = _project(tmp_path)
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    rec = tmp_path / "rec"
    code, out = _run(
        "run", str(folder / "suite.yaml"), "--repeat", "3", "--record-agent", str(rec),
        "--db", db, "-q",
    )  # fmt: skip
    assert code == 0, out
    _stop_the_agent(folder)
    changed = _suite(folder, "changed.yaml", changed=True)
    code, out = _run(
        "run", str(changed), "--repeat", "3", "--replay-agent", str(rec), "--db", db, "-q"
    )
    assert code == 0, out
    assert _calls(folder) == 9

    store = Store(db)
    replayed, recorded = store.list_runs(limit=2)
    before, after = _records(store, recorded.id), _records(store, replayed.id)
    assert [(r["case_id"], r["repeat"]) for r in before] == [
        (r["case_id"], r["repeat"]) for r in after
    ]
    for was, now in zip(before, after, strict=True):
        assert now["agent_error"] == was["agent_error"]
        if was["agent_error"]:
            assert now["verdicts"] == {}
            continue
        for name in ("correct_time", "checked_first"):
            assert now["verdicts"][name] == was["verdicts"][name]
        assert now["verdicts"]["says_tuesday"]["state"] == "passed"  # the new check, scored
        # 0.2 time + 0.3 order + 0.5 Tuesday: the weights of the changed suite
        time_ok = now["verdicts"]["correct_time"]["state"] == "passed"
        assert now["scores"]["completion"]["score"] == (1.0 if time_ok else 0.8)
        assert was["scores"]["completion"]["score"] == (1.0 if time_ok else 0.3)


def test_recording_again_replaces_the_recording_and_says_so(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    rec = tmp_path / "rec"
    assert (
        _run("run", str(folder / "suite.yaml"), "--record-agent", str(rec), "--db", db, "-q")[0]
        == 0
    )
    code, out = _run(
        "run", str(folder / "suite.yaml"), "--repeat", "2", "--record-agent", str(rec),
        "--db", db, "-q",
    )  # fmt: skip
    assert code == 0, out
    assert f"note: agent calls recorded to {rec} (replacing the recording made " in out
    assert len((rec / "calls.jsonl").read_text().splitlines()) == 6


def test_replay_with_more_repeats_than_recorded_errors_the_missing_tries(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    rec = tmp_path / "rec"
    assert (
        _run("run", str(folder / "suite.yaml"), "--record-agent", str(rec), "--db", db, "-q")[0]
        == 0
    )
    _stop_the_agent(folder)
    code, out = _run(
        "run", str(folder / "suite.yaml"), "--repeat", "2", "--replay-agent", str(rec),
        "--db", db, "-q",
    )  # fmt: skip
    assert code == 0, out
    store = Store(db)
    records = _records(store, store.list_runs(limit=1)[0].id)
    errors = {(r["case_id"], r["repeat"]): r["agent_error"] for r in records}
    assert errors["steady", 0] is None
    assert (
        errors["steady", 1] == f"no recorded agent call for case 'steady' try 2 (turn 0) in {rec}"
    )
    assert errors["down", 0] == "agent raised ConnectionError: calendar API down"


def test_ctrl_c_while_recording_keeps_the_finished_calls(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    (folder / f"{_module(folder)}.py").write_text(
        "import time\n\n\ndef run(request):\n    time.sleep(0.2)\n"
        "    return {'trace': [{'kind': 'assistant', 'content': 'Booked at 10:00.'}],\n"
        "            'final_state': {'booking': {'time': '10:00'}}}\n"
    )
    (folder / "cases.jsonl").write_text(
        "".join(
            json.dumps(
                {"id": f"c{i:02d}", "input": {"who": "x"}, "ground_truth": {"time": "10:00"}}
            )
            + "\n"
            for i in range(40)
        )
    )
    db = tmp_path / "runs.db"
    proc = cli.start(
        ["run", "suite.yaml", "--record-agent", "rec", "--db", f"sqlite:///{db}", "-q"], folder
    )
    cli.wait_for_stored(db, 3, proc, timeout=60)
    began = time.monotonic()
    proc.send_signal(signal.SIGINT)
    done = cli.finish(proc, began, timeout=60)
    assert done.code == 130, done.out + done.err
    assert "Traceback" not in done.err
    kept = done.kept()
    assert kept is not None
    assert kept >= 3
    lines = (folder / "rec" / "calls.jsonl").read_text().splitlines()
    # every stored execution was recorded (a call finishes before its case is stored)
    assert len(lines) >= kept
    assert all(json.loads(line)["reply"]["final_state"] for line in lines)

    # the part recorded replays; the rest are misses, not a crash
    (folder / f"{_module(folder)}.py").write_text("raise RuntimeError('the agent was called')\n")
    again = cli.run(
        ["run", "suite.yaml", "--replay-agent", "rec", "--db", f"sqlite:///{db}", "-q"], folder
    )
    assert again.code in (0, 1), again.err
    assert f"{len(lines)} calls" in again.out
    assert "no recorded agent call for case" in again.out
