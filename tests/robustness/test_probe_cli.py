"""Inputs and faults a new user tried after the first catalogues, through the real CLI.

Each row is one realistic mistake or fault and the whole outcome expected of it: the exit code,
one line on stderr ending as given, no traceback, no raw control character, nothing stored when
the input was refused.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from support import cli_process as cli
from support.recorded_suite import standard_cases, write_suite


def _case(**changes: object) -> str:
    return json.dumps({**standard_cases()[0], **changes})


def _one_error_line(done: cli.Finished, code: int = 2) -> str:
    assert done.code == code, done.out + done.err
    assert "Traceback" not in done.out + done.err
    lines = done.err.splitlines()
    assert len(lines) == 1, done.err
    assert lines[0].startswith("error: "), lines[0]
    assert lines[0].isprintable(), repr(lines[0])
    return lines[0]


@dataclass(frozen=True)
class Mistake:
    """The standard recorded suite with one mistake in the suite or the cases file."""

    id: str
    where: str
    """The file and its line, after ``error: `` and the folder."""
    ending: str
    """How the error line ends: the field and what was expected, and no misleading hint."""
    suite: Callable[[str], str] | None = None
    cases: str | None = None


def _edit(old: str, new: str) -> Callable[[str], str]:
    def edit(text: str) -> str:
        assert old in text, old
        return text.replace(old, new, 1)

    return edit


MISTAKES = [
    # an unknown condition operator was answered with "did you mean 'gates'?": the hint came
    # from the top-level keys instead of the condition's own
    Mistake(
        "unknown-operator-in-when",
        "suite.yaml:21",
        "checks.clear_explanation.when.matches: unknown key 'matches'",
        _edit("    min: 5", "    min: 5\n    when: {path: output, matches: '^Booked'}"),
    ),
    Mistake(
        "typo-operator-in-a-when-list",
        "suite.yaml:21",
        "checks.clear_explanation.when[0].equal: unknown key 'equal'; did you mean 'equals'?",
        _edit("    min: 5", "    min: 5\n    when: [{path: output, equal: 1}]"),
    ),
    # a NaN latency was accepted, stored as NULL by SQLite, and the run's summary failed to
    # build after the run: an internal error, and --json/--markdown never written
    Mistake(
        "nan-latency-in-a-trace",
        "cases.jsonl:1",
        "trace[0].latency_ms: expected a finite number, got 'NaN'",
        cases=_case(trace=[{"kind": "assistant", "content": "Booked.", "latency_ms": "NaN"}]),
    ),
    Mistake(
        "negative-latency-of-a-case",
        "cases.jsonl:2",
        "latency_ms: input should be greater than or equal to 0, got -3.0",
        cases=_case() + "\n" + _case(id="ok-2", latency_ms=-3.0),
    ),
    Mistake(
        "infinite-latency-of-a-case",
        "cases.jsonl:1",
        "latency_ms: expected a finite number, got 'Infinity'",
        cases=_case(latency_ms="Infinity"),
    ),
    # an empty id cannot be told apart in reports, compared or shown
    Mistake(
        "empty-case-id",
        "cases.jsonl:1",
        "id: String should have at least 1 character",
        None,
        _case(id=""),
    ),
]


@pytest.mark.parametrize("bad", MISTAKES, ids=[m.id for m in MISTAKES])
def test_a_mistake_is_one_line_and_nothing_is_stored(tmp_path: Path, bad: Mistake) -> None:
    suite = write_suite(tmp_path, standard_cases())
    if bad.suite is not None:
        suite.write_text(bad.suite(suite.read_text()))
    if bad.cases is not None:
        (tmp_path / "cases.jsonl").write_text(bad.cases + "\n")
    done = cli.run(
        ["run", "suite.yaml", "--db", "sqlite:///r.db", "-q", "--json", "o.json"], tmp_path
    )
    # the suite is named as given, the cases file by its full path
    line = _one_error_line(done).replace(f"{tmp_path}/", "")
    assert line.startswith(f"error: {bad.where}: "), line
    assert line.endswith(bad.ending), line
    assert not (tmp_path / "r.db").exists()


# (--db URL, the whole error line after 'error: --db: ')
DB_URLS = [
    # a port that is not a number was an internal error (exit 3) from SQLAlchemy's parser;
    # the password of a URL that cannot be parsed is hidden by hand
    (
        "postgresql://ci:s3cret@127.0.0.1:pg/results",
        "invalid database URL 'postgresql://ci:***@127.0.0.1:pg/results'; "
        "expected e.g. sqlite:///results.db or postgresql://user@host/db",
    ),
    # the driver ignored the option with a two-line warning and wrote to a database the user
    # asked to open read-only
    (
        "sqlite:///r.db?mode=ro",
        "cannot use database URL 'sqlite:///r.db?mode=ro': Query string argument(s) 'mode' are "
        "not accepted by the pysqlite driver; SQLite URI arguments require that 'uri=true' also "
        "be present in the URL.",
    ),
]


@pytest.mark.parametrize(("url", "expected"), DB_URLS, ids=["port-not-a-number", "sqlite-mode-ro"])
@pytest.mark.parametrize("command", [["run", "suite.yaml", "-q"], ["runs"], ["show", "latest"]])
def test_a_database_url_mistake_is_one_line(
    tmp_path: Path, url: str, expected: str, command: list[str]
) -> None:
    write_suite(tmp_path, standard_cases())
    done = cli.run([*command, "--db", url], tmp_path)
    assert _one_error_line(done) == f"error: --db: {expected}"
    assert not (tmp_path / "r.db").exists()


# (arguments, the whole error line after 'error: '); a suite and a stored run are there
FLAGS = [
    # each was an internal error (exit 3): SQLite cannot hold the integer
    (
        ["runs", "--limit", "99999999999999999999999"],
        "--limit: expected an integer <= 1000000, got 99999999999999999999999 "
        "(see 'checkweigh runs --help')",
    ),
    (
        ["run", "suite.yaml", "--repeat", "99999999999999999999"],
        "--repeat: expected an integer <= 10000, got 99999999999999999999 "
        "(see 'checkweigh run --help')",
    ),
    # the flags allowed what the suite's target.concurrency and judge block refuse
    (
        ["run", "suite.yaml", "--concurrency", "100000000"],
        "--concurrency: expected an integer <= 1024, got 100000000 (see 'checkweigh run --help')",
    ),
    (
        ["run", "suite.yaml", "--judge", "openai:gpt-4o-mini", "--judge-concurrency", "5000"],
        "--judge-concurrency: expected an integer <= 1024, got 5000 (see 'checkweigh run --help')",
    ),
    # was "cannot record the run in sqlite:///r.db: Integer exceeds 64-bit range"
    (
        ["run", "suite.yaml", "--judge", "openai:gpt-4o-mini", "--judge-retries", str(10**20)],
        "--judge-retries: expected a whole number from 0 to 100, got 100000000000000000000",
    ),
    # a NaN price made every cost NaN
    (
        ["run", "suite.yaml", "--judge", "openai:gpt-4o-mini", "--judge-prices", "nan,0.6"],
        "--judge-prices: prices must be finite and >= 0, got 'nan,0.6'",
    ),
    # an output path that is a folder or lies under a file: said so, and before the report
    # (show said "File exists"; run said "." is not a writable folder)
    (["run", "suite.yaml", "--json", "folder"], "--json: cannot write folder: it is a folder"),
    (
        ["show", "latest", "--junit", "a.txt/x.xml"],
        "--junit: cannot write a.txt/x.xml: a.txt is a file, not a folder",
    ),
    (["show", "latest", "--markdown", "folder"], "--markdown: cannot write folder: it is a folder"),
    (
        ["stability", "latest", "--noise", "0.1", "--html", "a.txt/s.html"],
        "--html: cannot write a.txt/s.html: a.txt is a file, not a folder",
    ),
    # a named pipe nobody reads: the run was stored, then the report's write blocked forever
    (
        ["run", "suite.yaml", "--json", "pipe.json"],
        "--json: cannot write pipe.json: it is a named pipe that nothing reads",
    ),
    (
        ["show", "latest", "--markdown", "pipe.json"],
        "--markdown: cannot write pipe.json: it is a named pipe that nothing reads",
    ),
    # an output file that is an input: the report replaced the database (every stored run),
    # the suite or the cases file
    (
        ["run", "suite.yaml", "--json", "r.db"],
        "--json: cannot write r.db: it is the database; give another file name",
    ),
    (
        ["run", "suite.yaml", "--markdown", "./suite.yaml"],
        "--markdown: cannot write suite.yaml: it is the suite; give another file name",
    ),
    (
        ["run", "suite.yaml", "--junit", "cases.jsonl"],
        "--junit: cannot write cases.jsonl: it is the cases file; give another file name",
    ),
    (
        ["show", "latest", "--json", "r.db"],
        "--json: cannot write r.db: it is the database; give another file name",
    ),
    (
        ["compare", "previous", "latest", "--markdown", "folder/../r.db"],
        "--markdown: cannot write folder/../r.db: it is the database; give another file name",
    ),
    (
        ["stability", "latest", "--noise", "0.1", "--json", "r.db"],
        "--json: cannot write r.db: it is the database; give another file name",
    ),
]


@pytest.mark.parametrize(("args", "expected"), FLAGS, ids=[" ".join(a[:4]) for a, _ in FLAGS])
def test_a_flag_mistake_is_one_line_before_anything_is_printed(
    tmp_path: Path, args: list[str], expected: str
) -> None:
    write_suite(tmp_path, standard_cases())
    (tmp_path / "folder").mkdir()
    (tmp_path / "a.txt").write_text("notes\n")
    os.mkfifo(tmp_path / "pipe.json")
    db = ["--db", "sqlite:///r.db"]
    assert cli.run(["run", "suite.yaml", "-q", *db], tmp_path).code == 0
    env_key = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    done = cli.run([*args, *db], tmp_path, prelude=f"import os; os.environ.update({env_key!r}); ")
    assert _one_error_line(done) == f"error: {expected}"
    assert done.out == ""
    assert cli.stored(tmp_path / "r.db") == 6
    assert (tmp_path / "suite.yaml").read_text().startswith("name: bookings")


AGENTS = """\
import asyncio
import os
import sys

