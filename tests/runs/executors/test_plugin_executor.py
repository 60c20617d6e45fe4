"""An executor shipped in another package: the example plugin's ``inline`` executor
(tests/plugins/checkweigh-example-plugin, one file), installed with pip and used by name from
``checkweigh run --executor inline`` and from the Python API, with nothing of src/ touched."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import checkweigh as cw
from checkweigh.cli import app
from checkweigh.errors import InputError
from checkweigh.runs.executors import EXECUTORS
from checkweigh.store import Store
from support.recorded_suite import standard_cases, write_suite

AGENT_SUITE = """\
name: desk
cases: cases.jsonl
target: {agent: "inline_desk_agent:book"}
checks:
  booked: {type: equals, path: final_state.booked, value: true}
rubrics:
  r: {weights: {booked: 1}}
"""


def _stored(db: Path, run_id: str) -> list[tuple[str, int, float]]:
    with Store(f"sqlite:///{db}") as store:
        return [
            (r.case_id, r.repeat, round(r.results["completion"].score, 6))
            for r in store.iter_results(run_id)
        ]


def test_the_cli_runs_a_suite_on_the_plugins_executor(use_plugin: Path, tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "s", standard_cases())
    db = tmp_path / "r.db"
    for executor in ("local", "inline"):
        flags = ["--db", f"sqlite:///{db}", "--executor", executor, "--repeat", "2", "-q"]
        done = CliRunner().invoke(app, ["run", str(suite), *flags])
        assert done.exit_code == 0, done.output
    with Store(f"sqlite:///{db}") as store:
        inline, local = store.list_runs()  # newest first
        assert any(n.startswith("inline executor: 12 execution(s)") for n in inline.summary.notes)
        assert inline.summary.rubrics == local.summary.rubrics
        assert inline.executions == local.executions == 12
    assert _stored(db, inline.id) == _stored(db, local.id)


def test_the_python_api_runs_on_it_by_name(use_plugin: Path, tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "s", standard_cases())
    report = cw.run(suite, cw.RunOptions(executor="inline"))
    baseline = cw.run(suite)
    assert [r.case_id for r in report.results] == [c["id"] for c in standard_cases()]
    assert report.summary.rubrics == baseline.summary.rubrics
    assert "inline executor: 6 execution(s) scored one at a time" in report.summary.notes
    assert "inline" in EXECUTORS.names()
    listed = CliRunner().invoke(app, ["plugins"])
    assert listed.exit_code == 0, listed.output
    executors = listed.stdout.split("executors (checkweigh.executors)\n", 1)[1].split("outputs (")[
        0
    ]
    assert [line.split()[0] for line in executors.splitlines() if line.strip()] == [
        "local",
        "processes",
        "ray",
        "inline",
    ]
    assert "checkweigh-example-plugin" in executors.strip().splitlines()[-1]


def test_what_it_does_not_support_is_refused_in_one_line(use_plugin: Path, tmp_path: Path) -> None:
    (tmp_path / "inline_desk_agent.py").write_text(
        "def book(request):\n    return {'final_state': {}}\n"
    )
    (tmp_path / "cases.jsonl").write_text('{"id": "a", "input": "hi"}\n')
    (tmp_path / "suite.yaml").write_text(AGENT_SUITE)
    suite = tmp_path / "suite.yaml"
    expected = (
        "--executor: the suite 'desk' calls an agent: the inline executor scores recorded "
        "cases only"
    )
    with pytest.raises(InputError) as caught:
        cw.run(suite, cw.RunOptions(executor="inline"))
    assert str(caught.value) == expected
    done = CliRunner().invoke(
        app, ["run", str(suite), "--db", f"sqlite:///{tmp_path}/r.db", "--executor", "inline"]
    )
    assert done.exit_code == 2
    assert done.stderr == f"error: {expected}\n"
    with pytest.raises(InputError) as caught:
        cw.run(suite, cw.RunOptions(executor="inline", record_agent=tmp_path / "calls"))
    assert str(caught.value) == (
        "--record-agent: the agent's calls are recorded or replayed in this process; drop "
        "--executor inline"
    )


def test_the_docs_show_the_plugins_executor_as_it_is() -> None:
    root = Path(__file__).resolve().parents[3]
    page = (root / "docs" / "plugins" / "executors.md").read_text()
    module = root / "tests/plugins/checkweigh-example-plugin/src/checkweigh_example_plugin"
    assert f"```python\n{(module / 'executor.py').read_text()}```\n" in page
