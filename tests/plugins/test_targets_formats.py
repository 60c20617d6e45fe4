"""The example plugin's target kind (``echo``) and log format (``lines``), installed as a
package and used from suites and the command line without any change to checkweigh."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import checkweigh
from checkweigh.cli import app
from support.cli_process import ENTRY

runner = CliRunner()

SUITE = """\
name: plugin-suite
cases: {cases}
{target}
checks:
  answered: {{type: equals, path: final_state.echoed, value: "you said: hello"}}
rubrics:
  r: {{weights: {{answered: 1}}}}
"""
ECHO = 'target:\n  kind: echo\n  prefix: "you said: "'
CASES = '{"id": "hello", "input": "hello"}\n{"id": "other", "input": "bye"}\n'
LOG = """\
# id: refund-1
user: I want my money back
assistant: Refund issued.
# state: {"echoed": "you said: hello"}

user: hello
Assistant: hi there
"""


def _suite(folder: Path, target: str, cases: str = "cases.jsonl") -> Path:
    (folder / "cases.jsonl").write_text(CASES)
    path = folder / "suite.yaml"
    path.write_text(SUITE.format(cases=cases, target=target))
    return path


def _run(suite: Path, *options: str) -> tuple[int, str, dict[str, Any]]:
    out = suite.parent / "run.json"
    db = f"sqlite:///{suite.parent / 'r.db'}"
    done = runner.invoke(app, ["run", str(suite), "--db", db, "--json", str(out), *options])
    exported = json.loads(out.read_text()) if out.exists() else {}
    return done.exit_code, done.output, exported


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``checkweigh ARGS`` in a fresh process that has this checkweigh and no plugin."""
    here = str(Path(checkweigh.__file__).resolve().parents[1])
    return subprocess.run(
        [sys.executable, "-c", ENTRY, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
        env={"COLUMNS": "1000", "PATH": "/usr/bin:/bin", "PYTHONPATH": here},
        check=False,
    )


def _passed(exported: dict[str, Any]) -> dict[str, bool]:
    return {r["case_id"]: r["case"]["state"] == "passed" for r in exported["results"]}


def test_a_suite_runs_the_plugins_echo_target(use_plugin: Path, tmp_path: Path) -> None:
    code, output, exported = _run(_suite(tmp_path, ECHO))
    assert code == 1, output  # 'other' echoes "you said: bye": its check fails, the gate too
    assert _passed(exported) == {"hello": True, "other": False}
    assert all(r["agent_error"] is None for r in exported["results"])


def test_the_echo_kinds_own_checks_and_spec_errors_are_one_line(
    use_plugin: Path, tmp_path: Path
) -> None:
    suite = _suite(tmp_path, "target:\n  kind: echo\n  prefix_file: prefix.txt")
    done = runner.invoke(app, ["run", str(suite), "--db", f"sqlite:///{tmp_path / 'r.db'}"])
    assert done.exit_code == 2
    assert done.stderr.strip().splitlines() == [
        f"error: {suite}:5: target.prefix_file: file not found: {tmp_path / 'prefix.txt'}"
    ]
    (tmp_path / "prefix.txt").write_text("you said: \n")
    code, output, exported = _run(suite)
    assert code == 1, output
    assert _passed(exported) == {"hello": True, "other": False}
    suite.write_text(SUITE.format(cases="cases.jsonl", target="target: {kind: echo, prefx: a}"))
    done = runner.invoke(app, ["run", str(suite), "--db", f"sqlite:///{tmp_path / 'r.db'}"])
    assert done.exit_code == 2
    assert done.stderr.strip().splitlines() == [
        f"error: {suite}:3: target.prefx: unknown key 'prefx'; did you mean 'prefix'?"
    ]


def test_an_unknown_kind_or_format_is_one_line_exit_2(tmp_path: Path) -> None:
    # a fresh process without the plugin: echo is unknown, and the error lists the known kinds
    suite = _suite(tmp_path, ECHO)
    done = run_cli("run", str(suite), "--db", f"sqlite:///{tmp_path / 'r.db'}", cwd=tmp_path)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"error: {suite}:4: target.kind: unknown target kind 'echo'; ")
    assert "expected one of python, http, command" in line
    (tmp_path / "log.txt").write_text(LOG)
    out = tmp_path / "cases.jsonl"
    done = run_cli("import", "lines", str(tmp_path / "log.txt"), "--out", str(out), cwd=tmp_path)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: FORMAT: unknown log format 'lines'; expected one of openai,")


