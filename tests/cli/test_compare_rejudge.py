"""``checkweigh compare --rejudge``: a judge change never reads as an agent regression.

End to end: ``checkweigh run`` drives a Python agent (its build chosen by an environment
variable) and judges it through the real OpenAI SDK against a scripted server on 127.0.0.1
that answers by model: ``judge-lenient`` finds every reply polite, ``judge-strict`` only those
that thank the user; both find "I cannot help with that." unhelpful. Then ``compare
--rejudge`` judges the base run's stored outputs again with the candidate's judge, with the
agent set to fail if it were called.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from checkweigh.cli import app
from checkweigh.server import create_app
from checkweigh.store import Store
from checkweigh.testing import FakeLLM, Reply, fake_llm_server
from support.html_page import parse
from support.judge_suite import KEY

CASES = 40
REFUSAL = "I cannot help with that."

AGENT = """\
import os
from pathlib import Path


def run(request):
    build = os.environ["REJUDGE_AGENT_BUILD"]
    if build == "must-not-run":
        Path(os.environ["REJUDGE_AGENT_CALLED"]).write_text("called")
        raise RuntimeError("the agent was called")
    n = request["n"]
    if build == "crashes-once" and n == 7:
        raise RuntimeError("calendar service unavailable")
    if build == "regressed" and n % 10 < 3:  # the seeded regression: 30% of the cases
        reply = "I cannot help with that."
    else:
        reply = f"Booked meeting {n} on Tuesday at 10:00." + (" Thanks!" if n % 5 < 3 else "")
    return {"trace": [{"kind": "assistant", "content": reply}], "final_state": {"n": n}}
"""

SUITE = """\
name: rejudged
cases: cases.jsonl
target: {agent: "rejudge_agent:run", timeout_s: 10}
checks:
  helpful:
    type: judge
    question: Does the final answer do what the user asked?
  polite:
    type: judge
    question: Does the final answer thank the user?
rubrics:
  completion:
    weights: {helpful: 0.7, polite: 0.3}
thresholds: {pass_policy: all_checks, cases_pass_threshold: 0, metrics_pass_threshold: 0}
judge:
  backoff_initial_s: 0.01
