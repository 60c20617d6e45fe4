"""A suite mistake is never a silent wrong answer: ``checkweigh run`` names every path no case
held, refuses a bad ``missing:``, and ``--cases`` reads without the suite's own cases file."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from checkweigh.cli import app
from support import cli_process as cli
from support.recorded_suite import make_case, standard_cases, write_suite

runner = CliRunner()


def _run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_run_cases_reads_its_file_when_the_suites_own_cases_file_is_gone(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "s", standard_cases())
    (suite.parent / "cases.jsonl").rename(tmp_path / "other.jsonl")
    db = f"sqlite:///{tmp_path / 'r.db'}"

    code, _, err = _run("run", str(suite), "--db", db)
    assert code == 2
    assert "cases file not found" in err  # without --cases the suite's own file is needed

    out_json = tmp_path / "r.json"
    args = ["run", str(suite), "--cases", str(tmp_path / "other.jsonl"), "--db", db]
    code, out, err = _run(*args, "--json", str(out_json), "-q")
    assert code == 0, err
    assert "TCR 0.616" in out
    assert len(json.loads(out_json.read_text())["results"]) == 6

    # worker processes load the suite too: they read the driver's cases, not the suite's
    many = [make_case(f"c{i}", participants=["Alice", "Bob"], time="10:00") for i in range(3_000)]
    (tmp_path / "many.jsonl").write_text("".join(json.dumps(c) + "\n" for c in many))
    flags = ["--cases", "../many.jsonl", "--db", "sqlite:///w.db", "--workers", "2", "-q"]
    done = cli.run(["run", "suite.yaml", *flags], suite.parent, timeout=120)
    assert done.code == 0, done.err
    assert "TCR 1.000" in done.out