def test_checkweigh_import_reads_the_plugins_lines_format(use_plugin: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    log.write_text(LOG + "\nuser: ok\nrobot: beep\n")
    out = tmp_path / "cases.jsonl"
    done = runner.invoke(app, ["import", "lines", str(log), "--out", str(out)])
    assert done.exit_code == 2  # the third conversation has a line that is not ROLE: text
    assert f"{log}:10: expected 'ROLE: text'" in done.stderr
    assert not out.exists()
    args = ["import", "lines", str(log), "--out", str(out), "--on-bad-record", "skip"]
    done = runner.invoke(app, args)
    assert done.exit_code == 0, done.output
    cases = [json.loads(line) for line in out.read_text().splitlines()]
    assert [c["id"] for c in cases] == ["refund-1", "log-2"]
    assert cases[0]["input"] == "I want my money back"
    assert cases[0]["final_state"] == {"echoed": "you said: hello"}
    assert [(s["kind"], s["content"]) for s in cases[1]["trace"]] == [
        ("user", "hello"),
        ("assistant", "hi there"),
    ]


@pytest.mark.parametrize("options", [(), ("--workers", "2")], ids=["in-process", "workers"])
def test_a_suite_reads_its_log_in_the_plugins_format(
    use_plugin: Path, tmp_path: Path, options: tuple[str, ...]
) -> None:
    # no target: the recorded conversations are scored (by worker processes too)
    (tmp_path / "log.txt").write_text(LOG)
    suite = _suite(tmp_path, "", cases="{path: log.txt, format: lines}")
    code, output, exported = _run(suite, *options)
    assert code == 1, output
    assert _passed(exported) == {"refund-1": True, "log-2": False}


def test_a_command_target_answers_in_the_plugins_lines_format(
    use_plugin: Path, tmp_path: Path
) -> None:
    (tmp_path / "agent.py").write_text(
        "import json, sys\n"
        "case = json.load(sys.stdin)\n"
        "print('user: ' + case['input'])\n"
        "print('assistant: you said: ' + case['input'])\n"
        "print('# state: ' + json.dumps({'echoed': 'you said: ' + case['input']}))\n"
    )
    target = (
        f"target:\n  kind: command\n  command: [{json.dumps(sys.executable)}, agent.py]\n"
        "  reply: {format: lines}"
    )
    code, output, exported = _run(_suite(tmp_path, target))
    assert code == 1, output
    assert _passed(exported) == {"hello": True, "other": False}
    # a reply that is not in the format is the case's error, naming the format
    (tmp_path / "agent.py").write_text("print('beep boop')\n")
    code, output, exported = _run(_suite(tmp_path, target))
    errors = {r["case_id"]: r["agent_error"] for r in exported["results"]}
    assert errors["hello"].startswith("command's reply does not fit format lines: line 1: ")


def test_checkweigh_plugins_lists_the_kinds_and_formats(use_plugin: Path) -> None:
    done = runner.invoke(app, ["plugins"])  # not --strict: the other kinds are not tested here
    assert done.exit_code == 0, done.output
    lines = [" ".join(line.split()) for line in done.stdout.splitlines()]
    origin = "checkweigh-example-plugin 1.0.0: checkweigh_example_plugin"
    targets, formats = (
        lines.index("targets (checkweigh.targets)"),
        lines.index("formats (checkweigh.formats)"),
    )
    assert lines[targets + 1 : targets + 5] == [
        "python built-in",
        "http built-in",
        "command built-in",
        f"echo {origin}.target:EchoTarget",
    ]
    assert lines[formats + 1 : formats + 7] == [
        "openai built-in",
        "openai-responses built-in",
        "anthropic built-in",
        "otel built-in",
        "mapping built-in",
        f"lines {origin}.format:LinesFormat",
    ]


@pytest.mark.parametrize(("module", "entry"), [("target", "echo"), ("format", "lines")])
def test_the_page_shows_the_example_plugins_code(module: str, entry: str) -> None:
    """docs/plugins/targets.md shows the files the tests above install and run."""
    root = Path(__file__).parents[2]
    page = (root / "docs" / "plugins" / "targets.md").read_text()
    package = root / "tests" / "plugins" / "checkweigh-example-plugin"
    source = (package / "src" / "checkweigh_example_plugin" / f"{module}.py").read_text()
    assert f"```python\n{source.rstrip()}\n```" in page
    line = f'{entry} = "checkweigh_example_plugin.{module}:'
    assert line in (package / "pyproject.toml").read_text()
    assert line in page