"""


def _judge(body: dict[str, Any]) -> Reply:
    """Deterministic verdicts by model, check and reply."""
    prompt = body["messages"][-1]["content"]
    if "do what the user asked" in prompt:
        yes = REFUSAL not in prompt
    else:
        yes = body["model"] == "judge-lenient" or "Thanks!" in prompt
    verdict = "yes" if yes else "no"
    return Reply(json.dumps({"verdict": verdict, "reason": f"judged {verdict}"}))


class Bench:
    """A suite folder, its database and the commands run on it."""

    def __init__(self, folder: Path, server: FakeLLM) -> None:
        folder.mkdir()
        (folder / "rejudge_agent.py").write_text(AGENT)
        (folder / "suite.yaml").write_text(SUITE)
        lines = [json.dumps({"id": f"meet-{n:02d}", "input": {"n": n}}) for n in range(CASES)]
        (folder / "cases.jsonl").write_text("\n".join(lines) + "\n")
        self.folder, self.server = folder, server
        self.db = f"sqlite:///{folder / 'runs.db'}"
        self.called = folder / "agent-called"

    def invoke(self, *args: str, build: str = "must-not-run") -> tuple[int, str]:
        env = {
            "OPENAI_API_KEY": KEY,
            "OPENAI_BASE_URL": self.server.base_url,
            "CHECKWEIGH_CACHE_DIR": str(self.folder / "cache"),
            "REJUDGE_AGENT_BUILD": build,
            "REJUDGE_AGENT_CALLED": str(self.called),
            "COLUMNS": "250",
        }
        done = CliRunner().invoke(app, list(args), env=env)
        return done.exit_code, done.stdout + done.stderr

    def run(self, build: str, judge: str) -> str:
        code, out = self.invoke(
            "run",
            str(self.folder / "suite.yaml"),
            "--db",
            self.db,
            "-q",
            "--judge",
            f"openai:{judge}",
            build=build,
        )
        assert code == 0, out
        return Store(self.db).get_run("latest").id

    def rejudge(self, base: str, cand: str, *args: str) -> tuple[int, str, dict[str, Any]]:
        out_file = self.folder / "cmp.json"
        code, out = self.invoke(
            "compare", base, cand, "--db", self.db, "--rejudge", "--json", str(out_file), *args
        )
        data = json.loads(out_file.read_text()) if out_file.exists() else {}
        return code, out, data


def _figure(data: dict[str, Any], metric: str) -> dict[str, Any]:
    found = [f for f in data["rejudge"]["figures"] if f["metric"] == metric]
    assert len(found) == 1, data["rejudge"]["figures"]
    return found[0]


def _covers(part: dict[str, Any], value: float) -> bool:
    return bool(part["low"] - 1e-9 <= value <= part["high"] + 1e-9)


@pytest.fixture
def bench(tmp_path: Path) -> Any:
    with fake_llm_server([], respond=_judge) as server:
        yield Bench(tmp_path / "suite", server)


def test_a_seeded_agent_regression_under_a_judge_swap_is_split(bench: Bench) -> None:
    base = bench.run("good", "judge-lenient")
    cand = bench.run("regressed", "judge-strict")
    sent = len(bench.server.requests)
    code, out, data = bench.rejudge(base, cand, "--markdown", str(bench.folder / "cmp.md"))
    # the agent part is a significant drop of 30 points: a regression, exit 1
    assert code == 1, out
    assert not bench.called.exists()  # (c) no agent was called
    split = data["rejudge"]
    assert split["base_run"] == base
    assert split["judge"] == "openai:judge-strict"
    assert split["differences"] == [
        "judge openai:judge-lenient in the base, openai:judge-strict in the candidate"
    ]
    # the seeded regression: 12 of 40 refusals, which fail `helpful` (and `polite`); the
    # swap: the strict judge fails `polite` on the 16 good replies that do not thank
    passed = _figure(data, "case pass rate (%)")
    assert (passed["base"], passed["rejudged"], passed["candidate"]) == (100.0, 60.0, 30.0)
    assert passed["total"]["change"] == pytest.approx(-70.0)
    assert passed["judge"]["change"] == pytest.approx(-40.0)
    assert _covers(passed["judge"], -40)
    assert passed["agent"]["change"] == pytest.approx(-30.0)
    assert _covers(passed["agent"], -30)
    assert passed["agent"]["paired"]
    assert passed["agent"]["n"] == CASES
    assert passed["agent"]["high"] < 0  # the interval tells the agent's drop from noise
    helpful = _figure(data, "check helpful pass rate (%)")
    assert helpful["judge"]["change"] == 0.0
    assert _covers(helpful["judge"], 0)
    assert helpful["agent"]["change"] == pytest.approx(-30.0)
    assert _covers(helpful["agent"], -30)
    polite = _figure(data, "check polite pass rate (%)")
    assert polite["judge"]["change"] == pytest.approx(-40.0)
    assert _covers(polite["judge"], -40)
    # the rest of the comparison is the candidate against the rejudged base: same judge
    rejudged = split["rejudged_run"]
    assert data["base"] == rejudged
    assert data["judged_differently"] == []
    assert len(data["regressions"]) == 12
    assert {r["case_id"] for r in data["regressions"]} == {
        f"meet-{n:02d}" for n in range(CASES) if n % 10 < 3
    }
    # the base's outputs judged again, once per judge check: the 28 the candidate also gave
    # were judged by the strict judge in the candidate's run, and come from the cache
    assert len(bench.server.requests) - sent == 2 * 12
    # the rejudged run is stored, tagged with what it is
    with Store(bench.db) as store:
        info = store.get_run(rejudged)
        assert info.config["rejudge"] == {
            "base": base,
            "judged_as": cand,
            "judge": "openai:judge-strict",
        }
        assert info.config["judge"] == "openai:judge-strict"
        assert info.config["target"] is None
        assert info.executions == CASES
        # latest and previous stay the agent's runs: a later `compare previous latest` is not
        # handed the rejudge
        assert (store.get_run("previous").id, store.get_run("latest").id) == (base, cand)
        assert [r.id for r in store.list_runs()] == [rejudged, cand, base]
    flat = " ".join(out.split())
    assert f"rejudged the {CASES} execution(s) of run {base} with openai:judge-strict" in flat
    assert "judge part and agent part (95% intervals)" in flat
    row = "case pass rate (%) │ 100.0 │ 60.0 │ 30.0 │ -70.0 [-85.0, -55.0] │ -40.0 [-55.0, -25.0] │"
    assert row + " -30.0 [-45.0, -15.0]" in flat
    markdown = (bench.folder / "cmp.md").read_text()
    assert "### Judge part and agent part" in markdown
    assert (
        "| case pass rate (%) | 100.0 | 60.0 | 30.0 | -70.0 \\[-85.0, -55.0\\] "
        "| -40.0 \\[-55.0, -25.0\\] | -30.0 \\[-45.0, -15.0\\] |"
    ) in markdown


def test_a_judge_swap_on_identical_outputs_puts_nothing_on_the_agent(bench: Bench) -> None:
    base = bench.run("good", "judge-lenient")
    cand = bench.run("good", "judge-strict")
    code, out, data = bench.rejudge(base, cand)
    assert code == 0, out  # the total drop is all the judge's: no agent regression
    assert not bench.called.exists()
    for figure in data["rejudge"]["figures"]:
        agent = figure["agent"]
        assert agent["change"] == 0.0, figure
        assert _covers(agent, 0.0), figure
        assert figure["judge"]["change"] == pytest.approx(figure["total"]["change"]), figure
    passed = _figure(data, "case pass rate (%)")
    assert passed["total"]["change"] == pytest.approx(-40.0)
    assert data["regressions"] == []
    assert data["verdict"] == "no_regression"
    # without --rejudge the same two runs read as a regression
    code, out = bench.invoke("compare", base, cand, "--db", bench.db)
    assert code == 1, out
    # the server judges nothing: it shows the split of the rejudge the store holds
    with Store(bench.db) as store, TestClient(create_app(store)) as client:
        params = {"base": base, "candidate": cand}
        answer = client.get("/api/runs/compare", params=params).json()
        page = parse(client.get("/compare", params=params).text)
    assert answer["base"] == base  # the comparison of the two runs as given, with the split
    assert answer["judged_differently"] == data["rejudge"]["differences"]
    assert answer["rejudge"] == data["rejudge"]
    row = page.by_id("rejudge-split").all("tr", data_metric="case pass rate (%)")[0]
    total, judge, agent = (row.all("td", data_part=str(i))[0].text for i in range(3))
    assert total == judge == "-40.0 [-55.0, -25.0]"
    assert agent == "+0.0 [+0.0, +0.0]"


def test_a_repeated_rejudge_asks_the_judge_nothing(bench: Bench) -> None:
    base = bench.run("good", "judge-lenient")
    cand = bench.run("regressed", "judge-strict")
    first = bench.rejudge(base, cand)
    sent = len(bench.server.requests)
    second = bench.rejudge(base, cand)
    assert len(bench.server.requests) == sent  # (d) every verdict came from the cache
    assert first[0] == second[0] == 1
    figures = [
        [{k: v for k, v in f.items()} for f in data["rejudge"]["figures"]]
        for data in (first[2], second[2])
    ]
    assert figures[0] == figures[1]
    assert first[2]["rejudge"]["rejudged_run"] != second[2]["rejudge"]["rejudged_run"]
    assert not bench.called.exists()
    # a CI compare against an export takes the suite's latest agent run, not a rejudge
    export, out_file = bench.folder / "base.json", bench.folder / "ci.json"
    assert bench.invoke("show", base, "--db", bench.db, "--json", str(export))[0] == 0
    code, out = bench.invoke(
        "compare", "--baseline", str(export), "--db", bench.db, "--json", str(out_file)
    )
    assert code == 1, out  # judged differently, not rejudged: the total drop
    assert json.loads(out_file.read_text())["candidate"] == cand


def test_runs_judged_alike_are_not_rejudged(bench: Bench) -> None:
    base = bench.run("good", "judge-strict")
    cand = bench.run("regressed", "judge-strict")
    runs = len(Store(bench.db).list_runs())
    sent = len(bench.server.requests)
    code, out, data = bench.rejudge(base, cand)
    assert code == 1, out  # the agent's regression, judged alike
    assert "note: the runs were judged alike: --rejudge has nothing to do" in out
    assert data["rejudge"] is None
    assert len(Store(bench.db).list_runs()) == runs
    assert len(bench.server.requests) == sent


def test_a_base_without_stored_cases_is_refused_in_one_line(bench: Bench) -> None:
    base = bench.run("good", "judge-lenient")
    cand = bench.run("good", "judge-strict")
    # as results uploaded, or stored before the cases were kept
    with sqlite3.connect(bench.folder / "runs.db") as conn:
        conn.execute("DELETE FROM case_bodies WHERE run_id = ?", (base,))
    code, out, _ = bench.rejudge(base, cand)
    assert code == 2, out
    assert out.strip() == (
        f"error: BASE: run {base} stored no case for 'meet-00' (results uploaded or stored "
        "before cases were kept); rejudging needs each case with its trace"
    )
    assert len(Store(bench.db).list_runs()) == 2


def test_judge_without_rejudge_and_exports_are_refused(bench: Bench) -> None:
    base = bench.run("good", "judge-lenient")
    cand = bench.run("good", "judge-strict")
    code, out = bench.invoke("compare", base, cand, "--db", bench.db, "--judge", "openai:x")
    assert (code, out.strip()) == (
        2,
        "error: --judge: a judge is chosen for --rejudge: give --rejudge too",
    )
    export = bench.folder / "base.json"
    code, out = bench.invoke("show", base, "--db", bench.db, "--json", str(export))
    assert code == 0, out
    code, out = bench.invoke(
        "compare", cand, "--db", bench.db, "--baseline", str(export), "--rejudge"
    )
    assert code == 2, out
    assert "--rejudge: --rejudge judges the base run's stored cases again" in out


def test_an_execution_the_agent_failed_stays_as_it_was(bench: Bench) -> None:
    base = bench.run("crashes-once", "judge-lenient")
    cand = bench.run("good", "judge-strict")
    code, out, data = bench.rejudge(base, cand)
    assert code == 0, out
    split = data["rejudge"]
    assert split["kept"] == 1
    assert "1 execution(s) the agent failed stay as they were" in " ".join(out.split())
    with Store(bench.db) as store:
        assert store.get_run(split["rejudged_run"]).executions == CASES - 1
    # meet-07 errored in the base and stays errored: 23 of the other 39 thank the user
    passed = _figure(data, "case pass rate (%)")
    assert (passed["base"], passed["rejudged"], passed["candidate"]) == (97.5, 57.5, 60.0)
    assert passed["agent"]["change"] == pytest.approx(2.5)
    assert passed["agent"]["n"] == CASES
    assert data["improvements"][0]["case_id"] == "meet-07"


def test_another_judge_can_be_named_and_what_still_differs_is_warned(bench: Bench) -> None:
    base = bench.run("good", "judge-lenient")
    cand = bench.run("good", "judge-strict")
    sent = len(bench.server.requests)
    code, out, data = bench.rejudge(base, cand, "--judge", "openai:judge-lenient")
    # the rejudged run is not judged as the candidate: the drop is read as without --rejudge
    assert code == 1, out
    assert "warning: the runs were judged differently" in out
    assert len(bench.server.requests) == sent  # the base's own verdicts, from the cache
    assert data["rejudge"]["judge"] == "openai:judge-lenient"
    for figure in data["rejudge"]["figures"]:
        assert figure["judge"]["change"] == 0.0, figure
    # the rejudged run and the candidate were still judged differently: the warning stays
    assert data["judged_differently"] == [
        "judge openai:judge-lenient in the base, openai:judge-strict in the candidate"
    ]


def test_a_suite_whose_checks_changed_is_refused_in_one_line(bench: Bench) -> None:
    base = bench.run("good", "judge-lenient")
    cand = bench.run("good", "judge-strict")
    suite = bench.folder / "suite.yaml"
    suite.write_text(suite.read_text().replace("thank the user?", "greet the user?"))
    code, out, _ = bench.rejudge(base, cand)
    assert code == 2, out
    assert out.strip() == (
        f"error: {suite}: the suite no longer defines the checks run {cand} was judged with "
        "(check 'polite' configured differently (its suite entry changed)); rejudging needs "
        "the candidate's checks as they were"
    )
    assert len(Store(bench.db).list_runs()) == 2
