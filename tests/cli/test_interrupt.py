"""Ctrl-C or SIGTERM in the middle of a run keeps every finished case and marks the run
incomplete; the count printed is the count stored."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from fastapi.testclient import TestClient

from checkweigh.server import create_app
from checkweigh.store import RunStatus, Store
from support import cli_process as cli

AGENT = """\
import time


def run(request):
    time.sleep(0.15)
    return {
        "trace": [{"kind": "assistant", "content": "Booked the meeting at 10:00 for everyone."}],
        "final_state": {"success": True, "time": "10:00"},
    }
"""

SUITE = """\
name: slow
cases: cases.jsonl
target:
  agent: slow_agent:run
  concurrency: 1
checks:
  correct_time: {type: equals, path: final_state.time, value: "10:00"}
rubrics:
  completion:
    weights: {correct_time: 1.0}
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_keeps_finished_cases(tmp_path: Path, sig: signal.Signals) -> None:
    (tmp_path / "slow_agent.py").write_text(AGENT)
    (tmp_path / "suite.yaml").write_text(SUITE)
    (tmp_path / "cases.jsonl").write_text(
        "".join(json.dumps({"id": f"c{i:02d}", "input": {"n": i}}) + "\n" for i in range(40))
    )
    db = tmp_path / "runs.db"
    proc = cli.start(["run", "suite.yaml", "--db", f"sqlite:///{db}", "-q"], tmp_path)
    # the handler is in place once results are stored; wait generously on a loaded machine
    cli.wait_for_stored(db, 3, proc, timeout=60)
    began = time.monotonic()
    proc.send_signal(sig)
    done = cli.finish(proc, began, timeout=60)
    assert done.code == 130, done.out + done.err
    assert "interrupted: run" in done.err
    assert "marked incomplete" in done.err
    assert "Traceback" not in done.err
    store = Store(f"sqlite:///{db}")
    info = store.get_run("latest")
    assert info.status is RunStatus.INCOMPLETE
    results = list(store.iter_results(info.id))
    assert 3 <= len(results) < 40
    assert info.executions == len(results) == done.kept()
    assert [r.case_id for r in results] == [f"c{i:02d}" for i in range(len(results))]
    assert "[incomplete]" in done.out


def test_an_interrupted_runs_gates_are_not_decided_in_every_report(tmp_path: Path) -> None:
    """The agent passes every case: measured on the finished part the gates would pass, but
    the run did not finish, so nothing may say they passed."""
    (tmp_path / "slow_agent.py").write_text(AGENT)
    (tmp_path / "suite.yaml").write_text(
        SUITE + "gates:\n  - {rubric: completion, metric: tcr, min: 0.5}\n"
    )
    lines = [json.dumps({"id": f"c{i:02d}", "input": {"n": i}}) + "\n" for i in range(40)]
    (tmp_path / "cases.jsonl").write_text("".join(lines))
    (tmp_path / "first.jsonl").write_text("".join(lines[:4]))
    db = tmp_path / "runs.db"
    url = f"sqlite:///{db}"
    whole = cli.run(["run", "suite.yaml", "--db", url, "--cases", "first.jsonl", "-q"], tmp_path)
    assert whole.code == 0, whole.out + whole.err
    assert "gates passed" in whole.out

    proc = cli.start(
        [
            "run", "suite.yaml", "--db", url, "-q",
            "--json", "out/run.json", "--junit", "out/junit.xml", "--markdown", "out/run.md",
        ],
        tmp_path,
    )  # fmt: skip
    cli.wait_for_stored(db, 4 + 8, proc, timeout=60)  # the whole run stored 4
    with Store(url) as store:  # a reader mid-run sees what is stored so far, not 0
        live = store.get_run("latest")
        assert live.status is RunStatus.RUNNING
        assert 8 <= live.executions <= store.count_results(live.id)
        assert live.summary is None
        assert live.gates_passed is None
    proc.send_signal(signal.SIGINT)
    done = cli.finish(proc, time.monotonic(), timeout=60)
    assert done.code == 130, done.out + done.err  # the README's code for an interrupt
    kept = done.kept()
    assert kept is not None
    assert 8 <= kept < 40
    why = (
        "the run is incomplete: interrupted (SIGINT) before every case finished; its gates were "
        f"measured on the {kept} finished execution(s) only"
    )

    # console: each gate measured, none marked PASS, and no verdict but "not decided"
    assert "gates passed" not in done.out
    assert "PASS" not in done.out
    assert f"gates not decided: {why}" in done.out
    assert "gate ----  completion tcr >= 0.5  (actual 1)" in done.out
    assert "gate ----  cases: pass rate 100.0% >= " in done.out

    report = json.loads((tmp_path / "out/run.json").read_text())
    assert report["run"]["status"] == "incomplete"
    assert report["run"]["gates_passed"] is None
    summary = report["summary"]
    assert summary["gates_passed"] is None
    assert summary["gates_status"] == "not_decided"
    assert summary["gates_not_decided"] == why
    assert summary["executions"] == len(report["results"]) == kept

    markdown = (tmp_path / "out/run.md").read_text()
    assert markdown.startswith("## checkweigh: slow ⚠️ gates not decided\n")
    assert "passed" not in markdown.splitlines()[0]
    assert "✅" not in markdown
    assert markdown.count("⚠️ not decided |") == 3  # the metrics, cases and tcr gates

    gates = ET.parse(tmp_path / "out/junit.xml").getroot()[1]
    assert gates.get("name") == "slow gates"
    assert (gates.get("tests"), gates.get("skipped"), gates.get("failures")) == ("3", "3", "0")
    for case in gates:
        (skipped,) = case.findall("skipped")
        assert skipped.get("message") == f"not decided: {why}"

    with Store(url) as store:
        info = store.get_run("latest")
        assert info.gates_passed is None
        assert info.summary is not None
        assert info.summary.gates_passed is None
        assert info.summary.gates_not_decided == why
        # the server's views read the stored summary
        with TestClient(create_app(store)) as client:
            api = client.get(f"/api/runs/{info.id}").json()
            assert api["gates_passed"] is None
            assert api["summary"]["gates_status"] == "not_decided"
            listed = client.get("/api/runs").json()["items"]
            assert [r["gates_passed"] for r in listed] == [None, True]
            page = client.get(f"/runs/{info.id}").text
            assert 'data-verdict="not decided">not decided</span>' in page
            assert f"Not decided: {why}." in page
            assert 'data-passed="none"' in page
            assert 'data-passed="true"' not in page

    compared = cli.run(
        ["compare", "previous", "latest", "--db", url, "--json", "cmp.json"], tmp_path
    )
    assert compared.code == 0, compared.out + compared.err
    note = f"candidate run {info.id}: {why}"
    assert f"note: gates not decided in the {note}" in compared.out
    assert json.loads((tmp_path / "cmp.json").read_text())["gates_not_decided"] == [note]
