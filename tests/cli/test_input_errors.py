"""Every user mistake gives one line naming file, line and field, and exit code 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from support.recorded_suite import standard_cases, write_suite


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from checkweigh.cli import main; main()", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
    )


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


# (text to replace, replacement, expected message with {line} = the replacement's line)
MISTAKES = [
    ("name: bookings", "name: bookings: again", "{line}: invalid YAML: mapping values"),
    ("description:", "descripton:", "{line}: descripton: unknown key 'descripton'; did you mean"),
    (
        "correct_participants: 0.4",
        "correct_participants: high",
        "{line}: rubrics.completion.weights.correct_participants: expected a number",
    ),
    (
        "clear_explanation: 0.2",
        "clear_explain: 0.2",
        "{line}: rubrics.completion.weights.clear_explain: unknown check 'clear_explain'",
    ),
    ("cases: cases.jsonl", "cases: missing.jsonl", "{line}: cases: cases file not found"),
    ("type: before", "type: befor", "{line}: checks.checked_first.type: unknown check type"),
    ("min: 0.5", "min: lots", "{line}: gates[0].min: expected a number, got 'lots'"),
    ("correct_participants: 0.4", "correct_participants: -0.4", "{line}: rubrics.completion"),
]


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    MISTAKES,
    ids=[
        "yaml-syntax",
        "unknown-key",
        "non-numeric-weight",
        "unknown-check",
        "missing-cases",
        "unknown-type",
        "bad-threshold",
        "negative-weight",
    ],
)
def test_suite_mistakes(tmp_path: Path, old: str, new: str, expected: str) -> None:
    suite = write_suite(tmp_path / "s", standard_cases())
    text = suite.read_text().replace(old, new, 1)
    suite.write_text(text)
    line = _line_of(text, new.strip().splitlines()[-1])
    proc = _cli("run", str(suite), "--db", f"sqlite:///{tmp_path / 'r.db'}", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert f"{suite}:" + expected.format(line=line) in lines[0]
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "r.db").exists() or "run" not in proc.stdout


def test_missing_suite_file(tmp_path: Path) -> None:
    proc = _cli("run", "nope.yaml", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "error: nope.yaml: suite file not found"


def test_bad_database_url(suite_path: Path, tmp_path: Path) -> None:
    proc = _cli("run", str(suite_path), "--db", "not a url", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("error: --db: invalid database URL 'not a url'")


def test_unknown_run(tmp_path: Path) -> None:
    proc = _cli("show", "nope", "--db", f"sqlite:///{tmp_path / 'r.db'}", cwd=tmp_path)
    assert proc.returncode == 2
    assert "RUN: no run 'nope'" in proc.stderr


def test_empty_cases_file(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "s", [])
    proc = _cli("run", str(suite), "--db", f"sqlite:///{tmp_path / 'r.db'}", cwd=tmp_path)
    assert proc.returncode == 2
    assert (
        proc.stderr.strip()
        == f"error: {suite.parent / 'cases.jsonl'}: the cases file holds no cases"
    )


def test_unwritable_json_file_is_one_line_and_keeps_the_run(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "s", standard_cases())
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a folder is expected")
    db = f"sqlite:///{tmp_path / 'r.db'}"
    proc = _cli("run", str(suite), "--db", db, "--json", str(blocker / "out.json"), cwd=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"error: --json: cannot write {blocker / 'out.json'}")
    assert "Traceback" not in proc.stderr


def test_database_driver_not_installed_hides_the_password(tmp_path: Path) -> None:
    proc = _cli("runs", "--db", "mssql+pymssql://ann:s3cret@127.0.0.1:1/evals", cwd=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: --db: the database driver for")
    assert "s3cret" not in proc.stderr
