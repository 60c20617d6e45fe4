"""A catalogue of hostile and mistaken inputs, each run through the real ``checkweigh`` CLI.

Every row is a realistic bad suite, cases file, labels file or flag. Each must end with exit 2,
exactly one line on stderr (``error: FILE[:LINE]: [FIELD: ]what was expected``), no traceback,
no raw control character from the file on the terminal, and nothing in the database. The
controls at the end are unusual but valid files that must run.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from checkweigh.store import Store
from support.recorded_suite import standard_cases, write_suite

BOMB = """\
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""
"""The classic "billion laughs": 9**9 strings from a few hundred bytes."""

DEEP = 100_000
BIG_INT = "9" * 5000


def _case_line(index: int = 0) -> str:
    return json.dumps(standard_cases()[index])


def _jsonl(*lines: str) -> bytes:
    return "".join(line + "\n" for line in lines).encode()


def _replace(old: str, new: str, count: int = 1) -> Callable[[str], str]:
    def edit(text: str) -> str:
        assert old in text, old
        return text.replace(old, new, count)

    return edit


def _prepend(head: str) -> Callable[[str], str]:
    return lambda text: head + text


@dataclass(frozen=True)
class Bad:
    """A suite folder made from the standard recorded suite, with one thing wrong."""

    id: str
    where: str
    """The start of the error line after ``error: <folder>/``: the file and its line."""
    message: str
    """A fragment of the rest of the line: the field and what was expected."""
    suite: Callable[[str], str] | bytes | None = None
    """An edit of the suite's text, or the suite file's bytes."""
    cases: bytes | None = None
    """The cases file's bytes (default: the standard cases as JSONL)."""
    cases_name: str = "cases.jsonl"


