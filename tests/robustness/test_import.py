"""A catalogue of bad logs, mappings and flags for ``checkweigh import`` and for suites that
read logs, each run through the real CLI in a subprocess.

A bad input ends with exit 2 and exactly one line on stderr that names the file (and line)
and what was expected, no traceback, and no cases file (an existing one is left as it was).
Under ``--on-bad-record skip`` the import exits 0, every good record is written and the
counts and reasons of the skipped ones are printed.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from checkweigh.importers import format_names
from support.cli_process import run_cli
from support.importing import FIXTURES

AIRLINE = (FIXTURES / "openai_airline.jsonl").read_text(encoding="utf-8").splitlines()
GOOD = json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}])
DEEP = 100_000
FORMATS = ", ".join(format_names())
OLD_OUT = '{"id": "kept", "trace": []}\n'


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd)


def _lines(*lines: str) -> bytes:
    return "".join(line + "\n" for line in lines).encode()


@dataclass(frozen=True)
class Bad:
    """``checkweigh import FORMAT log... --out out.jsonl`` on files with one thing wrong."""

    id: str
    fmt: str
    files: dict[str, bytes]
    """File name (in the test's folder) -> its bytes; the first is the log read."""
    error: str
    """The whole error line after ``error: ``, with ``{dir}`` for the test's folder."""
    extra: tuple[str, ...] = ()
    logs: tuple[str, ...] | None = None
    """The log arguments (default: the first file)."""


BAD = [
    Bad(
        "truncated-last-line",
        "openai",
        {"log.jsonl": _lines(AIRLINE[0], AIRLINE[1], AIRLINE[2][:300])},
        "{dir}/log.jsonl:3: invalid JSON: EOF while parsing a string at column 300 "
        "(the record is cut short)",
    ),
    Bad(
        "not-json",
        "openai",
        {"log.json": b"Traceback (most recent call last):\n  oops\n"},
        "{dir}/log.json:1: invalid JSON: expected value at column 1",
    ),
    Bad(
        "not-json-later-line-of-a-document",
        "anthropic",
        {"log.json": b'[\n  {"messages": []},\n  {"messages": [}\n]\n'},
        "{dir}/log.json:3: invalid JSON: expected value at column 17",
    ),
    Bad(
        "openai-wrong-shape",
        "openai",
        {"log.jsonl": _lines('{"prompt": "hi", "completion": "hello"}')},
        "{dir}/log.jsonl:1: expected a list of messages or an object with 'messages', got an "
        "object",
    ),
    Bad(
        "responses-wrong-shape",
        "openai-responses",
        {"log.jsonl": _lines(AIRLINE[0])},
        "{dir}/log.jsonl:1: expected a list of items, an object with 'input' / 'output', or one "
        "with 'request' and 'response', got an object",
    ),
    Bad(
        "anthropic-wrong-shape",
        "anthropic",
        {"log.jsonl": _lines('"just text"')},
        "{dir}/log.jsonl:1: expected a list of messages or an object with 'messages', got the "
        "text 'just text'",
    ),
    Bad(
        "mapping-wrong-shape",
        "mapping",
        {"log.jsonl": _lines("[1, 2]"), "m.yaml": b"messages: turns\n"},
        "{dir}/log.jsonl:1: expected a record (an object), got a list",
        extra=("--mapping", "m.yaml"),
    ),
    Bad(
        "unknown-role",
        "openai",
        {"log.jsonl": _lines(GOOD, '[{"role": "customer", "content": "hi"}]')},
        "{dir}/log.jsonl:2: messages[0].role: unknown role 'customer'; expected system, "
        "developer, user, assistant or tool",
    ),
    Bad(
        "tool-call-without-a-name",
        "anthropic",
        {
            "log.jsonl": _lines(
                '[{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "input": {}}]}]'
            )
        },
        "{dir}/log.jsonl:1: messages[0].content[0].name: a tool call without a name (got null)",
    ),
    Bad(
        "repeated-ids",
        "openai",
        {"log.jsonl": _lines(AIRLINE[0], AIRLINE[1], AIRLINE[0])},
        "{dir}/log.jsonl:3: duplicate case id 'airline-cancel-ZFA04Y' (first at {dir}/log.jsonl:1)",
    ),
    Bad(
        "repeated-ids-across-files",
        "openai",
        {"a.jsonl": _lines(AIRLINE[0]), "b.jsonl": _lines(AIRLINE[0])},
        "{dir}/b.jsonl:1: duplicate case id 'airline-cancel-ZFA04Y' (first at {dir}/a.jsonl:1)",
        logs=("a.jsonl", "b.jsonl"),
    ),
    Bad(
        "empty-file",
        "openai",
        {"log.jsonl": b""},
        "FILE: the log files hold no records; nothing written",
    ),
    Bad(
        "blank-json-document",
        "anthropic",
        {"log.json": b"  \n\n"},
        "FILE: the log files hold no records; nothing written",
    ),
    Bad(
        "huge-nesting",
        "openai",
        {"log.jsonl": _lines(GOOD, "[" * DEEP + "]" * DEEP)},
        "{dir}/log.jsonl:2: invalid JSON: recursion limit exceeded at column 202",
    ),
    Bad(
        "not-utf8-line",
        "openai",
        {"log.jsonl": _lines(GOOD) + b'[{"role": "user", "content": "caf\xe9"}]\n'},
        "{dir}/log.jsonl:2: not UTF-8 text: byte 0xe9 at column 34; expected UTF-8",
    ),
    Bad(
        "utf16-document",
        "openai",
        {"log.json": GOOD.encode("utf-16")},
        "{dir}/log.json:1: not UTF-8 text: byte 0xff at column 1; expected UTF-8",
    ),
    Bad(
        "folder-instead-of-file",
        "openai",
        {"logs/a.jsonl": _lines(GOOD)},
        "{dir}/logs: is a folder; expected a log file",
        logs=("logs",),
    ),
    Bad(
        "missing-file",
        "openai",
        {"log.jsonl": _lines(GOOD)},
        "{dir}/nope.jsonl: log file not found",
        logs=("nope.jsonl",),
    ),
    Bad(
        "unknown-format",
        "gemini",
        {"log.jsonl": _lines(GOOD)},
        f"FORMAT: unknown log format 'gemini'; expected one of {FORMATS}",
    ),
    Bad(
        "bad-mapping-field-value",
        "mapping",
        {"log.jsonl": _lines('{"t": []}'), "m.yaml": b"messages: t\nmessages_format: gemini\n"},
        "{dir}/m.yaml:2: messages_format: expected 'openai', 'openai-responses' or 'anthropic', "
        "got 'gemini'",
        extra=("--mapping", "{dir}/m.yaml"),
    ),
    Bad(
        "bad-mapping-unknown-key",
        "mapping",
        {"log.jsonl": _lines('{"t": []}'), "m.yaml": b"id: sid\nmesages: t\n"},
        "{dir}/m.yaml:2: mesages: unknown key 'mesages'; did you mean 'messages'?",
        extra=("--mapping", "{dir}/m.yaml"),
    ),
    Bad(
        "bad-mapping-path",
        "mapping",
        {"log.jsonl": _lines('{"t": []}'), "m.yaml": b"messages: t[x\n"},
        "{dir}/m.yaml:1: messages: malformed field path 't[x' at position 1: "
        "expected a closing ']'",
        extra=("--mapping", "{dir}/m.yaml"),
    ),
    Bad(
        "mapping-not-a-mapping",
        "mapping",
        {"log.jsonl": _lines('{"t": []}'), "m.yaml": b"- messages\n"},
        "{dir}/m.yaml:1: expected a mapping of case fields to paths, e.g. messages: turns",
        extra=("--mapping", "{dir}/m.yaml"),
    ),
    Bad(
        "mapping-path-missing-in-a-record",
        "mapping",
        {"log.jsonl": _lines('{"t": []}', '{"u": []}'), "m.yaml": b"messages: t\n"},
        "{dir}/log.jsonl:2: messages: no value at 't' (mapping.messages)",
        extra=("--mapping", "{dir}/m.yaml"),
    ),
    Bad(
        "mapping-format-without-mapping",
        "mapping",
        {"log.jsonl": _lines('{"t": []}')},
        "--mapping: the mapping format needs --mapping MAPPING.yaml (where each record keeps the "
        "case: id, messages, final_state...)",
    ),
    Bad(
        "mapping-for-another-format",
        "openai",
        {"log.jsonl": _lines(GOOD), "m.yaml": b"messages: t\n"},
        "--mapping: --mapping applies to the mapping format, not openai",
        extra=("--mapping", "m.yaml"),
    ),
    Bad(
        "out-is-not-jsonl",
        "openai",
        {"log.jsonl": _lines(GOOD)},
        "--out: expected a .jsonl file name (checkweigh run reads cases from JSONL), got "
        "'cases.json'",
        extra=("--out", "cases.json"),
    ),
    Bad(
        "out-is-the-log",
        "openai",
        {"log.jsonl": _lines(GOOD)},
        "--out: cannot write log.jsonl: it is the log file {dir}/log.jsonl; give another file name",
        extra=("--out", "log.jsonl"),
    ),
    Bad(
        "bad-on-bad-record-value",
        "openai",
        {"log.jsonl": _lines(GOOD)},
        "--on-bad-record: expected skip or fail, got 'sometimes'",
        extra=("--on-bad-record", "sometimes"),
    ),
]


@pytest.mark.parametrize("bad", BAD, ids=[b.id for b in BAD])
def test_a_bad_log_is_one_line_and_writes_nothing(tmp_path: Path, bad: Bad) -> None:
    for name, data in bad.files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    out = tmp_path / "out.jsonl"
    out.write_text(OLD_OUT)
    logs = bad.logs if bad.logs is not None else (next(iter(bad.files)),)
    extra = tuple(a.replace("{dir}", str(tmp_path)) for a in bad.extra)
    if "--out" not in extra:
        extra += ("--out", str(out))
    proc = _cli("import", bad.fmt, *(str(tmp_path / f) for f in logs), *extra, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == ["error: " + bad.error.replace("{dir}", str(tmp_path))]
    assert proc.stdout == ""
    assert out.read_text() == OLD_OUT, "a failed import leaves the old cases file as it was"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


@dataclass(frozen=True)
class Skipped:
    """The same kinds of bad records under ``--on-bad-record skip``."""

    id: str
    fmt: str
    lines: list[str]
    ids: list[str]
    """The ids written, in order."""
    reasons: list[str] = field(default_factory=list)
    """Each skipped record's line, as printed (``{log}`` for the log's path)."""


SKIPPED = [
    Skipped(
        "truncated-last-line",
        "openai",
        [AIRLINE[0], AIRLINE[1], AIRLINE[2][:120]],
        ["airline-cancel-ZFA04Y", "airline-change-NO6JO3"],
        [
            "{log}:3: invalid JSON: EOF while parsing a string at column 120 (the record is cut "
            "short)"
        ],
    ),
    Skipped(
        "missing-ids-get-file-and-line",
        "openai",
        [GOOD, "", GOOD],
        ["log-1", "log-3"],
    ),
    Skipped(
        "one-of-each",
        "openai",
        [
            GOOD,
            '{"messages": [{"role": "robot", "content": "beep"}]}',
            AIRLINE[1],
            AIRLINE[1],
            "[" * DEEP + "]" * DEEP,
            "{not json",
            GOOD,
        ],
        ["log-1", "airline-change-NO6JO3", "log-7"],
        [
            "{log}:2: messages[0].role: unknown role 'robot'; expected system, developer, user, "
            "assistant or tool",
            "{log}:4: duplicate case id 'airline-change-NO6JO3' (first at {log}:3)",
            "{log}:5: invalid JSON: recursion limit exceeded at column 202",
            "{log}:6: invalid JSON: key must be a string at column 2",
        ],
    ),
]


@pytest.mark.parametrize("case", SKIPPED, ids=[s.id for s in SKIPPED])
def test_under_skip_every_good_record_is_written_and_the_bad_ones_counted(
    tmp_path: Path, case: Skipped
) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text("".join(line + "\n" for line in case.lines))
    out = tmp_path / "cases" / "out.jsonl"
    proc = _cli(
        "import", case.fmt, str(log), "--out", str(out), "--on-bad-record", "skip", cwd=tmp_path
    )
    assert (proc.returncode, proc.stderr) == (0, ""), proc.stdout
    records = sum(1 for line in case.lines if line.strip())
    expected = [f"read {records} record(s) from 1 file(s); wrote {len(case.ids)} case(s) to {out}"]
    if case.reasons:
        expected.append(f"skipped {len(case.reasons)} bad record(s):")
        expected += ["  " + r.replace("{log}", str(log)) for r in case.reasons]
    assert proc.stdout.splitlines() == expected
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == case.ids


def test_more_than_ten_skipped_records_are_summarised(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(GOOD + "\n" + "[1]\n" * 25)
    proc = _cli(
        "import", "openai", str(log), "-o", "out.jsonl", "--on-bad-record", "skip", cwd=tmp_path
    )
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert lines[0] == "read 26 record(s) from 1 file(s); wrote 1 case(s) to out.jsonl"
    assert lines[1] == "skipped 25 bad record(s):"
    assert lines[2] == f"  {log}:2: messages[0]: expected a message (an object), got the number 1"
    assert len(lines) == 13
    assert lines[-1] == "  ... and 15 more"


def test_every_record_bad_under_skip_writes_nothing(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text('{"x": 1}\n{"x": 2}\n')
    proc = _cli(
        "import", "openai", str(log), "-o", "out.jsonl", "--on-bad-record", "skip", cwd=tmp_path
    )
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"error: FILE: no case: all 2 record(s) were bad (first: {log}:1: expected a list of "
        "messages or an object with 'messages', got an object); nothing written"
    ]
    assert not (tmp_path / "out.jsonl").exists()


SUITE = """\
name: logs
cases: CASES
checks:
  replied:
    type: word_count
    path: output
    min: 1
rubrics:
  main:
    weights: {replied: 1}
"""

SUITES = [
    (
        "{path: log.jsonl, format: gemini}",
        f"suite.yaml:2: cases.format: unknown log format 'gemini'; expected one of {FORMATS}",
    ),
    (
        "{path: log.jsonl, format: mapping}",
        "suite.yaml:2: cases: format: mapping needs 'mapping' (where each record keeps the case)",
    ),
    (
        "{path: log.jsonl, format: openai, mapping: {messages: m}}",
        "suite.yaml:2: cases: 'mapping' applies to format: mapping",
    ),
    (
        "{path: log.jsonl, format: mapping, mapping: {mesages: m}}",
        "suite.yaml:2: cases.mapping.mesages: unknown key 'mesages'; did you mean 'messages'?",
    ),
    (
        "\n  path: log.jsonl\n  format: mapping\n  mapping:\n    messages: m\n    id: '[0]'",
        "suite.yaml:7: cases.mapping.id: malformed field path '[0]' at position 0: expected a name",
    ),
    (
        "{path: log.jsonl, on_bad_record: skip}",
        "suite.yaml:2: cases: on_bad_record: skip applies to logs read through an importer; "
        "give 'format'",
    ),
    (
        "{path: log.jsonl, format: openai, on_bad_record: sometimes}",
        "suite.yaml:2: cases.on_bad_record: expected 'skip' or 'fail', got 'sometimes'",
    ),
    (
        "{path: gone.jsonl, format: openai}",
        "suite.yaml:2: cases.path: log file not found: {dir}/gone.jsonl",
    ),
    ("{format: openai}", "suite.yaml:2: cases.path: required field is missing"),
    (
        "{path: logs, format: anthropic}",
        "suite.yaml:2: cases.path: {dir}/logs is a folder; expected a log file",
    ),
    (
        "{path: log.jsonl, format: openai, on_bad_record: fail}",
        "{dir}/log.jsonl:2: messages[0].role: unknown role 'robot'; expected system, developer, "
        "user, assistant or tool",
    ),
]


@pytest.mark.parametrize(
    ("cases", "error"), SUITES, ids=[e.split(": ", 1)[1][:50] for _, e in SUITES]
)
def test_a_bad_cases_source_in_a_suite_is_one_line(tmp_path: Path, cases: str, error: str) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "log.jsonl").write_text(GOOD + '\n[{"role": "robot"}]\n')
    (tmp_path / "suite.yaml").write_text(SUITE.replace("CASES", cases))
    db = tmp_path / "r.db"
    proc = _cli("run", "suite.yaml", "--db", f"sqlite:///{db}", "-q", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == ["error: " + error.replace("{dir}", str(tmp_path))]
    assert not db.exists(), "a suite whose cases cannot be read stores nothing"
