"""The pages say what they mean: which pass rate is per rubric and which is overall, what the
comparison's verdict rests on and what its case lists count, titled charts, numbered turns,
the cases table before the charts, a repeated run's pass@k, pass^k and flaky tasks, and one
case of two runs side by side."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from urllib.parse import quote

from fastapi.testclient import TestClient

from checkweigh.server import create_app
from checkweigh.store import Store
from runs.test_reliability_runs import AGENT, CHANCES, SUITE, TRIES
from server.conftest import SCRIPT_ID, Stored
from server.test_pages import page
from support.cli_process import run_cli
from support.conversation_suite import scripted, write_desk


def test_pass_rates_say_whether_they_are_per_rubric_or_overall(
    client: TestClient, stored: Stored
) -> None:
    charts = page(client, f"/runs/{stored.candidate}").by_id("charts")
    caption = charts.one("figure", "rubric-pass-rates").one("figcaption").text
    assert "completion: each check's pass rate within this rubric" in caption
    assert "over the 13 execution(s) it applied to" in caption
    compare = page(client, f"/compare?base={stored.base}&candidate={stored.candidate}")
    deltas = compare.by_id("check-deltas")
    assert "Per-check pass rates, overall" in deltas.one("h2").text
    assert "whatever the rubric" in deltas.text


def test_the_comparison_says_what_decides_it_and_what_its_case_lists_count(
    client: TestClient, stored: Stored
) -> None:
    # lenient thresholds: no suite regression, yet three executions got worse
    path = (
        f"/compare?base={stored.base}&candidate={stored.candidate}"
        "&max_pass_rate_drop=50&max_avg_score_drop=50"
    )
    tree = page(client, path)
    verdict = tree.by_id("verdict")
    assert "suite verdict: no regression" in verdict.one("h2").text
    basis = verdict.one(id="verdict-basis").text
    assert "Decided by the suite metrics" in basis
    assert "3 of 13 paired execution(s) got worse and 0 got better" in basis
    worse = tree.by_id("regressions")
    assert worse.one("h2").text == "Executions that got worse 3 of 13 paired"
    assert "Regressions" not in tree.text


def test_the_stability_charts_are_titled(client: TestClient, stored: Stored) -> None:
    tree = page(client, f"/runs/{stored.base}/stability?noise=correct_time%3D0.2&sims=200")
    titles = [
        f.one("figcaption", "chart-title").text for f in tree.by_id("stability").all("figure")
    ]
    assert titles == [
        "Mean case score (the metrics gate) in 200 simulated reruns",
        "Case pass rate (the cases gate) in 200 simulated reruns",
    ]


def test_the_cases_table_comes_before_the_charts_and_its_filter_keeps_the_place(
    client: TestClient, stored: Stored
) -> None:
    tree = page(client, f"/runs/{stored.candidate}")
    ids = [n.get("id") for n in tree.iter() if n.get("id")]
    assert ids.index("gates") < ids.index("cases-section") < ids.index("charts")
    assert ids.index("case-filter") < ids.index("cases") < ids.index("charts")
    form = tree.by_id("case-filter")
    assert form.get("action") == f"/runs/{stored.candidate}#cases-section"
    assert tree.one("nav", "jump").all("a")[0].get("href") == "#cases-section"


def test_each_turn_of_a_conversation_is_numbered(tmp_path: Path) -> None:
    said = ["Book me at 09:00", "Actually make it 11:30", "bye"]
    suite = write_desk(
        tmp_path / "desk",
        [scripted("moved", said, time="11:30", stop_reason="agent_ended", last_reply="Goodbye.")],
    )
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    done = run_cli("run", str(suite), "--db", db, "-q", cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    with Store(db) as store, TestClient(create_app(store)) as client:
        run_id = store.get_run("latest").id
        conversation = page(client, f"/runs/{run_id}/cases/moved?repeat=0").by_id("conversation")
    heads = conversation.all("h3", "turn-sep")
    # counted from 0, as the agent's request (`turn`), its errors and replay misses count them
    assert [h.get("data-turn") for h in heads] == ["0", "1", "2"]
    assert [h.text for h in heads] == [
        "turn 0 of 3, counted from 0 as in the agent's requests and errors",
        "turn 1",
        "turn 2",
    ]
    steps = conversation.all("div", "turn")
    users = [s for s in steps if s.get("data-kind") == "user"]
    assert [u.one("div", "content").text for u in users] == said
    # every step after a user message belongs to that message's turn
    assert steps[0].get("data-turn") == "0"
    assert sorted({s.get("data-turn") for s in steps}) == ["0", "1", "2"]
    assert "3 turns" in conversation.one("h2").text


def test_a_single_turn_case_has_no_turn_marks(client: TestClient, stored: Stored) -> None:
    conversation = page(client, f"/runs/{stored.base}/cases/ok-1?repeat=0").by_id("conversation")
    assert conversation.all("h3", "turn-sep") == []


def test_a_repeated_run_shows_pass_at_k_pass_hat_k_and_its_flaky_tasks(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(AGENT.format(chances=CHANCES))
    (tmp_path / "suite.yaml").write_text(SUITE)
    cases = "".join(json.dumps({"id": c, "input": {"case": c}}) + "\n" for c in CHANCES)
    (tmp_path / "cases.jsonl").write_text(cases)
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    done = run_cli("run", "suite.yaml", "--repeat", str(TRIES), "--db", db, cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    with Store(db) as store, TestClient(create_app(store)) as client:
        run_id = store.get_run("latest").id
        api = client.get(f"/api/runs/{run_id}").json()["summary"]["reliability"]
        items = client.get(f"/api/runs/{run_id}/results?limit=100").json()["items"]
        tree = page(client, f"/runs/{run_id}")
        section = tree.by_id("reliability")
        rows = section.one(id="pass-at-k").all("tr")
        shown = {r.get("data-k"): [c.text for c in r.all("td")] for r in rows if r.get("data-k")}
        for row in api["by_k"]:
            assert shown[str(row["k"])] == [
                str(row["k"]),
                f"{100 * row['pass_at_k']:.1f}%",
                f"{100 * row['pass_hat_k']:.1f}%",
                str(row["tasks"]),
            ]
        # flaky: the tasks whose tries disagree, from the results themselves
        states: dict[str, dict[int, str]] = {}
        for item in items:
            states.setdefault(item["case_id"], {})[item["repeat"]] = item["state"]
        flaky = {c for c, tries in states.items() if len(set(tries.values())) > 1}
        assert flaky
        assert flaky != set(states)
        listed = [r for r in section.one(id="flaky").all("tr") if r.get("data-case-id")]
        assert {r.get("data-case-id") for r in listed} == flaky
        assert str(api["flaky_tasks"]) in section.one(id="flaky-tasks").text
        for row in listed:
            case = row.get("data-case-id") or ""
            links = row.all("a", "repeat-link")
            assert [
                (int(a.get("data-repeat") or -1), a.get("data-state")) for a in links
            ] == sorted(states[case].items())
            assert links[1].get("href") == f"/runs/{run_id}/cases/{quote(case, safe='')}?repeat=1"
            passes = sum(s == "passed" for s in states[case].values())
            assert f"{passes} of {TRIES}" in row.text
        # a case page links its case's other tries
        case = sorted(flaky)[0]
        tries = page(client, f"/runs/{run_id}/cases/{case}?repeat=2").by_id("repeats")
        assert [a.get("data-repeat") for a in tries.all("a", "repeat-link")] == ["0", "1", "3"]
        current = tries.one("strong", "repeat-link")
        assert (current.get("data-repeat"), current.get("data-state")) == ("2", states[case][2])


def test_one_case_of_two_runs_side_by_side(client: TestClient, stored: Stored) -> None:
    compare = page(client, f"/compare?base={stored.base}&candidate={stored.candidate}")
    row = compare.by_id("regressions").one("tr", data_case_id="good-0")
    link = row.one("a", "side-by-side-link").get("href") or ""
    assert link == (
        f"/compare/cases/good-0?base={stored.base}&candidate={stored.candidate}&repeat=0"
    )
    tree = page(client, link)
    base = client.get(f"/api/runs/{stored.base}/results/good-0?repeat=0").json()
    candidate = client.get(f"/api/runs/{stored.candidate}/results/good-0?repeat=0").json()
    sides = {s.get("data-side"): s for s in tree.by_id("case-verdicts").all("section", "side")}
    assert sides["base"].one("div", "state-box").get("data-state") == base["state"] == "passed"
    assert sides["candidate"].one("div", "state-box").get("data-state") == "failed"
    pairs = {r.get("data-check"): r for r in tree.by_id("check-pairs").all("tr", "check-pair")}
    assert set(pairs) == set(base["verdicts"])
    for name, pair in pairs.items():
        b, c = base["verdicts"][name], candidate["verdicts"][name]
        assert (pair.get("data-base"), pair.get("data-candidate")) == (b["state"], c["state"])
        assert pair.get("data-changed") == str(b["state"] != c["state"]).lower()
        reasons = [d.text for d in pair.all("div", "reason")]
        assert reasons == [b["reason"], c["reason"]]
    assert pairs["correct_time"].get("data-changed") == "true"
    assert "1 of 4 changed" in tree.by_id("check-pairs").one("h2").text
    traces = tree.by_id("traces").all("section", "conversation")
    assert [t.get("data-side") for t in traces] == ["base", "candidate"]
    for trace in traces:
        assert trace.all("div", "turn")[0].get("data-kind") == "user"
    # the candidate books the wrong time: both final states, each in its column
    finals = [t.one("pre", "final-state").text for t in traces]
    assert '"time": "10:00"' in finals[0]
    assert '"time": "11:00"' in finals[1]

    # a hostile case id stays text, and a case in neither run is a 404 naming it
    hostile = page(
        client,
        f"/compare/cases/{quote(SCRIPT_ID, safe='')}?base={stored.base}"
        f"&candidate={stored.candidate}",
    )
    assert hostile.one("h1").text == f"case {SCRIPT_ID}"
    missing = client.get(f"/compare/cases/nope?base={stored.base}&candidate={stored.candidate}")
    assert missing.status_code == 404
    assert "nope" in missing.text


def test_the_comparison_of_repeated_runs_lists_tasks_by_pass_rate(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(SUITE)
    cases = "".join(json.dumps({"id": c, "input": {"case": c}}) + "\n" for c in CHANCES)
    (tmp_path / "cases.jsonl").write_text(cases)
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    # the candidate never books "always" right: that task drops from 4/4 to 0/4
    for chances in (CHANCES, CHANCES | {"always": 0.0}):
        # the same size, maybe the same second: the first run's bytecode would be read again
        shutil.rmtree(tmp_path / "__pycache__", ignore_errors=True)
        (tmp_path / "agent.py").write_text(AGENT.format(chances=chances))
        done = run_cli("run", "suite.yaml", "--repeat", str(TRIES), "--db", db, cwd=tmp_path)
        assert done.returncode in (0, 1), done.stderr
    with Store(db) as store, TestClient(create_app(store)) as client:
        candidate, base = (info.id for info in store.list_runs()[:2])
        api = client.get(f"/api/runs/compare?base={base}&candidate={candidate}").json()
        tree = page(client, f"/compare?base={base}&candidate={candidate}")
    assert api["per_task"] is True
    rows = {r.get("data-case-id"): r for r in tree.by_id("tasks").all("tr", "task")}
    assert set(rows) == {t["case_id"] for t in api["tasks"]}
    cells = [c.text for c in rows["always"].all("td")]
    assert cells[1:4] == [f"{TRIES}/{TRIES}", f"0/{TRIES}", "-100 pts"]
    basis = tree.by_id("verdict-basis").text
    assert "task by task" in basis
    dropped = sum(t["change"] < 0 for t in api["tasks"])
    assert f"{dropped} of {api['paired']} task(s) passed less often" in basis