OK = {"trace": [{"kind": "assistant", "content": "Booked at 10:00."}],
      "final_state": {"time": "10:00"}}


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no text for this error")


class Opaque:
    def __repr__(self):
        raise RuntimeError("no repr either")


def ok(request):
    return OK


def raises_unprintable(request):
    if request["n"] == 1:
        raise Unprintable()
    return OK


def exits_with_an_object(request):
    if request["n"] == 1:
        sys.exit(Opaque())
    return OK


def prints_escapes(request):
    # an agent echoing a model's or a web page's text: a title change, a clear, a link
    print("\\x1b]0;owned\\x07\\x1b[2Jthinking...")
    print("\\x1b]8;;https://evil.test\\x1b\\\\details\\x1b]8;;\\x1b\\\\", file=sys.stderr)
    return OK


def changes_folder(request):
    os.chdir(os.path.join(os.path.dirname(__file__), "elsewhere"))
    return OK


def closes_stdout(request):
    if request["n"] == 0:
        os.close(1)
    return OK


class Agent:
    async def __call__(self, request):
        return OK


agent_object = Agent()


def returns_a_coroutine(request):
    return asyncio.sleep(0, OK)


def passes(case):
    return True


def returns_opaque(case):
    return Opaque() if case.input["n"] == 1 else True
