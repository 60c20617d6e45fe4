"""`checkweigh compare` warns when the two runs were judged differently (a judge change is not
an agent regression), and `--strict` then fails; the JSON and the API say it too."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from checkweigh.cli import app
from checkweigh.judges import ScriptedJudge
from checkweigh.server import create_app
from checkweigh.store import Store
from checkweigh.suites import load_suite
from support.engine import run_into

runner = CliRunner()
YES = json.dumps({"verdict": "yes", "reason": "courteous"})

SUITE = """
name: support
cases: cases.jsonl
checks:
  polite:
    type: judge
    question: Is the reply polite?
rubrics:
  task:
    weights: {polite: 1}
"""


def _runs(tmp_path: Path, first: str, second: str) -> tuple[str, str, str]:
    """Two runs of one suite judged by scripted models ``first`` and ``second``."""
    cases = [
        {"id": f"c{i}", "trace": [{"kind": "assistant", "content": f"Done {i}, thanks!"}]}
        for i in range(4)
    ]
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (tmp_path / "suite.yaml").write_text(SUITE)
    suite = load_suite(tmp_path / "suite.yaml")
    db = f"sqlite:///{tmp_path / 'r.db'}"
    with Store(db) as store:
        ids = [
            run_into(suite, store, judge=ScriptedJudge([YES] * 4, model=model)).run_id
            for model in (first, second)
        ]
    return db, ids[0], ids[1]


def test_runs_judged_by_other_models_are_compared_with_a_warning(tmp_path: Path) -> None:
    db, base, cand = _runs(tmp_path, "judge-a", "judge-b")
    out = tmp_path / "cmp.json"
    done = runner.invoke(app, ["compare", base, cand, "--db", db, "--json", str(out)])
    assert done.exit_code == 0, done.stderr
    assert (
        "warning: the runs were judged differently (judge scripted:judge-a in the base, "
        "scripted:judge-b in the candidate): a change may be the judge's, not the agent's"
    ) in " ".join(done.stderr.split())
    assert json.loads(out.read_text())["judged_differently"] == [
        "judge scripted:judge-a in the base, scripted:judge-b in the candidate"
    ]
    strict = runner.invoke(app, ["compare", base, cand, "--db", db, "--strict"])
    assert strict.exit_code == 1
    assert "failed: --strict compares only runs judged alike" in strict.stderr
    with Store(db) as store:
        client = TestClient(create_app(store))
        answer = client.get("/api/runs/compare", params={"base": base, "candidate": cand})
        page = client.get("/compare", params={"base": base, "candidate": cand})
    assert answer.status_code == 200
    assert answer.json()["judged_differently"] == [
        "judge scripted:judge-a in the base, scripted:judge-b in the candidate"
    ]
    assert page.status_code == 200
    assert 'id="judged-differently"' in page.text
    assert "<li>judge scripted:judge-a in the base, scripted:judge-b in the candidate</li>" in (
        page.text
    )


def test_runs_judged_alike_compare_without_a_warning_even_strictly(tmp_path: Path) -> None:
    db, base, cand = _runs(tmp_path, "judge-a", "judge-a")
    done = runner.invoke(app, ["compare", base, cand, "--db", db, "--strict"])
    assert done.exit_code == 0, done.stderr
    assert "judged differently" not in done.stderr + done.stdout