SUITES = [
    # resource bombs
    Bad("alias-bomb", "suite.yaml:6", "invalid YAML: aliases expand to more than", BOMB.encode()),
    Bad(
        "alias-into-itself",
        "suite.yaml:1",
        "alias *a is used inside its own anchor",
        b"name: &a [x, *a]\n",
    ),
    Bad(
        "flow-nesting-100k",
        "suite.yaml:1",
        "invalid YAML: nested more than 100 levels deep",
        b"name: " + b"[" * DEEP + b"]" * DEEP + b"\n",
    ),
    Bad(
        "block-nesting-3000",
        "suite.yaml:101",
        "invalid YAML: nested more than 100 levels deep",
        "".join("  " * i + "-\n" for i in range(3000)).encode(),
    ),
    Bad(
        "compact-block-nesting-100k",
        "suite.yaml:1",
        "invalid YAML: nested more than 100 levels deep",
        ("- " * DEEP + "x\n").encode(),
    ),
    Bad(
        "5000-digit-integer",
        "suite.yaml:20",
        "invalid YAML: a number with 5000 digits; expected at most 4300",
        _replace("min: 5", f"min: {BIG_INT}"),
    ),
    Bad(
        "base-60-integer-bomb",
        "suite.yaml:20",
        "expected at most 4300",
        _replace("min: 5", "min: 1" + ":59" * 3000),
    ),
    Bad(
        "file-over-16-MiB",
        "suite.yaml: is larger than 16 MiB",
        "expected a suite file",
        lambda text: text + "#" + "x" * (17 * 2**20) + "\n",
    ),
    # encodings
    Bad(
        "latin-1-suite",
        "suite.yaml:2",
        "not UTF-8 text: byte 0xe9 at column 15 (invalid continuation byte)",
        lambda text: text.replace("recorded", "r\xe9corded").encode("latin-1"),
    ),
    Bad(
        "utf-16-suite",
        "suite.yaml:1",
        "the file is UTF-16 text; expected UTF-8",
        lambda text: text.encode("utf-16"),
    ),
    Bad(
        "binary-suite",
        "suite.yaml:1",
        "not UTF-8 text: byte 0x80 at column 1",
        bytes(range(128, 256)) * 8,
    ),
    Bad(
        "nul-byte",
        "suite.yaml:2",
        "unacceptable character #x0000",
        lambda text: text.replace("recorded", "rec\x00orded").encode(),
    ),
    Bad(
        "escape-sequence-in-value",
        "suite.yaml:2",
        "unacceptable character #x001b",
        lambda text: text.replace("recorded", "\x1b]0;pwned\x07").encode(),
    ),
    # keys as written, with a suggestion
    Bad(
        "dashed-threshold-key",
        "suite.yaml:29",
        "thresholds.pass-threshold: unknown key 'pass-threshold'; did you mean 'pass_threshold'?",
        _replace("metrics_pass_threshold", "pass-threshold"),
    ),
    Bad(
        "dashed-top-level-key",
        "suite.yaml:1",
        "check-list: unknown key 'check-list'; did you mean 'checks'?",
        _prepend("check-list: [a]\n"),
    ),
    Bad(
        "bracketed-top-level-key",
        "suite.yaml:4",
        "['checks[0]']: unknown key 'checks[0]'; did you mean 'checks'?",
        _replace("cases: cases.jsonl\n", "cases: cases.jsonl\nchecks[0]: x\n"),
    ),
    Bad(
        "dashed-key-in-check",
        "suite.yaml:8",
        "checks.correct_participants.expected-path: unknown key 'expected-path'; "
        "did you mean 'expected_path'?",
        _replace("expected_path: ground_truth.participants", "expected-path: x"),
    ),
    Bad(
        "capitalised-key-in-gate",
        "suite.yaml:32",
        "gates[0].Min: unknown key 'Min'; did you mean 'min'?",
        _replace("min: 0.5", "Min: 0.5"),
    ),
    Bad(
        "integer-check-name",
        "suite.yaml:9",
        "checks: expected text keys, got the key 1",
        _replace("  correct_time:\n    type: equals", "  1:\n    type: equals"),
    ),
    Bad(
        "null-top-level-key",
        "suite.yaml:1",
        "expected text keys, got the key None",
        _prepend("~: 1\n"),
    ),
    Bad(
        "list-as-key",
        "suite.yaml:1",
        "invalid YAML: a list or mapping used as a key; expected text keys",
        _prepend("? [a, b]\n: 1\n"),
    ),
    Bad(
        "escape-in-key",
        "suite.yaml:2",
        "unknown key 'desc\\x1b[2J'",
        _replace("description:", '"desc\\e[2J":'),
    ),
    Bad(
        "terminal-link-in-weight-name",
        "suite.yaml:27",
        "unknown check 'clear\\x1b]8;;https://evil.test\\x1b\\\\'",
        _replace("clear_explanation: 0.2", '"clear\\e]8;;https://evil.test\\e\\\\": 0.2'),
    ),
    Bad(
        "markup-check-type",
        "suite.yaml:14",
        "checks.checked_first.type: unknown check type '[/]'; expected one of",
        _replace("type: before", "type: '[/]'"),
    ),
    Bad(
        "markup-rubric-in-gate",
        "suite.yaml:32",
        "gates[0].rubric: unknown rubric '[bold red]x[/]'; the suite defines: completion",
        _replace("rubric: completion, metric", "rubric: '[bold red]x[/]', metric"),
    ),
    Bad(
        "100k-character-key",
        "suite.yaml:1",
        "unknown key 'qqqqqqqqqq",
        _prepend("? " + "q" * 100_000 + "\n: 1\n"),
    ),
    # YAML structure
    Bad(
        "empty-file", "suite.yaml:", "expected a mapping with name, cases, checks and rubrics", b""
    ),
    Bad(
        "comment-only",
        "suite.yaml:",
        "expected a mapping with name, cases, checks and rubrics",
        b"# todo\n",
    ),
    Bad(
        "scalar-document",
        "suite.yaml:1",
        "expected a mapping with name, cases, checks and rubrics",
        b"bookings\n",
    ),
    Bad("list-document", "suite.yaml:1", "expected a mapping with name", b"- name: bookings\n"),
    Bad(
        "two-documents",
        "suite.yaml:3",
        "expected a single document in the stream, but found another document",
        lambda text: text + "---\nname: again\n",
    ),
    Bad(
        "duplicate-key",
        "suite.yaml:4",
        "invalid YAML: duplicate key 'name'",
        _replace("cases: cases.jsonl\n", "cases: cases.jsonl\nname: again\n"),
    ),
    Bad(
        "tab-indentation",
        "suite.yaml:10",
        "invalid YAML: found character '\\t' that cannot start any token",
        _replace("  correct_time:\n    type", "  correct_time:\n\ttype"),
    ),
    Bad(
        "undefined-alias",
        "suite.yaml:20",
        "found undefined alias 'nope'",
        _replace("min: 5", "min: *nope"),
    ),
    Bad(
        "merge-with-a-scalar",
        "suite.yaml:20",
        "expected a mapping or list of mappings for merging",
        _replace("    min: 5", "    <<: 5\n    min: 5"),
    ),
    Bad(
        "error-inside-merged-mapping",
        "suite.yaml:4",
        "rubrics.completion.weights.correct_time.weight: expected a number, got 'high'",
        lambda text: text.replace(
            "checks:\n", "x-weights: &w {weight: high, required: true}\nchecks:\n"
        ).replace("correct_time: {weight: 0.3, required: true}", "correct_time: {<<: *w}"),
    ),
    Bad(
        "python-object-tag",
        "suite.yaml:1",
        "could not determine a constructor for the tag "
        "'tag:yaml.org,2002:python/object/apply:os.system'",
        _replace("name: bookings", "name: !!python/object/apply:os.system [ls]"),
    ),
    Bad(
        "impossible-date",
        "suite.yaml:1",
        "cannot read '2024-13-45': month must be in 1..12",
        _replace("name: bookings", "name: 2024-13-45"),
    ),
    Bad(
        "date-where-text-expected",
        "suite.yaml:1",
        "name: expected text, got datetime.date(2024, 1, 5)",
        _replace("name: bookings", "name: 2024-01-05"),
    ),
    Bad(
        "infinite-weight",
        "suite.yaml:27",
        "rubrics.completion.weights.clear_explanation.weight: expected a finite number, got inf",
        _replace("clear_explanation: 0.2", "clear_explanation: .inf"),
    ),
    Bad(
        "bom-in-the-middle",
        "suite.yaml:2",
        "['\\ufeffdescription']: unknown key '\\ufeffdescription'; did you mean 'description'?",
        _replace("description:", "\ufeffdescription:"),
    ),
    Bad(
        "right-to-left-override-in-rubric-name",
        "suite.yaml:32",
        "gates[0].rubric: unknown rubric 'completion'; the suite defines: comp\\u202eletion",
        _replace("  completion:\n", '  "comp\\u202eletion":\n'),
    ),
    Bad(
        "set-where-text-expected",
        "suite.yaml:1",
        "name: expected text, got {",
        _replace("name: bookings", "name: !!set {a, b}"),
    ),
    Bad(
        "nul-in-agent-module",
        "suite.yaml:4",
        "target.agent: cannot import module 'a\\x00b'",
        _replace("cases: cases.jsonl", 'cases: cases.jsonl\ntarget: {agent: "a\\0b:run"}'),
    ),
    Bad(
        "malformed-path-in-when",
        "suite.yaml:21",
        "checks.clear_explanation.when.path: malformed field path 'a['",
        _replace("    min: 5", "    min: 5\n    when: {path: 'a[', equals: 1}"),
    ),
    Bad(
        "unterminated-regex",
        "suite.yaml:17",
        "checks.clear_explanation: invalid regular expression '(('",
        _replace(
            "type: word_count\n    path: output\n    min: 5",
            "type: regex\n    path: output\n    pattern: '(('",
        ),
    ),
    Bad(
        "cases-is-a-number",
        "suite.yaml:3",
        "cases: expected text, got 5",
        _replace("cases: cases.jsonl", "cases: 5"),
    ),
    Bad(
        "nul-in-cases-path",
        "suite.yaml:3",
        "cases: unusable path 'a\\x00b.jsonl': embedded null byte",
        _replace("cases: cases.jsonl", 'cases: "a\\0b.jsonl"'),
    ),
    Bad(
        "cases-path-too-long",
        "suite.yaml:3",
        "cases: unusable path 'aaaa",
        _replace("cases: cases.jsonl", "cases: " + "a" * 5000 + ".jsonl"),
    ),
    Bad(
        "rubrics-as-a-list",
        "suite.yaml:21",
        "rubrics: expected a mapping, got [{'completion'",
        _replace("rubrics:\n  completion:", "rubrics:\n  - completion:"),
    ),
    Bad(
        "check-without-a-body",
        "suite.yaml:13",
        "checks.checked_first: expected a mapping, got None",
        _replace(
            "  checked_first:\n    type: before\n    first: check_availability\n"
            "    then: book_meeting\n",
            "  checked_first:\n",
        ),
    ),
    Bad(
        "empty-weights",
        "suite.yaml:23",
        "rubrics.completion.weights: expected at least 1 entry, got 0",
        lambda text: re.sub(r"    weights:\n(      .*\n)+", "    weights: {}\n", text),
    ),
    Bad(
        "threshold-over-100",
        "suite.yaml:29",
        "thresholds.metrics_pass_threshold: input should be less than or equal to 100, got 200",
        _replace("metrics_pass_threshold: 50.0", "metrics_pass_threshold: 200"),
    ),
    Bad(
        "markup-gate-metric",
        "suite.yaml:32",
        "gates[0].metric: expected 'tcr', 'tcr_lower', 'check_pass_rate', 'outcome_rate', "
        "'errored_executions', 'pass_at_k', 'pass_hat_k', 'flaky_rate' or "
        "'calibrated_pass_rate', got '[/]tcr'",
        _replace("metric: tcr", "metric: '[/]tcr'"),
    ),
    # the cases file the suite points at
    Bad(
        "cases-path-is-a-folder",
        "suite.yaml:3",
        "cases: ",
        _replace("cases: cases.jsonl", "cases: ."),
    ),
    Bad(
        "cases-path-is-a-device",
        "suite.yaml:3",
        "cases: not a regular file: /dev/null",
        _replace("cases: cases.jsonl", "cases: /dev/null"),
    ),
    Bad(
        "cases-csv",
        "cases.csv:",
        "unsupported cases file type '.csv'; expected .jsonl, .yaml, .yml or .json",
        cases=b"id\nok-1\n",
        cases_name="cases.csv",
    ),
    Bad(
        "jsonl-nested-100k",
        "cases.jsonl:2",
        "invalid JSON: recursion limit exceeded at column",
        cases=_jsonl(_case_line(), '{"id": "deep", "input": ' + "[" * DEEP + "]" * DEEP + "}"),
    ),
    Bad(
        "jsonl-5000-digit-integer",
        "cases.jsonl:1",
        "invalid JSON: number out of range at column",
        cases=_jsonl('{"id": "big", "input": ' + BIG_INT + "}"),
    ),
    Bad(
        "jsonl-latin-1-line",
        "cases.jsonl:2",
        "not UTF-8 text: byte 0xe9 at column",
        cases=_jsonl(_case_line()).replace(b"}\n", b"}\n", 1)
        + _case_line(1).replace("Alice", "Al\xe9").encode("latin-1")
        + b"\n",
    ),
    Bad(
        "jsonl-utf-16",
        "cases.jsonl:1",
        "the file is UTF-16 text; expected UTF-8",
        cases=(_case_line() + "\n").encode("utf-16"),
    ),
    Bad(
        "jsonl-array-line",
        "cases.jsonl:2",
        "expected a mapping, got [1, 2]",
        cases=_jsonl(_case_line(), "[1, 2]"),
    ),
    Bad(
        "jsonl-truncated-line",
        "cases.jsonl:2",
        "invalid JSON: EOF while parsing a string at column",
        cases=_jsonl(_case_line(), _case_line(1)[:-30]),
    ),
    Bad(
        "jsonl-duplicate-id",
        "cases.jsonl:2",
        "id: duplicate case id 'ok-1'",
        cases=_jsonl(_case_line(), _case_line()),
    ),
    Bad(
        "jsonl-dashed-key",
        "cases.jsonl:1",
        "final-state: unknown key 'final-state'; did you mean 'final_state'?",
        cases=_jsonl('{"id": "a", "final-state": {}}'),
    ),
    Bad(
        "jsonl-missing-id",
        "cases.jsonl:1",
        "id: required field is missing",
        cases=_jsonl('{"input": "Book Alice and Bob at 10"}'),
    ),
    Bad(
        "jsonl-bad-case-on-the-last-line",
        "cases.jsonl:7",
        "trace[0].kind: expected",
        cases=_jsonl(
            *[json.dumps(c) for c in standard_cases()], '{"id": "x", "trace": [{"kind": "robot"}]}'
        ),
    ),
    Bad(
        "json-nested-100k",
        "cases.json:1",
        "invalid JSON: recursion limit exceeded at column",
        cases=b"[" * DEEP + b"]" * DEEP,
        cases_name="cases.json",
    ),
    Bad(
        "json-5000-digit-integer",
        "cases.json:2",
        "invalid JSON: number out of range at column",
        cases=b'[\n{"id": "big", "input": ' + BIG_INT.encode() + b"}]",
        cases_name="cases.json",
    ),
    Bad(
        "json-object-not-list",
        "cases.json:1",
        "expected a list of cases",
        cases=_case_line().encode(),
        cases_name="cases.json",
    ),
    Bad(
        "json-latin-1",
        "cases.json:1",
        "not UTF-8 text: byte 0xe9",
        cases=("[" + _case_line().replace("Alice", "Al\xe9") + "]").encode("latin-1"),
        cases_name="cases.json",
    ),
    Bad(
        "yaml-cases-alias-bomb",
        "cases.yaml:6",
        "invalid YAML: aliases expand to more than",
        cases=BOMB.encode(),
        cases_name="cases.yaml",
    ),
    Bad(
        "yaml-cases-nested-100k",
        "cases.yaml:1",
        "invalid YAML: nested more than 100 levels deep",
        cases=b"- " + b"[" * DEEP + b"]" * DEEP + b"\n",
        cases_name="cases.yaml",
    ),
    Bad(
        "yaml-cases-5000-digit-integer",
        "cases.yaml:2",
        "a number with 5000 digits; expected at most 4300",
        cases=f"- id: big\n  input: {BIG_INT}\n".encode(),
        cases_name="cases.yaml",
    ),
    Bad(
        "yaml-cases-error-in-merged-case",
        "cases.yaml:1",
        "[0].trace: expected a list, got 'none'",
        cases=b"- &base {id: a, trace: none}\n- <<: *base\n  id: b\n",
        cases_name="cases.yaml",
    ),
]


