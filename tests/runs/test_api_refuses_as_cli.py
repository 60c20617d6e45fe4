"""The Python API refuses what ``checkweigh run`` refuses, before the run starts and with the
same one-line message: cases the suite's target cannot hold (issue 22)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import checkweigh as cw
from checkweigh.cli import app
from checkweigh.errors import CaseFileError
from checkweigh.store import Store

SUITE = """\
name: desk
cases: cases.jsonl
target:
  kind: http
  url: http://127.0.0.1:9/agent
{body}checks:
  booked: {{type: equals, path: final_state.booked, value: true}}
rubrics:
  r: {{weights: {{booked: 1}}}}
"""
MESSAGES_BODY = '  body: {history: "{{messages}}"}\n'
SCRIPTED = {"id": "s1", "input": "hi", "user": {"turns": ["Book Alice at 10:00", "thanks"]}}
SIMULATED = {"id": "g1", "input": "hi", "user": {"goal": "Book Alice at 10:00"}}
SINGLE = {"id": "one", "input": {"message": "Book Alice at 10:00"}}
BOTH = {"id": "b", "input": "hi", "user": {"turns": ["Book Alice"], "goal": "Book Alice"}}


def _suite(folder: Path, cases: list[dict[str, object]], body: str = "") -> Path:
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (folder / "suite.yaml").write_text(SUITE.format(body=body))
    return folder / "suite.yaml"


def _cli_error(suite: Path, tmp_path: Path) -> str:
    result = CliRunner().invoke(app, ["run", str(suite), "--db", f"sqlite:///{tmp_path}/r.db"])
    assert result.exit_code == 2, result.output
    [line] = result.stderr.strip().splitlines()
    return line


@pytest.mark.parametrize(
    ("cases", "body", "expected"),
    [
        (
            [SCRIPTED, SINGLE],
            MESSAGES_BODY,
            "cases.jsonl:2: user: case 'one' has no user, but target.body in suite.yaml reads "
            "{{messages}}, which only the turns of a conversation send; give the case a user: "
            "block, or read {{input}}",
        ),
        (
            [SIMULATED],
            "",
            "cases.jsonl:1: user.model: a simulated user needs a model: run with --judge "
            "PROVIDER:MODEL, or set user.model in the case",
        ),
        (
            [SCRIPTED, BOTH],
            "",
            "cases.jsonl:2: user: 'turns' (a scripted user) and 'goal' (a simulated user) "
            "cannot both be given; keep one",
        ),
    ],
    ids=["messages-body-single-case", "simulated-user-without-model", "turns-and-goal"],
)
def test_run_and_arun_refuse_before_the_run_as_the_cli_does(
    tmp_path: Path, cases: list[dict[str, object]], body: str, expected: str
) -> None:
    suite = _suite(tmp_path, cases, body)
    store = Store("sqlite://")
    with pytest.raises(CaseFileError) as sync:
        cw.run(suite, store=store)
    with pytest.raises(CaseFileError) as awaited:
        asyncio.run(cw.arun(suite, store=store))
    assert str(sync.value) == str(awaited.value) == f"{tmp_path / expected}"
    assert store.list_runs() == []  # refused before a run was created
    assert _cli_error(suite, tmp_path) == f"error: {tmp_path / expected}"
