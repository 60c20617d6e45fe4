"""A catalogue of broken, missing and foreign agent recordings and mistaken flags, each run
through the real ``checkweigh`` command in a subprocess.

A user mistake ends with exit 2 and exactly one line on stderr naming the file (and line) or
the flag, and what was expected; no traceback; the agent is never called and nothing the user
had is overwritten. Faults inside a usable recording (a changed input, a call cut short by a
kill) are the cases' errors or a note, and the run finishes.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from support import cli_process as cli

AGENT = """\
from pathlib import Path


def run(request):
    with (Path(__file__).parent / "calls.txt").open("a") as f:
        f.write(request["who"] + "\\n")
    return {
        "trace": [{"kind": "assistant", "content": f"Booked {request['who']} at 10:00."}],
        "final_state": {"booking": {"time": "10:00"}},
    }
"""

SUITE = """\
name: bookings
cases: cases.jsonl
target:
  agent: replay_agent:run
checks:
  correct_time: {type: equals, path: final_state.booking.time, value: "10:00"}
rubrics:
  completion:
    weights: {correct_time: 1.0}
thresholds: {metrics_pass_threshold: 10, cases_pass_threshold: 10}
"""

CASES = [{"id": w, "input": {"who": w}} for w in ("alice", "bob", "carol")]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project whose agent was recorded once into ``rec/`` (3 calls)."""
    folder = tmp_path_factory.mktemp("recorded")
    (folder / "replay_agent.py").write_text(AGENT)
    (folder / "suite.yaml").write_text(SUITE)
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES))
    done = cli.run(
        ["run", "suite.yaml", "--record-agent", "rec", "--db", "sqlite:///rec.db", "-q"], folder
    )
    assert done.code == 0, done.err
    assert len((folder / "rec" / "calls.jsonl").read_text().splitlines()) == 3
    (folder / "calls.txt").unlink()
    (folder / "rec.db").unlink()
    return folder


def _lines(folder: Path) -> list[str]:
    return (folder / "rec" / "calls.jsonl").read_text().splitlines(keepends=True)


def _no_target(folder: Path) -> None:
    text = (folder / "suite.yaml").read_text()
    (folder / "suite.yaml").write_text(text.replace("target:\n  agent: replay_agent:run\n", ""))
    (folder / "cases.jsonl").write_text(
        "".join(
            json.dumps({**c, "trace": [{"kind": "assistant", "content": "hi"}]}) + "\n"
            for c in CASES
        )
    )


def _manifest(folder: Path, text: str) -> None:
    (folder / "rec" / "manifest.json").write_text(text)


def _bad_line(folder: Path, line: str) -> None:
    lines = _lines(folder)
    (folder / "rec" / "calls.jsonl").write_text(lines[0] + line + "\n" + "".join(lines[1:]))


@dataclass(frozen=True)
class Bad:
    """The recorded project with one mistake."""

    id: str
    change: Callable[[Path], None]
    args: list[str]
    message: str
    """The line on stderr after ``error: `` ({rec} is the recording's folder)."""


def _nothing(_folder: Path) -> None:
    return None


def _write(name: str, text: str) -> Callable[[Path], None]:
    def change(folder: Path) -> None:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    return change


REPLAY = ["--replay-agent", "rec"]
BAD = [
    Bad(
        "replay-folder-missing",
        _nothing,
        ["--replay-agent", "yesterday"],
        "--replay-agent: yesterday does not exist; record one with --record-agent",
    ),
    Bad(
        "replay-folder-is-a-file",
        _write("notes.txt", "not a recording"),
        ["--replay-agent", "notes.txt"],
        "--replay-agent: notes.txt is a file; expected a recording's folder",
    ),
    Bad(
        "replay-folder-foreign",
        _write("src/app.py", "print('hi')\n"),
        ["--replay-agent", "src"],
        "--replay-agent: src is not an agent recording (no manifest.json); record one with "
        "--record-agent",
    ),
    Bad(
        "manifest-of-something-else",
        lambda f: _manifest(f, '{"name": "my-app", "version": "1.0.0"}'),
        REPLAY,
        "rec/manifest.json: not a checkweigh agent recording (expected format: "
        "checkweigh-agent-recording)",
    ),
    Bad(
        "manifest-not-json",
        lambda f: _manifest(f, '{"format": "checkweigh-agent-recording",'),
        REPLAY,
        "rec/manifest.json: not readable JSON: Expecting property name enclosed in double "
        "quotes: line 1 column 41 (char 40)",
    ),
    Bad(
        "manifest-from-a-newer-checkweigh",
        lambda f: _manifest(
            f, '{"format": "checkweigh-agent-recording", "format_version": 9, "suite": "x"}'
        ),
        REPLAY,
        "rec/manifest.json: format_version: recorded in format 9 by a newer checkweigh; this "
        "one reads 1",
    ),
    Bad(
        "manifest-missing-a-field",
        lambda f: _manifest(f, '{"format": "checkweigh-agent-recording", "format_version": 1}'),
        REPLAY,
        "rec/manifest.json: suite: required field is missing",
    ),
    Bad(
        "calls-file-missing",
        lambda f: (f / "rec" / "calls.jsonl").unlink(),
        REPLAY,
        "--replay-agent: rec holds no calls.jsonl; the recording is incomplete",
    ),
    Bad(
        "call-line-not-json",
        lambda f: _bad_line(f, '{"case_id": "bob", "repeat": 0'),
        REPLAY,
        "rec/calls.jsonl:2: not a recorded agent call: Invalid JSON: EOF while parsing an "
        "object at line 1 column 30",
    ),
    Bad(
        "call-line-wrong-field",
        lambda f: _bad_line(
            f,
            '{"case_id": "bob", "repeat": "twice", "fingerprint": "x", "request": {}, '
            '"wall_ms": 1}',
        ),
        REPLAY,
        "rec/calls.jsonl:2: not a recorded agent call: repeat: Input should be a valid "
        "integer, unable to parse string as an integer",
    ),
    Bad(
        "call-line-from-another-tool",
        lambda f: _bad_line(f, '{"prompt": "hi", "completion": "hello"}'),
        REPLAY,
        "rec/calls.jsonl:2: not a recorded agent call: prompt: unknown key 'prompt'",
    ),
    Bad(
        "both-flags",
        _nothing,
        ["--record-agent", "new", "--replay-agent", "rec"],
        "--replay-agent: --record-agent runs the agent and --replay-agent answers without it: "
        "pick one",
    ),
    Bad(
        "replay-without-target",
        _no_target,
        REPLAY,
        "--replay-agent: the suite 'bookings' has no target: its cases hold recorded traces "
        "and no agent is called; add a target: block to record or replay one",
    ),
    Bad(
        "record-without-target",
        _no_target,
        ["--record-agent", "new"],
        "--record-agent: the suite 'bookings' has no target: its cases hold recorded traces "
        "and no agent is called; add a target: block to record or replay one",
    ),
    Bad(
        "record-into-a-file",
        _write("notes.txt", "keep me"),
        ["--record-agent", "notes.txt"],
        "--record-agent: notes.txt is a file; expected a folder for the recording",
    ),
    Bad(
        "record-over-a-foreign-manifest",
        _write("web/manifest.json", '{"name": "My PWA", "start_url": "/"}'),
        ["--record-agent", "web"],
        "--record-agent: web holds a manifest.json that is not a checkweigh agent recording; "
        "not overwritten: give an empty or new folder",
    ),
    Bad(
        "record-over-a-foreign-calls-file",
        _write("logs/calls.jsonl", '{"ts": 1, "call": "GET /"}\n'),
        ["--record-agent", "logs"],
        "--record-agent: logs holds a calls.jsonl without a manifest.json; not overwritten: "
        "give an empty or new folder",
    ),
]