def _cli(*args: str, cwd: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", "from checkweigh.cli import main; main()", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="backslashreplace",
        cwd=cwd,
        timeout=60,
    )
    return proc, time.monotonic() - start


def _assert_one_line(proc: subprocess.CompletedProcess[str], start: str, fragment: str) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    line = lines[0]
    assert len(line) < 2000, "an error quotes at most a short piece of the file"
    assert line.startswith(f"error: {start}"), line
    assert fragment in line, line
    # no control character (ESC, BEL, NUL...) or bidi override from the input reaches the terminal
    assert line.isprintable(), repr(line)
    return line


def _make(folder: Path, bad: Bad) -> Path:
    suite = write_suite(folder, standard_cases())
    if isinstance(bad.suite, bytes):
        suite.write_bytes(bad.suite)
    elif bad.suite is not None:
        edited = bad.suite(suite.read_text(encoding="utf-8"))
        if isinstance(edited, bytes):
            suite.write_bytes(edited)
        else:
            suite.write_text(edited, encoding="utf-8")
    if bad.cases is not None:
        (folder / "cases.jsonl").unlink()
        (folder / bad.cases_name).write_bytes(bad.cases)
        if bad.cases_name != "cases.jsonl":
            text = suite.read_text(encoding="utf-8")
            suite.write_text(text.replace("cases: cases.jsonl", f"cases: {bad.cases_name}"))
    return suite


