"""Catalogue: bad executor flags of `checkweigh run` (--workers, --executor, --ray-address),
each refused before the run with exit 2 and one line naming the flag, nothing stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import cli_process as cli
from support.worker_suite import write_worker_suite

AGENT_SUITE = """\
name: agent
cases: cases.jsonl
target: {agent: "agent:run"}
checks:
  said: {type: contains, path: output, values: ["10:00"]}
rubrics:
  r: {weights: {said: 1.0}}
"""

ROWS = [
    (["--workers", "0"], "--workers"),
    (["--workers", "2"], "--workers: the suite 'agent' calls an agent"),
    (["--ray-address", "127.0.0.1:6379"], "--ray-address: a Ray cluster is joined with"),
    (["--executor", "dask"], "--executor: expected local or ray, got 'dask'"),
    (["--executor", "ray", "--workers", "2"], "--workers: Ray schedules the work"),
    (["--executor", "ray", "--record-agent", "rec"], "--record-agent: the agent's calls"),
]


@pytest.mark.parametrize(("flags", "fragment"), ROWS, ids=[" ".join(r[0]) for r in ROWS])
def test_bad_executor_flags_exit_2(tmp_path: Path, flags: list[str], fragment: str) -> None:
    write_worker_suite(tmp_path, 3)
    (tmp_path / "agent.py").write_text("def run(request):\n    return {'trace': []}\n")
    (tmp_path / "agent.yaml").write_text(AGENT_SUITE)
    suite = "agent.yaml" if flags[:2] != ["--workers", "0"] else "suite.yaml"
    db = tmp_path / "runs.db"
    done = cli.run(["run", suite, "-q", "--db", f"sqlite:///{db}", *flags], tmp_path)
    assert done.code == 2, done.out + done.err
    assert fragment in done.err
    assert "Traceback" not in done.err
    assert len(done.err.strip().splitlines()) <= 3  # typer's usage box for a bad range
    assert cli.stored(db) == 0
