"""Usage errors are one line in-process too (typer's CliRunner, as embedding code runs the app),
for every command, and never echo control characters from the command line."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from checkweigh.cli import app


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["run", "s.yaml", "--repeat", "0"], "--repeat: expected an integer >= 1, got 0"),
        (["runs", "--limit", "-3"], "--limit: expected an integer >= 1, got -3"),
        (["show", "latest", "--nope"], "no such option --nope"),
        (["compare", "a"], "CANDIDATE: missing argument"),
        (
            ["stability", "latest", "--seed", "\x1b]0;x\x07"],
            "--seed: expected an integer, got '\\x1b]0;x\\x07'",
        ),
        (["align", "latest", "l.csv", "--db"], "--db: expected a value after it"),
    ],
)
def test_usage_errors_are_one_line(args: list[str], expected: str) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    lines = result.output.splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith(f"error: {expected}")
    assert lines[0].isprintable()


def test_help_and_bare_command_are_unchanged() -> None:
    bare = CliRunner().invoke(app, [])
    assert bare.exit_code == 2
    assert "Usage" in bare.output
    assert "run" in bare.output
    helped = CliRunner().invoke(app, ["run", "--help"])
    assert helped.exit_code == 0
    assert "--repeat" in helped.output
    assert "--version" in CliRunner().invoke(app, ["--help"]).output