@pytest.mark.parametrize("bad", BAD, ids=[b.id for b in BAD])
def test_a_bad_recording_or_flag_is_one_line_and_exit_2(
    recorded: Path, tmp_path: Path, bad: Bad
) -> None:
    folder = tmp_path / "project"
    shutil.copytree(recorded, folder)
    bad.change(folder)
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    done = cli.run(["run", "suite.yaml", *bad.args, "--db", "sqlite:///runs.db", "-q"], folder)
    assert done.code == 2, done.out + done.err
    assert done.err.splitlines() == [f"error: {bad.message}"]
    assert "Traceback" not in done.err
    assert not (folder / "calls.txt").exists()  # the agent was never called
    after = {
        p: p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file() and not p.name.startswith("runs.db")
    }
    assert after == before  # nothing of the user's changed or went away


def _results(folder: Path) -> dict[str, str | None]:
    from checkweigh.store import Store

    store = Store(f"sqlite:///{folder / 'runs.db'}")
    run = store.list_runs(limit=1)[0]
    return {r.case_id: r.agent_error for r in store.iter_results(run.id)}


def test_a_changed_input_is_that_cases_error_and_the_run_finishes(
    recorded: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "project"
    shutil.copytree(recorded, folder)
    cases = [
        *CASES[:2],
        {"id": "carol", "input": {"who": "Carol Jones"}},
        {"id": "dave", "input": {"who": "dave"}},
    ]
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (folder / "replay_agent.py").unlink()  # no agent at all: the replay needs none
    done = cli.run(["run", "suite.yaml", *REPLAY, "--db", "sqlite:///runs.db", "-q"], folder)
    assert done.code == 0, done.out + done.err
    assert "Traceback" not in done.err
    rec = "rec"
    assert _results(folder) == {
        "alice": None,
        "bob": None,
        "carol": f"the recorded agent call for case 'carol' try 1 (turn 0) in {rec} was sent a "
        "different request (the case's input, metadata or messages changed since it was "
        "recorded)",
        "dave": f"no recorded agent call for case 'dave' try 1 (turn 0) in {rec}",
    }


def test_a_last_call_cut_short_by_a_kill_is_noted_and_the_rest_replays(
    recorded: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "project"
    shutil.copytree(recorded, folder)
    lines = _lines(folder)
    # the calls are recorded as the agent answers them, in whatever order that was
    cut = json.loads(lines[2])["case_id"]
    (folder / "rec" / "calls.jsonl").write_text(lines[0] + lines[1] + lines[2][:25])
    done = cli.run(["run", "suite.yaml", *REPLAY, "--db", "sqlite:///runs.db", "-q"], folder)
    assert done.code == 0, done.out + done.err
    assert "note: agent replayed from rec, recorded " in done.out
    assert "; 2 calls" in done.out
    assert (
        "note: rec/calls.jsonl:3: the last line was cut short (the recording was stopped "
        "while writing it); that call is not replayed"
    ) in done.out
    results = _results(folder)
    assert results.pop(cut) == f"no recorded agent call for case '{cut}' try 1 (turn 0) in rec"
    assert results == {c: None for c in ("alice", "bob", "carol") if c != cut}
    assert not (folder / "calls.txt").exists()
