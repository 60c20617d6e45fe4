"""A catalogue of mistaken wildcard paths, filters and conversation-check options, each run
through the real ``checkweigh`` CLI on the airline suite.

Every row must end with exit 2, exactly one line on stderr naming the suite file, the line and
the field, no traceback, and no database created. The controls at the end are unusual but
valid paths that must run.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from support.airline_suite import SUITE, write_airline_suite


@dataclass(frozen=True)
class Bad:
    """The airline suite with one edit."""

    id: str
    old: str
    new: str
    line: int
    """The line the error names."""
    message: str
    """The rest of the line after ``suite.yaml:LINE: ``."""


BAD = [
    Bad(
        "unclosed-filter",
        "path: trace[kind=tool_call, error=null].name",
        "path: trace[kind=tool_call, error=null.name",
        13,
        "checks.cancelled.path: malformed field path 'trace[kind=tool_call, error=null.name' "
        "at position 5: expected a closing ']'",
    ),
    Bad(
        "filter-without-value",
        "path: trace[kind=tool_call, error=null].name",
        "path: trace[kind=tool_call, error=].name",
        13,
        "checks.cancelled.path: malformed field path 'trace[kind=tool_call, error=].name' at "
        "position 28: expected a value after '=' (write '' for empty text)",
    ),
    Bad(
        "double-equals",
        "path: trace[kind=tool_call, error=null].name",
        "path: trace[kind==tool_call].name",
        13,
        "checks.cancelled.path: malformed field path 'trace[kind==tool_call].name' at position "
        "11: expected one '=' between the field and the value",
    ),
    Bad(
        "bare-value-with-quote",
        "path: trace[kind=tool_call, error=null].name",
        "path: trace[name=it's].name",
        13,
        'checks.cancelled.path: malformed field path "trace[name=it\'s].name" at position 13: '
        "expected a quote only around a whole value",
    ),
    Bad(
        "unclosed-quote",
        "path: trace[kind=tool_call, error=null].name",
        'path: "trace[name=\'cancel].name"',
        13,
        'checks.cancelled.path: malformed field path "trace[name=\'cancel].name" at position '
        "11: expected a closing ' for the quoted value",
    ),
    Bad(
        "filter-without-operator",
        "path: trace[kind=tool_call, error=null].name",
        "path: trace[error].name",
        13,
        "checks.cancelled.path: malformed field path 'trace[error].name' at position 11: "
        "expected '=' or '!=' after the filter's field name",
    ),
    Bad(
        "fractional-index",
        "path: trace[kind=tool_call, error=null].name",
        "path: trace[1.5].name",
        13,
        "checks.cancelled.path: malformed field path 'trace[1.5].name' at position 6: expected "
        "an integer index, '*' or a filter such as [kind=tool_call]",
    ),
    Bad(
        "glued-name-after-filter",
        "path: trace[kind=tool_call, error=null].name",
        "path: trace[kind=tool_call]name",
        13,
        "checks.cancelled.path: malformed field path 'trace[kind=tool_call]name' at position "
        "21: expected '.' or '[' before a name",
    ),
    Bad(
        "bad-values-path",
        "values_path: ground_truth.outputs",
        "values_path: ground_truth.outputs[",
        7,
        "checks.facts_in_replies.values_path: malformed field path 'ground_truth.outputs[' at "
        "position 20: expected a closing ']'",
    ),
    Bad(
        "bad-when-path",
        'when: {path: "trace[kind=tool_call].name"',
        'when: {path: "trace[kind=tool_call"',
        26,
        "checks.replies_short.when.path: malformed field path 'trace[kind=tool_call' at "
        "position 5: expected a closing ']'",
    ),
    Bad(
        "match-on-a-plain-path",
        "path: trace[kind=tool_call, error=null].name",
        "path: trace[-1].name\n    match: all",
        11,
        "checks.cancelled: 'match' applies to a path with [*] or a filter, such as "
        "'trace[kind=assistant].content'; 'trace[-1].name' has one value",
    ),
    Bad(
        "unknown-match",
        "    match: all",
        "    match: every",
        25,
        "checks.replies_short.match: expected 'any' or 'all', got 'every'",
    ),
    Bad(
        "unknown-within",
        "    within: any\n    normalize",
        "    within: all\n    normalize",
        9,
        "checks.facts_in_replies.within: expected 'each' or 'any', got 'all'",
    ),
    Bad(
        "within-any-with-match",
        "    within: any\n    normalize",
        "    within: any\n    match: all\n    normalize",
        4,
        "checks.facts_in_replies: 'match' does not apply with 'within: any' (texts are pooled)",
    ),
    Bad(
        "within-on-a-word-count",
        "    match: all",
        "    match: all\n    within: any",
        26,
        "checks.replies_short.within: unknown key 'within'",
    ),
    Bad(
        "unknown-normalisation",
        "normalize: [thousands_separators, whitespace]",
        "normalize: [thousands, whitespace]",
        10,
        "checks.facts_in_replies.normalize[0]: expected 'case', 'whitespace', "
        "'thousands_separators' or 'punctuation', got 'thousands'",
    ),
    Bad(
        "values-and-values-path",
        "values_path: ground_truth.outputs",
        "values_path: ground_truth.outputs\n    values: ['1234']",
        4,
        "checks.facts_in_replies: give exactly one of 'values' or 'values_path'",
    ),
    Bad(
        "values-as-objects",
        'values: ["4421"]',
        "values: [{last_four: '4421'}]",
        18,
        "checks.no_card_number.values[0]: expected text, got {'last_four': '4421'}",
    ),
]


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from checkweigh.cli import main; main()", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="backslashreplace",
        cwd=cwd,
        timeout=60,
    )


@pytest.mark.parametrize("bad", BAD, ids=[b.id for b in BAD])
def test_a_bad_path_or_option_is_one_line_and_stores_nothing(tmp_path: Path, bad: Bad) -> None:
    assert SUITE.count(bad.old) == 1, bad.old
    folder = tmp_path / "airline"
    suite = write_airline_suite(folder, SUITE.replace(bad.old, bad.new))
    db = tmp_path / "r.db"
    proc = _cli("run", str(suite), "--db", f"sqlite:///{db}", "-q", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"error: {suite}:{bad.line}: {bad.message}"), line
    assert not db.exists()


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # quoted values with spaces, brackets and commas; nested filter fields; [*] on a mapping
        (
            "path: trace[kind=tool_call, error=null].name",
            "path: \"trace[content='Yes, please [now]'].kind\"",
        ),
        ("path: trace[kind=tool_call, error=null].name", "path: trace[arguments.amount=100].name"),
        (
            "path: trace[kind=tool_call, error=null].name",
            "path: final_state.reservations[*].status",
        ),
    ],
)
def test_unusual_but_valid_paths_run(tmp_path: Path, old: str, new: str) -> None:
    suite = write_airline_suite(tmp_path / "airline", SUITE.replace(old, new))
    proc = _cli("run", str(suite), "--db", f"sqlite:///{tmp_path / 'r.db'}", "-q", cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    assert proc.stderr == ""