@pytest.mark.parametrize("bad", SUITES, ids=[b.id for b in SUITES])
def test_a_bad_suite_or_cases_file_is_one_line_and_stores_nothing(tmp_path: Path, bad: Bad) -> None:
    folder = tmp_path / "s"
    suite = _make(folder, bad)
    db = tmp_path / "r.db"
    proc, elapsed = _cli("run", str(suite), "--db", f"sqlite:///{db}", "-q", cwd=tmp_path)
    _assert_one_line(proc, f"{folder}/{bad.where}", bad.message)
    assert not db.exists(), "a suite that fails to load must not create a run"
    assert elapsed < 20, f"{bad.id} took {elapsed:.1f} s"


def test_the_alias_bomb_is_716_bytes_or_less_and_refused_quickly(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    suite = _make(folder, SUITES[0])
    assert len(BOMB.encode()) <= 716
    proc, elapsed = _cli(
        "run", str(suite), "-q", "--db", f"sqlite:///{tmp_path / 'r.db'}", cwd=tmp_path
    )
    _assert_one_line(proc, f"{suite}:6", "is this an alias bomb?")
    # the interpreter's start-up is most of it; the unit test bounds the parse itself
    assert elapsed < 10


@pytest.mark.parametrize(
    ("kind", "path"),
    [("a folder", "folder"), ("a FIFO", "pipe.yaml"), ("a device", "/dev/null")],
)
def test_a_suite_path_that_is_not_a_file(tmp_path: Path, kind: str, path: str) -> None:
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "pipe.yaml")  # opening it would block forever: never opened
    target = path if path.startswith("/") else str(tmp_path / path)
    proc, _ = _cli("run", target, cwd=tmp_path)
    what = "is a folder" if kind == "a folder" else "is not a regular file"
    _assert_one_line(proc, f"{target}: {what}; expected a suite file (YAML)", "")