"""

AGENT_SUITE = """\
name: bookings-{agent}
cases: cases.jsonl
target:
  agent: agents:{agent}
  concurrency: 2
  timeout_s: 5
checks:
  correct_time: {{type: equals, path: final_state.time, value: "10:00"}}
  mine: {{type: python, function: "agents:{check}"}}
rubrics:
  completion:
    weights: {{correct_time: 1.0, mine: 1.0}}
"""

# (agent, python check, what the errored case says)
USER_CODE_FAULTS = [
    # str() of the exception raised again inside the agent's thread: a traceback on stderr,
    # and the case waited for its timeout
    ("raises_unprintable", "passes", "agent raised Unprintable: <str() raised RuntimeError>"),
    (
        "exits_with_an_object",
        "passes",
        "agent called sys.exit(<Opaque: repr() raised RuntimeError>)",
    ),
    ("ok", "returns_opaque", "check returned Opaque <Opaque: repr() raised RuntimeError>"),
]


@pytest.mark.parametrize(("agent", "check", "message"), USER_CODE_FAULTS)
def test_user_code_whose_errors_cannot_be_printed_is_an_errored_case(
    tmp_path: Path, agent: str, check: str, message: str
) -> None:
    (tmp_path / "agents.py").write_text(AGENTS)
    (tmp_path / "suite.yaml").write_text(AGENT_SUITE.format(agent=agent, check=check))
    (tmp_path / "cases.jsonl").write_text(
        "".join(json.dumps({"id": f"book-{n}", "input": {"n": n}}) + "\n" for n in range(4))
    )
    done = cli.run(["run", "suite.yaml", "--db", "sqlite:///r.db", "--json", "o.json"], tmp_path)
    assert done.code == 1, done.out + done.err
    assert "Traceback" not in done.out + done.err
    assert done.seconds < 5, "the case must not wait for its timeout"
    assert "1 errored" in done.out
    assert message in (tmp_path / "o.json").read_text()


def test_what_an_agent_prints_reaches_the_terminal_inert(tmp_path: Path) -> None:
    (tmp_path / "agents.py").write_text(AGENTS)
    (tmp_path / "suite.yaml").write_text(AGENT_SUITE.format(agent="prints_escapes", check="passes"))
    (tmp_path / "cases.jsonl").write_text('{"id": "book-0", "input": {"n": 0}}\n')
    done = cli.run(["run", "suite.yaml", "--db", "sqlite:///r.db"], tmp_path)
    assert done.code == 0, done.out + done.err
    assert "\x1b" not in done.out + done.err
    assert "\\x1b]0;owned\\x07\\x1b[2Jthinking..." in done.out
    assert "\\x1b]8;;https://evil.test\\x1b" in done.err


@pytest.mark.parametrize(
    ("command", "code"),
    [(["run", "suite.yaml", "--json", "o.json"], 0), (["show", "latest", "--json", "o.json"], 0)],
)
def test_a_reader_that_went_away_changes_neither_the_exit_code_nor_the_files(
    tmp_path: Path, command: list[str], code: int
) -> None:
    # `checkweigh run ... | head -1`: click turned the closed pipe into exit 1, "a gate failed"
    write_suite(tmp_path, standard_cases())
    db = ["--db", "sqlite:///r.db"]
    assert cli.run(["run", "suite.yaml", "-q", *db], tmp_path).code == 0
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line: every write is EPIPE
    proc = subprocess.run(
        [sys.executable, "-c", cli.ENTRY, *command, *db],
        cwd=tmp_path,
        stdout=write,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
    )
    os.close(write)
    assert proc.returncode == code, proc.stderr
    assert proc.stderr.strip() == ""
    assert json.loads((tmp_path / "o.json").read_text())


SLOW_CHECK = """\
import time
from pathlib import Path

