"""`checkweigh compare BASE CANDIDATE` on stored runs of recorded scheduling traces."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from checkweigh.cli import app
from support.recorded_suite import make_case, write_suite

runner = CliRunner()


def _run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def _good(i: int) -> dict[str, Any]:
    return make_case(f"case-{i:02d}", participants=["Alice", "Bob"], time="10:00")


def _bad(i: int) -> dict[str, Any]:
    return make_case(f"case-{i:02d}", participants=["Alice", "Bob"], time="11:00")


def _two_runs(tmp_path: Path, base: list[dict[str, Any]], cand: list[dict[str, Any]]) -> str:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    for name, cases in (("base", base), ("cand", cand)):
        suite = write_suite(tmp_path / name, cases, thresholds={"cases_pass_threshold": 0.0})
        code, out, _ = _run("run", str(suite), "--db", db, "-q")
        assert code in (0, 1), out
    return db


def test_one_case_dropping_is_named_and_reported_not_significant(tmp_path: Path) -> None:
    base = [_good(i) for i in range(12)]
    cand = [*base[:4], _bad(4), *base[5:]]
    db = _two_runs(tmp_path, base, cand)
    code, out, _ = _run("compare", "previous", "latest", "--db", db)
    assert code == 0, out
    assert "NOT SIGNIFICANT" in out
    assert "threshold exceeded on case pass rate (%)" in out
    assert "regressions: 1 case(s)" in out
    assert "case-04#0: passed 100.0 -> failed 70.0  (required check failed: correct_time: " in out
    assert "exact McNemar on 1 pass->fail, 0 fail->pass" in out
    assert "correct_time" in out  # its pass rate changed
    code, out, _ = _run("compare", "previous", "latest", "--db", db, "--strict")
    assert code == 1
    assert "REGRESSION" in out


def test_a_broad_regression_exits_1_and_writes_json_and_markdown(tmp_path: Path) -> None:
    base = [_good(i) for i in range(30)]
    cand = [_bad(i) if i % 3 == 0 else _good(i) for i in range(30)]
    db = _two_runs(tmp_path, base, cand)
    out_json = tmp_path / "cmp" / "c.json"
    out_md = tmp_path / "cmp" / "c.md"
    code, out, _ = _run(
        "compare",
        "previous",
        "latest",
        "--db",
        db,
        "--json",
        str(out_json),
        "--markdown",
        str(out_md),
    )
    assert code == 1, out
    assert "REGRESSION" in out
    data = json.loads(out_json.read_text())
    assert data["verdict"] == "regression"
    assert data["regression_detected"] is True
    assert len(data["regressions"]) == 10
    assert data["suite"][0]["p_value"] == pytest.approx(2 / 2**10)
    md = out_md.read_text()
    assert md.startswith("## checkweigh compare: ❌ regression")
    assert "| case\\-00 #0 |" in md or "| case-00 #0 |" in md


def test_an_improvement_is_no_regression(tmp_path: Path) -> None:
    base = [_bad(0), _good(1), _good(2)]
    cand = [_good(0), _good(1), _good(2)]
    db = _two_runs(tmp_path, base, cand)
    code, out, _ = _run("compare", "previous", "latest", "--db", db)
    assert code == 0
    assert "NO REGRESSION" in out
    assert "improvements: 1 case(s)" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--max-avg-score-drop", "-1"], "--max-avg-score-drop: expected a number >= 0, got -1"),
        (["--alpha", "2"], "--alpha: expected a level between 0 and 1, got 2"),
    ],
)
def test_bad_flags_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    db = _two_runs(tmp_path, [_good(0)], [_good(0)])
    code, _, err = _run("compare", "previous", "latest", "--db", db, *args)
    assert code == 2
    assert err.strip() == f"error: {message}"


def test_unknown_and_identical_runs(tmp_path: Path) -> None:
    db = _two_runs(tmp_path, [_good(0)], [_good(0)])
    code, _, err = _run("compare", "nosuchrun", "latest", "--db", db)
    assert code == 2
    assert "nosuchrun" in err
    assert len(err.strip().splitlines()) == 1
    code, _, err = _run("compare", "latest", "latest", "--db", db)
    assert code == 2
    assert "both refer to run" in err


def test_runs_that_share_no_case_are_refused_in_one_line(tmp_path: Path) -> None:
    """Two unrelated runs have nothing to pair: a NO REGRESSION there would be a pass that
    nobody measured."""
    base = [_good(i) for i in range(6)]
    cand = [make_case(f"other-{i}", participants=["Alice"], time="10:00") for i in range(3)]
    db = _two_runs(tmp_path, base, cand)
    out_md = tmp_path / "c.md"
    code, out, err = _run("compare", "previous", "latest", "--db", db, "--markdown", str(out_md))
    assert code == 2, out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: the runs share no case (0 paired of 6 base, 3 candidate ")
    assert lines[0].endswith("(only two monitor windows are compared unpaired)")
    assert "NO REGRESSION" not in out
    assert not out_md.exists()


def test_the_paired_count_is_always_reported(tmp_path: Path) -> None:
    base = [_good(i) for i in range(6)]
    cand = [*base[:4], _good(10)]
    db = _two_runs(tmp_path, base, cand)
    out_md = tmp_path / "c.md"
    code, out, _ = _run("compare", "previous", "latest", "--db", db, "--markdown", str(out_md))
    assert code == 0, out
    assert "4 paired execution(s) (2 only in the base, 1 only in the candidate)" in out
    assert ": 4 paired execution(s)." in out_md.read_text()
