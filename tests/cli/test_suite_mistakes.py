"""A suite mistake is never a silent wrong answer: ``checkweigh run`` names every path no case
held, refuses a bad ``missing:``, and ``--cases`` reads without the suite's own cases file."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from checkweigh.cli import app
from checkweigh.server import create_app
from checkweigh.store import Store
from support import cli_process as cli
from support.recorded_suite import make_case, standard_cases, write_suite
from support.retail_cases import (
    KEYBOARD,
    NEW_KEYBOARD,
    NEW_THERMOSTAT,
    THERMOSTAT,
    exchange_case,
    modify_case,
)

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


RETAIL_SUITE = """\
name: retail-writes
cases: cases.jsonl
x-writes: &writes
  name: [exchange_delivered_order_items, modify_pending_order_items]
  error: false
checks:
  expected_writes:
    type: trajectory_match
    reference_path: ground_truth.actions
    mode: unordered
    select: *writes
    overrides:
      modify_pending_order_item: {ignore: [payment_method_id]}   # the tool is ..._items
      exchange_delivered_order_items: {ignore: [payment_method]}  # the argument is ..._id
  write_action:
    type: trajectory_match
    reference_path: ground_truth.write_action   # tau-bench's field is ground_truth.actions
    mode: unordered
    select: *writes
  escalated:
    type: tool_called
    step: transfer_to_human_agents
    when: {path: metadata.escalate, equals: true}   # one case has it: not named
rubrics:
  reward:
    weights:
      expected_writes: 1
      write_action: {weight: 1, not_applicable: pass}
      escalated: {weight: 1, not_applicable: pass}
thresholds:
  pass_threshold: 0
  metrics_pass_threshold: 0
  cases_pass_threshold: 0
"""

UNHELD = [
    {"check": "expected_writes", "field": "overrides key", "path": "modify_pending_order_item"},
    {
        "check": "expected_writes",
        "field": "overrides.exchange_delivered_order_items.ignore",
        "path": "payment_method",
    },
    {"check": "write_action", "field": "reference_path", "path": "ground_truth.write_action"},
]


def _retail(folder: Path, n: int) -> Path:
    """The retail suite over ``n`` cases (exchanges and modifications); only the last case
    asks for an escalation (``metadata.escalate``)."""
    folder.mkdir(parents=True, exist_ok=True)
    cases = []
    for i in range(n):
        if i % 2:
            case = modify_case(f"retail-{i:05d}", corrected=i % 3 == 0)
        else:
            items, new = [KEYBOARD, THERMOSTAT], [NEW_KEYBOARD, NEW_THERMOSTAT]
            case = exchange_case(f"retail-{i:05d}", items, new)
        cases.append(case)
    cases[-1]["metadata"]["escalate"] = True
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (folder / "suite.yaml").write_text(RETAIL_SUITE)
    return folder / "suite.yaml"


def test_paths_no_case_held_are_named_in_every_report(tmp_path: Path) -> None:
    suite = _retail(tmp_path / "s", 40)
    db = f"sqlite:///{tmp_path / 'r.db'}"
    out_json, out_md = tmp_path / "r.json", tmp_path / "r.md"
    code, out, err = _run(
        "run", str(suite), "--db", db, "--json", str(out_json), "--markdown", str(out_md)
    )
    assert code == 0, err
    notes = [
        "note: check expected_writes: overrides key modify_pending_order_item matched nothing "
        "in any case of the run (misspelt?)",
        "note: check expected_writes: overrides.exchange_delivered_order_items.ignore "
        "payment_method matched nothing in any case of the run (misspelt?)",
        "note: check write_action: reference_path ground_truth.write_action matched nothing in "
        "any case of the run (misspelt?)",
    ]
    for note in notes:
        assert note in out
    # held by some case: the reference, the selected tools, the guard one case has
    assert "ground_truth.actions matched" not in out
    assert "metadata.escalate" not in out

    data = json.loads(out_json.read_text())
    assert data["summary"]["unheld_paths"] == UNHELD
    assert [n for n in data["summary"]["notes"] if "matched nothing" in n] == [
        n.removeprefix("note: ") for n in notes
    ]
    # the misspelt reference made its check not applicable on every case, without a failure
    verdicts = [r["verdicts"]["write_action"]["state"] for r in data["results"]]
    assert verdicts == ["not_applicable"] * 40
    assert (
        "reference\\_path ground\\_truth&#46;write\\_action matched nothing" in out_md.read_text()
    )

    with Store(db) as store:  # the stored summary, and the run's page that shows it
        (info,) = store.list_runs()
        assert info.summary is not None
        assert [u.model_dump() for u in info.summary.unheld_paths] == UNHELD
        assert sum("matched nothing" in n for n in info.summary.notes) == 3
        page = TestClient(create_app(store)).get(f"/runs/{info.id}")
    assert page.status_code == 200
    assert (
        "<li>note: check write_action: reference_path ground_truth.write_action "
        "matched nothing in any case of the run (misspelt?)</li>"
    ) in page.text


def test_workers_name_the_same_paths_a_single_process_does(tmp_path: Path) -> None:
    # 2,500 cases: two chunks of the workers; only the second holds metadata.escalate
    suite = _retail(tmp_path / "s", 2_500)
    common = ["run", "suite.yaml", "-q"]
    one = cli.run([*common, "--db", "sqlite:///one.db", "--json", "one.json"], suite.parent)
    flags = ["--db", "sqlite:///two.db", "--json", "two.json", "--workers", "2"]
    two = cli.run([*common, *flags], suite.parent, timeout=120)
    assert one.code == two.code == 0, two.err
    first = json.loads((suite.parent / "one.json").read_text())["summary"]
    second = json.loads((suite.parent / "two.json").read_text())["summary"]
    assert first["unheld_paths"] == second["unheld_paths"] == UNHELD
    assert [n for n in second["notes"] if "matched nothing" in n] == [
        n for n in first["notes"] if "matched nothing" in n
    ]