OK = {"trace": [{"kind": "assistant", "content": "Booked at 10:00."}],
      "final_state": {"time": "10:00"}}


def ok(request):
    return OK


def slow(case):
    # a synchronous check that takes a while (a local model, a big diff): it holds the loop
    Path(f"started-{case.id}").touch()
    time.sleep(1.5)
    return True
"""


def _slow_run_until(tmp_path: Path, case_id: str) -> tuple[Any, float]:
    """Start a run of four cases with a slow check; return once ``case_id``'s check began."""
    (tmp_path / "agents.py").write_text(SLOW_CHECK)
    (tmp_path / "suite.yaml").write_text(
        AGENT_SUITE.format(agent="ok", check="slow").replace("timeout_s: 5", "timeout_s: 30")
    )
    (tmp_path / "cases.jsonl").write_text(
        "".join(json.dumps({"id": f"book-{n}", "input": {"n": n}}) + "\n" for n in range(4))
    )
    began = time.monotonic()
    proc = cli.start(["run", "suite.yaml", "--db", "sqlite:///r.db", "-q"], tmp_path)
    while not (tmp_path / f"started-{case_id}").exists():
        assert proc.poll() is None
        assert time.monotonic() - began < 30
        time.sleep(0.02)
    return proc, began


def test_a_case_whose_checks_all_answered_is_kept_when_ctrl_c_comes(tmp_path: Path) -> None:
    # book-0's checks have all answered when book-1's slow check starts; a Ctrl-C then used to
    # cancel book-0 at its last await and the run kept 0 of its 2 finished executions
    proc, began = _slow_run_until(tmp_path, "book-1")
    proc.send_signal(signal.SIGINT)
    done = cli.finish(proc, began)
    assert done.code == 130, done.out + done.err
    assert "Traceback" not in done.err
    assert done.kept() == cli.stored(tmp_path / "r.db") == 2


def test_a_closed_terminal_stops_the_run_like_ctrl_c(tmp_path: Path) -> None:
    # SIGHUP (the terminal or SSH session closed) killed the process like kill -9: no report,
    # no exit code of the table, and a run left for the next command to find abandoned
    proc, began = _slow_run_until(tmp_path, "book-0")
    proc.send_signal(signal.SIGHUP)
    done = cli.finish(proc, began)
    assert done.code == 130, done.out + done.err
    assert done.kept() == cli.stored(tmp_path / "r.db")
    assert cli.run_row(tmp_path / "r.db")[0] == "incomplete"