# (arguments, the whole error line after 'error: ')
FLAGS = [
    (
        ["run", "s.yaml", "--repeat", "0"],
        "--repeat: expected an integer >= 1, got 0 (see 'checkweigh run --help')",
    ),
    (
        ["run", "s.yaml", "--repeat", "x"],
        "--repeat: expected an integer, got 'x' (see 'checkweigh run --help')",
    ),
    (
        ["run", "s.yaml", "--repeat", "2.5"],
        "--repeat: expected an integer, got 2.5 (see 'checkweigh run --help')",
    ),
    (["run", "s.yaml", "--repeat"], "--repeat: expected a value after it"),
    (
        ["run", "s.yaml", "--repeat", "\x1b[2J"],
        "--repeat: expected an integer, got '\\x1b[2J' (see 'checkweigh run --help')",
    ),
    (
        ["run", "s.yaml", "--concurrency", "-1"],
        "--concurrency: expected an integer >= 1, got -1 (see 'checkweigh run --help')",
    ),
    (
        ["run", "s.yaml", "--judge-concurrency", "0"],
        "--judge-concurrency: expected an integer >= 1, got 0 (see 'checkweigh run --help')",
    ),
    (
        ["run", "s.yaml", "--pass-threshold", "high"],
        "--pass-threshold: expected a number, got 'high' (see 'checkweigh run --help')",
    ),
    (["run", "s.yaml", "--bogus"], "no such option --bogus (see 'checkweigh run --help')"),
    (
        ["run", "s.yaml", "--rep", "2"],
        "no such option --rep; did you mean --repeat or --replay? (see 'checkweigh run --help')",
    ),
    (["run"], "SUITE: missing argument (see 'checkweigh run --help')"),
    (
        ["run", "a.yaml", "b.yaml"],
        "got unexpected extra argument(s) (b.yaml) (see 'checkweigh run --help')",
    ),
    (
        ["runs", "--limit", "0"],
        "--limit: expected an integer >= 1, got 0 (see 'checkweigh runs --help')",
    ),
    (["show"], "RUN: missing argument (see 'checkweigh show --help')"),
    (
        ["compare", "a", "b", "--alpha", "x"],
        "--alpha: expected a number, got 'x' (see 'checkweigh compare --help')",
    ),
    (
        ["stability", "latest", "--sims", "0"],
        "--sims: expected an integer >= 1, got 0 (see 'checkweigh stability --help')",
    ),
    (
        ["stability", "latest", "--sims", "2000000"],
        "--sims: expected an integer <= 1000000, got 2000000 (see 'checkweigh stability --help')",
    ),
    (["align"], "RUN: missing argument (see 'checkweigh align --help')"),
    (["labels", "import"], "FILE: missing argument (see 'checkweigh labels import --help')"),
    (["labels", "frob"], "no such command 'frob' (see 'checkweigh labels --help')"),
    (
        ["labels", "export", "out.txt"],
        "FILE: expected a .csv or .jsonl file, got .txt",
    ),
    (["frobnicate"], "no such command 'frobnicate' (see 'checkweigh --help')"),
    (["--bogus"], "no such option --bogus (see 'checkweigh --help')"),
]


