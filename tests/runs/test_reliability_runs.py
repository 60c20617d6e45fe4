"""pass@k / pass^k through real runs: a seeded flaky agent driven with ``--repeat``, the JSON
export's per-task figures, and flips split into agent and judge variation."""

from __future__ import annotations

import asyncio
import json
import random
from math import comb
from pathlib import Path

import pytest

from checkweigh.core import Case
from checkweigh.judges import JudgeReply, JudgeRequest
from checkweigh.runs import RunOptions, arun
from checkweigh.suites import load_suite
from support.cli_process import run_cli

TRIES = 4
CHANCES = {"always": 1.0, "never": 0.0, "coin": 0.5, "mostly": 0.8, "rarely": 0.25}

AGENT = """\
import random
from collections import Counter

CHANCES = {chances!r}
_tries = Counter()


def book(request):
    case = request["case"]
    try_no = _tries[case]
    _tries[case] += 1
    ok = random.Random(f"{{case}}-{{try_no}}").random() < CHANCES[case]
    time = "10:00" if ok else "11:00"
    return {{
        "trace": [{{"kind": "tool_call", "name": "book_meeting", "arguments": {{"time": time}}}}],
        "final_state": {{"booking": {{"time": time}}}},
    }}
"""

SUITE = """\
name: flaky bookings
cases: cases.jsonl
target: {agent: "agent:book", concurrency: 3}
checks:
  booked_ten:
    type: equals
    path: final_state.booking.time
    value: "10:00"
rubrics:
  completion:
    weights: {booked_ten: 1.0}
gates:
  - {metric: pass_hat_k, k: 2, min: 0.1}
"""


def _passes(case: str) -> int:
    """The tries of ``case`` the seeded agent passes (the same draws as the agent's)."""
    return sum(random.Random(f"{case}-{t}").random() < CHANCES[case] for t in range(TRIES))


def test_a_seeded_flaky_agent_gives_the_closed_form_per_task_and_per_run(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(AGENT.format(chances=CHANCES))
    (tmp_path / "suite.yaml").write_text(SUITE)
    cases = "".join(json.dumps({"id": c, "input": {"case": c}}) + "\n" for c in CHANCES)
    (tmp_path / "cases.jsonl").write_text(cases)
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    done = run_cli(
        "run", "suite.yaml", "--repeat", str(TRIES), "--db", db, "--json", "out.json", cwd=tmp_path
    )
    assert done.returncode in (0, 1), done.stderr
    report = json.loads((tmp_path / "out.json").read_text())
    passes = {c: _passes(c) for c in CHANCES}
    assert 0 < passes["coin"] < TRIES  # the seeds make some tasks flaky

    tasks = {t["case_id"]: t for t in report["tasks"]}
    for case, c in passes.items():
        task = tasks[case]
        assert (task["tries"], task["passes"]) == (TRIES, c)
        for k in range(1, TRIES + 1):
            assert task["pass_hat_k"][str(k)] == pytest.approx(comb(c, k) / comb(TRIES, k))
            at = 1 - comb(TRIES - c, k) / comb(TRIES, k)
            assert task["pass_at_k"][str(k)] == pytest.approx(at)

    found = report["summary"]["reliability"]
    for row in found["by_k"]:
        k = row["k"]
        hat = sum(comb(c, k) / comb(TRIES, k) for c in passes.values()) / len(passes)
        assert row["pass_hat_k"] == pytest.approx(hat)
    flaky = [c for c, n in passes.items() if 0 < n < TRIES]
    assert found["flaky_tasks"] == len(flaky)
    # the agent booked a different time on the failing tries: every flip is the agent's
    assert (found["agent_variation"], found["judge_variation"]) == (len(flaky), 0)
    assert "the agent's trace varied on" in done.stdout
    gate = report["summary"]["gates"][0]
    assert gate["gate"] == "pass^2 >= 0.1"


JUDGED = """\
name: judged twice
cases: cases.jsonl
checks:
  polite:
    type: judge
    question: Is the reply polite?
rubrics:
  tone:
    weights: {polite: 1.0}
"""


class AlternatingJudge:
    """Says yes, then no, then yes... whatever it is shown: a judge that cannot decide."""

    name = "alternating:yes-no"

    def __init__(self) -> None:
        self.calls = 0

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        self.calls += 1
        verdict = "yes" if self.calls % 2 else "no"
        return JudgeReply(text=json.dumps({"reason": "torn", "verdict": verdict}), model="alt")


def test_the_same_trace_judged_differently_is_judge_variation(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(JUDGED)
    (tmp_path / "cases.jsonl").write_text("")
    suite = load_suite(tmp_path / "suite.yaml")
    reply = [{"kind": "assistant", "content": "Booked, thank you!"}]
    cases = [Case(id="thanks", trace=reply, final_state={"success": True})]

    options = RunOptions(repeat=2, concurrency=1)
    report = asyncio.run(arun(suite, options, cases=cases, judge=AlternatingJudge()))
    found = report.summary.reliability
    assert found is not None
    assert (found.flaky_tasks, found.agent_variation, found.judge_variation) == (1, 0, 1)
    (task,) = found.flakiest
    assert (task.judge_varied, task.agent_varied) == (True, False)


def test_repeats_in_the_suite_and_the_flag_that_overrides_it(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(AGENT.format(chances=CHANCES))
    (tmp_path / "suite.yaml").write_text(SUITE.replace("gates:", "repeats: 3\ngates:"))
    (tmp_path / "cases.jsonl").write_text(json.dumps({"id": "coin", "input": {"case": "coin"}}))
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    by_suite = run_cli("run", "suite.yaml", "--db", db, "--json", "a.json", cwd=tmp_path)
    assert by_suite.returncode in (0, 1), by_suite.stderr
    assert json.loads((tmp_path / "a.json").read_text())["run"]["repeat"] == 3
    by_flag = run_cli(
        "run", "suite.yaml", "--repeat", "2", "--db", db, "--json", "b.json", cwd=tmp_path
    )
    assert by_flag.returncode in (0, 1), by_flag.stderr
    assert len(json.loads((tmp_path / "b.json").read_text())["results"]) == 2

    (tmp_path / "suite.yaml").write_text(SUITE.replace("gates:", "repeats: 0\ngates:"))
    bad = run_cli("run", "suite.yaml", "--db", db, cwd=tmp_path)
    assert bad.returncode == 2
    assert "suite.yaml:" in bad.stderr
    assert "repeats" in bad.stderr
    assert "Traceback" not in bad.stderr