@pytest.mark.parametrize(
    "agent",
    [
        # the relative database path then pointed elsewhere: "the database file was deleted or
        # replaced", exit 2, and the JSON report written into the agent's folder
        "changes_folder",
        # the report's first write failed with EBADF: an internal error (exit 3), no JSON
        "closes_stdout",
    ],
)
def test_an_agent_that_changes_the_process_keeps_the_run_and_its_files(
    tmp_path: Path, agent: str
) -> None:
    (tmp_path / "agents.py").write_text(AGENTS)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "suite.yaml").write_text(AGENT_SUITE.format(agent=agent, check="passes"))
    (tmp_path / "cases.jsonl").write_text(
        "".join(json.dumps({"id": f"book-{n}", "input": {"n": n}}) + "\n" for n in range(4))
    )
    done = cli.run(["run", "suite.yaml", "--db", "sqlite:///r.db", "--json", "o.json"], tmp_path)
    assert done.code == 0, done.out + done.err
    assert "error" not in done.err
    assert cli.stored(tmp_path / "r.db") == 4
    assert json.loads((tmp_path / "o.json").read_text())["run"]["executions"] == 4
    assert list((tmp_path / "elsewhere").iterdir()) == []


# Ctrl-C on the third result written: outside a run, a signal ends the process at once
_INTERRUPT_THE_EXPORT = """\
import os, signal
from checkweigh.core import ResultRecord
_record = ResultRecord.of
_count = [0]
def _of(result):
    _count[0] += 1
    if _count[0] == 3:
        os.kill(os.getpid(), signal.SIGINT)
    return _record(result)
ResultRecord.of = staticmethod(_of)
"""


def test_ctrl_c_while_show_writes_the_json_report_leaves_the_previous_file(
    tmp_path: Path,
) -> None:
    # the report was written in place: a CI step then read a truncated eval.json
    write_suite(tmp_path, standard_cases())
    db = ["--db", "sqlite:///r.db"]
    assert cli.run(["run", "suite.yaml", "-q", *db, "--json", "eval.json"], tmp_path).code == 0
    before = (tmp_path / "eval.json").read_text()
    done = cli.run(
        ["show", "latest", *db, "--json", "eval.json"], tmp_path, prelude=_INTERRUPT_THE_EXPORT
    )
    assert done.code == 130, done.out + done.err
    assert "Traceback" not in done.err
    assert (tmp_path / "eval.json").read_text() == before
    assert json.loads(before)["run"]["executions"] == 6


@pytest.mark.parametrize(
    ("agent", "code", "summary"),
    [
        # called in a thread as if sync: every case errored "agent returned coroutine", with
        # the interpreter's two-line "never awaited" warning per case on stderr
        ("agent_object", 0, "4 execution(s) of 4 case(s); 0 errored"),
        ("returns_a_coroutine", 1, "4 errored (4 agent error(s))"),
    ],
)
def test_an_agent_object_with_an_async_call_is_awaited(
    tmp_path: Path, agent: str, code: int, summary: str
) -> None:
    (tmp_path / "agents.py").write_text(AGENTS)
    (tmp_path / "suite.yaml").write_text(AGENT_SUITE.format(agent=agent, check="passes"))
    (tmp_path / "cases.jsonl").write_text(
        "".join(json.dumps({"id": f"book-{n}", "input": {"n": n}}) + "\n" for n in range(4))
    )
    done = cli.run(["run", "suite.yaml", "--db", "sqlite:///r.db"], tmp_path)
    assert done.code == code, done.out + done.err
    assert summary in done.out
    assert done.err.strip() == "", done.err


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        # both said "RUN:", an argument compare does not have
        (["compare", "previous", "latest"], "BASE: no run 'previous' in sqlite:///r.db"),
        (["compare", "latest", "nope"], "CANDIDATE: no run 'nope' in sqlite:///r.db"),
    ],
)
def test_a_missing_run_in_compare_names_its_argument(
    tmp_path: Path, args: list[str], expected: str
) -> None:
    write_suite(tmp_path, standard_cases())
    db = ["--db", "sqlite:///r.db"]
    assert cli.run(["run", "suite.yaml", "-q", *db], tmp_path).code == 0
    assert _one_error_line(cli.run([*args, *db], tmp_path)) == f"error: {expected}"


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///", "sqlite:///:memory:"])
def test_a_run_into_an_in_memory_database_is_refused(tmp_path: Path, url: str) -> None:
    # sqlite:///$DB with $DB unset: the run printed "stored in sqlite:///" and was gone
    write_suite(tmp_path, standard_cases())
    done = cli.run(["run", "suite.yaml", "--db", url, "--json", "o.json"], tmp_path)
    assert _one_error_line(done) == (
        f"error: --db: {url!r} is an in-memory database: the run would be lost when the "
        "command ends; give a file, e.g. sqlite:///results.db"
    )
    assert not (tmp_path / "o.json").exists()