@pytest.mark.parametrize(("args", "expected"), FLAGS, ids=[" ".join(a) for a, _ in FLAGS])
def test_a_flag_mistake_is_one_line(tmp_path: Path, args: list[str], expected: str) -> None:
    proc, _ = _cli(*args, cwd=tmp_path)
    line = _assert_one_line(proc, "", expected)
    assert line == f"error: {expected}"
    assert proc.stdout == ""


def test_version(tmp_path: Path) -> None:
    from importlib.metadata import version

    proc, _ = _cli("--version", cwd=tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        0,
        f"checkweigh {version('checkweigh')}\n",
        "",
    )


# (labels file name, its bytes, where, message fragment)
LABELS = [
    (
        "l.csv",
        "case,check,label\nok-1,tone,yes\nok-2,t\xf6ne,no\n".encode("latin-1"),
        "l.csv:3",
        "not UTF-8 text: byte 0xf6 at column 7",
    ),
    (
        "l.jsonl",
        b'{"case": "a", "check": "t", "label": ' + b"[" * DEEP + b"]" * DEEP + b"}\n",
        "l.jsonl:1",
        "invalid JSON: nested too deeply",
    ),
    (
        "l.jsonl",
        b'{"case": ' + BIG_INT.encode() + b', "check": "t", "label": "yes"}\n',
        "l.jsonl:1",
        "invalid JSON: Exceeds the limit (4300 digits)",
    ),
    (
        "l.jsonl",
        b'{"case": "a", "check": "t", "label": "yes", "\\u001b[2J": 1}\n',
        "l.jsonl:1",
        "'\\x1b[2J': unknown key",
    ),
    (
        "l.csv",
        b"case,check,label\nok-1,tone,\x1b[31mmaybe\n",
        "l.csv:2",
        "label: expected yes/no, true/false, 1/0 or pass/fail, got '\\x1b[31mmaybe'",
    ),
    (
        "l.csv",
        "case,check,label\nok-1,tone,yes\n".encode("utf-16"),
        "l.csv:1",
        "the file is UTF-16 text; expected UTF-8",
    ),
]


@pytest.mark.parametrize(
    ("name", "data", "where", "message"), LABELS, ids=[f"{w} {m[:30]}" for _, _, w, m in LABELS]
)
def test_a_bad_labels_file_is_one_line(
    tmp_path: Path, name: str, data: bytes, where: str, message: str
) -> None:
    (tmp_path / name).write_bytes(data)
    proc, _ = _cli("align", "latest", name, "--db", f"sqlite:///{tmp_path / 'r.db'}", cwd=tmp_path)
    _assert_one_line(proc, where, message)


# valid files that are unusual: each must run and store all six cases
CONTROLS = {
    "bom-suite": lambda folder: _rewrite(folder / "suite.yaml", lambda b: b"\xef\xbb\xbf" + b),
    "bom-jsonl": lambda folder: _rewrite(folder / "cases.jsonl", lambda b: b"\xef\xbb\xbf" + b),
    "bom-json-cases": lambda folder: _as_document(folder, "cases.json", b"\xef\xbb\xbf"),
    "bom-yaml-cases": lambda folder: _as_document(folder, "cases.yaml", b"\xef\xbb\xbf"),
    "crlf-jsonl": lambda folder: _rewrite(
        folder / "cases.jsonl", lambda b: b.replace(b"\n", b"\r\n")
    ),
    "merge-keys-and-anchors": lambda folder: _rewrite(
        folder / "suite.yaml",
        lambda b: (
            b.replace(b"checks:\n", b"x-defaults: &w {weight: 0.3, required: true}\nchecks:\n")
            .replace(b"correct_time: {weight: 0.3, required: true}", b"correct_time: {<<: *w}")
            .replace(
                b"checked_first: {weight: 0.1, not_applicable: pass}",
                b"checked_first: {<<: *w, weight: 0.1, required: false, not_applicable: pass}",
            )
        ),
    ),
    "yaml-cases-with-merge-keys": lambda folder: _yaml_cases_with_merges(folder),
}


def _as_document(folder: Path, name: str, prefix: bytes) -> None:
    """The cases as one JSON list (which is also YAML), after ``prefix``."""
    (folder / "cases.jsonl").unlink()
    (folder / name).write_bytes(prefix + json.dumps(standard_cases(), indent=1).encode())
    _rewrite(folder / "suite.yaml", lambda b: b.replace(b"cases.jsonl", name.encode()))


def _rewrite(path: Path, edit: Callable[[bytes], bytes]) -> None:
    path.write_bytes(edit(path.read_bytes()))


def _yaml_cases_with_merges(folder: Path) -> None:
    import yaml

    cases = standard_cases()
    first, rest = cases[0], cases[1:]
    lines = ["- &first " + json.dumps(first)]
    for case in rest:
        body = {k: v for k, v in case.items() if v != first.get(k)}
        lines.append(
            "- <<: *first\n  " + "\n  ".join(f"{k}: {json.dumps(v)}" for k, v in body.items())
        )
    text = "\n".join(lines) + "\n"
    assert yaml.safe_load(text) == cases
    (folder / "cases.jsonl").unlink()
    (folder / "cases.yaml").write_text(text, encoding="utf-8")
    _rewrite(
        folder / "suite.yaml", lambda b: b.replace(b"cases: cases.jsonl", b"cases: cases.yaml")
    )


@pytest.mark.parametrize("name", CONTROLS)
def test_unusual_but_valid_files_run(tmp_path: Path, name: str) -> None:
    folder = tmp_path / "s"
    suite = write_suite(folder, standard_cases())
    CONTROLS[name](folder)
    db = f"sqlite:///{tmp_path / 'r.db'}"
    proc, _ = _cli("run", str(suite), "--db", db, "-q", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    run = Store(db).get_run("latest")
    assert run.executions == 6
    assert [r.case_id for r in Store(db).iter_results(run.id)] == [
        c["id"] for c in standard_cases()
    ]


def test_a_labels_file_with_a_bom_aligns(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "s", standard_cases())
    db = f"sqlite:///{tmp_path / 'r.db'}"
    assert _cli("run", str(suite), "--db", db, "-q", cwd=tmp_path)[0].returncode == 0
    labels = tmp_path / "labels.jsonl"
    rows = [{"case": "ok-1", "check": "correct_time", "label": "yes"}]
    rows.append({"case": "wrong-time", "check": "correct_time", "label": "no"})
    labels.write_bytes(b"\xef\xbb\xbf" + "".join(json.dumps(r) + "\n" for r in rows).encode())
    out = tmp_path / "align.json"
    proc, _ = _cli("align", "latest", str(labels), "--db", db, "--json", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "No disagreements." in proc.stdout
    assert json.loads(out.read_text(encoding="utf-8"))["labels"] == str(labels)
