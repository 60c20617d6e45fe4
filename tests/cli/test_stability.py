"""`checkweigh stability RUN`: its flip probabilities against a direct simulation (the same
suite rerun through the engine with a noisy judge), the plot and the HTML page, and one-line
errors for what it cannot do."""

from __future__ import annotations

import json
import random
import re
import signal
import struct
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from checkweigh.cli import app
from checkweigh.core import CaseGates, CaseResult, CaseTally, PassPolicy
from checkweigh.judges import JudgeReply, JudgeRequest
from checkweigh.runs import Evaluator
from checkweigh.server import create_app
from checkweigh.store import Store
from checkweigh.suites import Suite, iter_cases, load_suite
from support import cli_process
from support.engine import run_into
from support.evaluating import evaluate_all
from support.large_run import NOISE, cpu_seconds, store_large_run

JUDGED = ("grounded", "polite", "helpful")
CASES = 12
RERUNS = 1000
"""Direct reruns: a frequency of 0.25 then has a standard error of 1.4 points and one of 0.5
of 1.6, so each of the 15 comparisons lands within 5 points of the exact value in all but
about 1 draw in 200 (the seeds are fixed: the test is deterministic). The predictions use
20,000 simulated reruns, so their own error is a third of that."""
SUITE = """\
name: NAME
cases: cases.jsonl
checks:
  right_time:
    type: equals
    path: final_state.time
    expected_path: ground_truth.time
  right_people:
    type: set_equals
    path: final_state.people
    expected_path: ground_truth.people
  grounded:
    type: judge
    question: "grounded: is every claim in the final answer supported by the trace?"
    samples: K_GROUNDED
  polite:
    type: judge
    question: "polite: is the final reply polite?"
    samples: K_POLITE
  helpful:
    type: judge
    question: "helpful: does the final reply say what happens next?"
rubrics:
  completion:
    weights:
      right_time: 0.3
      right_people: 0.2
      grounded: 0.2
      polite: 0.15
      helpful: 0.15
thresholds:
  pass_threshold: 75
  metrics_pass_threshold: 82
  cases_pass_threshold: 70
"""


class NoisyJudge:
    """Answers the truth written into the case (``[polite:yes]``), the other way with
    probability ``p`` per answer, from its own seeded generator."""

    name = "noisy:fake"

    def __init__(self, p: float, seed: int) -> None:
        self.p = p
        self.rng = random.Random(seed)

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        text = request.messages[-1].content
        match = re.search(r"Question: (\w+):", text)
        assert match is not None
        key = match.group(1)
        yes = f"[{key}:yes]" in text
        if self.rng.random() < self.p:
            yes = not yes
        answer = {"verdict": "yes" if yes else "no", "reason": key}
        return JudgeReply(text=json.dumps(answer), model="fake")


def write_suite(
    folder: Path,
    *,
    n: int = CASES,
    k: tuple[int | str, int | str] = (1, 1),
    name: str = "noisy",
    ids: Any = None,
) -> Suite:
    rng = random.Random(7)
    lines = []
    for i in range(n):
        tags = " ".join(f"[{key}:{'yes' if rng.random() < 0.7 else 'no'}]" for key in JUDGED)
        case = {
            "id": ids[i] if ids else f"case-{i:02d}",
            "trace": [{"kind": "assistant", "content": f"Booked. {tags}"}],
            "final_state": {
                "time": "10:00" if rng.random() < 0.8 else "11:00",
                "people": ["A", "B"] if rng.random() < 0.85 else ["A"],
            },
            "ground_truth": {"time": "10:00", "people": ["A", "B"]},
        }
        lines.append(json.dumps(case) + "\n")
    folder.mkdir(parents=True, exist_ok=True)
    text = SUITE.replace("K_GROUNDED", str(k[0])).replace("K_POLITE", str(k[1]))
    (folder / "suite.yaml").write_text(text.replace("NAME", json.dumps(name)))
    (folder / "cases.jsonl").write_text("".join(lines))
    return load_suite(folder / "suite.yaml")


def decide(policy: PassPolicy, results: list[CaseResult]) -> tuple[dict[str, bool], CaseGates]:
    tally = CaseTally(policy)
    passed = {r.case_id: tally.add(r).passed for r in results}
    return passed, tally.gates()


def direct_flips(
    suite: Suite, reference: list[CaseResult], p: float, reruns: int, seed: int = 1000
) -> dict[str, float]:
    """Rerun the suite ``reruns`` times through the engine with a judge of per-answer noise
    ``p``: how often each case's pass/fail and each gate differ from the reference run.

    The reruns score the cases with the suite's evaluator, without storing them."""
    ref_cases, ref_gates = decide(suite.policy, reference)
    flips = dict.fromkeys([*ref_cases, "metrics", "cases", "overall"], 0)
    cases_in = list(iter_cases(suite.cases_path))
    for i in range(reruns):
        got: list[CaseResult] = []
        judge = NoisyJudge(p, seed + i)
        got.extend(evaluate_all(Evaluator.from_suite(suite, judge), cases_in, judge=judge))
        cases, gates = decide(suite.policy, got)
        for case_id, ok in cases.items():
            flips[case_id] += ok != ref_cases[case_id]
        flips["metrics"] += gates.metrics_passed != ref_gates.metrics_passed
        flips["cases"] += gates.cases_passed != ref_gates.cases_passed
        flips["overall"] += gates.passed_both != ref_gates.passed_both
    return {name: n / reruns for name, n in flips.items()}


def stability(db: str, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["stability", "latest", "--db", db, *args])
    return result.exit_code, result.stdout + result.stderr


def predicted(db: str, out: Path, *args: str) -> dict[str, Any]:
    code, text = stability(db, "--json", str(out), *args)
    assert code == 0, text
    report: dict[str, Any] = json.loads(out.read_text())["stability"]
    flips = {c["case_id"]: c["flip"]["p"] for c in report["cases"]}
    flips.update({g["gate"]: g["flip"]["p"] for g in report["gates"]})
    report["flips"] = flips
    return report


def assert_matches(predicted: dict[str, float], direct: dict[str, float]) -> None:
    assert predicted.keys() == direct.keys()
    gaps = {name: abs(predicted[name] - direct[name]) for name in direct}
    table = {name: (round(predicted[name], 3), round(direct[name], 3)) for name in direct}
    assert max(gaps.values()) <= 0.05, table  # within 5 points, every case and every gate
    assert sum(gaps.values()) / len(gaps) <= 0.025, table


def test_flip_probabilities_match_a_direct_simulation(tmp_path: Path) -> None:
    """12 cases, 3 judge checks asked once, judge noise 15%: the stability report on a run
    of the judge's usual answers predicts how often 1000 reruns flip each case and gate."""
    suite = write_suite(tmp_path / "s")
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    store = Store(db)
    run_into(suite, store, judge=NoisyJudge(0.0, 0))  # the reference: the judge's usual answers
    reference = list(store.iter_results(store.get_run("latest").id))
    report = predicted(db, tmp_path / "out.json", "--noise", "0.15", "--sims", "20000")
    direct = direct_flips(suite, reference, 0.15, RERUNS)
    assert_matches(report["flips"], direct)
    # the thresholds sit inside the noise, and the report says so
    assert 0.25 < report["flips"]["metrics"] < 0.75
    assert 0.25 < report["flips"]["cases"] < 0.75
    text = " ".join(report["warnings"])
    assert "metrics pass threshold 82 sits inside the 95% spread" in text
    assert "cases pass threshold 70 sits inside the 95% spread" in text
    assert "pick the cutoff and the number of checks together" in text


def test_majority_votes_and_even_splits_match_a_direct_simulation(tmp_path: Path) -> None:
    """grounded is the majority of 3 answers, polite of 2 (an even split is errored): the
    binomial flip and tie chances match the engine's own majority vote over 800 reruns."""
    suite = write_suite(tmp_path / "s", n=8, k=(3, 2))
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    store = Store(db)
    run_into(suite, store, judge=NoisyJudge(0.0, 0))
    reference = list(store.iter_results(store.get_run("latest").id))
    report = predicted(db, tmp_path / "out.json", "--noise", "0.12", "--sims", "20000")
    noise = {n["check"]: n for n in report["noise"]}
    assert (noise["grounded"]["samples"], noise["polite"]["samples"]) == (3, 2)
    assert noise["polite"]["tie"] == pytest.approx(2 * 0.12 * 0.88)
    direct = direct_flips(suite, reference, 0.12, 800)
    assert_matches(report["flips"], direct)


def test_measured_rates_are_the_rates_given_by_hand(tmp_path: Path) -> None:
    """Without --noise, the per-answer rate comes from the stored samples; the report is the
    one --noise CHECK=RATE with those rates gives."""
    suite = write_suite(tmp_path / "s", k=(5, 3))
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    run_into(suite, Store(db), judge=NoisyJudge(0.2, 11))
    measured = predicted(db, tmp_path / "m.json")
    noise = {n["check"]: n for n in measured["noise"]}
    assert noise["grounded"]["source"] == noise["polite"]["source"] == "measured"
    assert (noise["grounded"]["answers"], noise["polite"]["answers"]) == (60, 36)
    assert 0.05 < noise["grounded"]["answer_noise"] < 0.4
    assert noise["helpful"]["source"] == "unmeasured"  # asked once: nothing to measure
    rates = [f"{c}={noise[c]['answer_noise']!r}" for c in ("grounded", "polite")]
    given = predicted(db, tmp_path / "g.json", "--noise", rates[0], "--noise", rates[1])
    assert given["flips"] == measured["flips"]
    assert any("no noise measured for helpful" in n for n in measured["notes"])


def test_adaptive_samples_are_rerun_by_their_own_rule(tmp_path: Path) -> None:
    """grounded asks ``samples: auto`` (until one verdict leads by two, at most 9), polite a
    fixed 3: the predicted flips match 800 reruns of the engine's own adaptive asking."""
    suite = write_suite(tmp_path / "s", n=8, k=("auto", 3))
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    store = Store(db)
    run_into(suite, store, judge=NoisyJudge(0.0, 0))
    reference = list(store.iter_results(store.get_run("latest").id))
    report = predicted(db, tmp_path / "out.json", "--noise", "0.25", "--sims", "20000")
    grounded = next(n for n in report["noise"] if n["check"] == "grounded")
    assert (grounded["adaptive"], grounded["samples"]) == (True, 9)
    # pairs of answers until one pair agrees (wrong: p^2), the ninth answer after four ties
    p, pair_split = 0.25, 2 * 0.25 * 0.75
    flip = p**2 * sum(pair_split**j for j in range(4)) + pair_split**4 * p
    calls = (1 - pair_split) * sum(2 * (j + 1) * pair_split**j for j in range(4))
    assert grounded["flip"] == pytest.approx(flip, abs=1e-12)
    assert grounded["mean_samples"] == pytest.approx(calls + 9 * pair_split**4, abs=1e-12)
    direct = direct_flips(suite, reference, 0.25, 800)
    assert_matches(report["flips"], direct)


def test_adaptive_noise_is_measured_by_maximum_likelihood(tmp_path: Path) -> None:
    """300 cases judged with ``samples: auto`` at a per-answer noise of 0.15: the noise
    measured from the stopped splits is close to 0.15."""
    suite = write_suite(tmp_path / "s", n=300, k=("auto", "auto"))
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    run_into(suite, Store(db), judge=NoisyJudge(0.15, 5))
    report = predicted(db, tmp_path / "m.json", "--sims", "200")
    noise = {n["check"]: n for n in report["noise"]}
    for check in ("grounded", "polite"):
        got = noise[check]
        assert (got["source"], got["adaptive"]) == ("measured", True)
        assert got["answer_noise"] == pytest.approx(0.15, abs=0.035), got
        assert 300 * 2 < got["answers"] < 300 * 3.2
    shown = f"auto, at most 9 ({noise['grounded']['mean_samples']:.1f} on average)"
    code, out = stability(db, "--sims", "200", "--html", str(tmp_path / "s.html"))
    assert code == 0, out
    assert shown in out
    assert shown in (tmp_path / "s.html").read_text()
    with Store(db) as store, TestClient(create_app(store)) as client:
        answer = client.get(f"/runs/{store.get_run('latest').id}/stability?sims=200")
    assert answer.status_code == 200
    assert shown in answer.text


def test_console_report_png_and_html(tmp_path: Path) -> None:
    evil = "<img src=x onerror=alert(1)>"
    ids = [evil, *(f"case-{i:02d}" for i in range(1, 8))]
    suite = write_suite(tmp_path / "s", n=8, ids=ids, name="<script>alert(2)</script>")
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    run_into(suite, Store(db), judge=NoisyJudge(0.0, 0))
    png, html = tmp_path / "out" / "spread.png", tmp_path / "out" / "report.html"
    code, out = stability(
        db, "--noise", "0.3", "--sims", "500", "--png", str(png), "--html", str(html)
    )
    assert code == 0, out
    assert "500 simulated reruns, seed 0, 8 execution(s)" in out
    assert evil in out  # printed literally on the console, never as markup
    assert "warning: metrics pass threshold 82 sits inside the 95% spread" in out
    assert f"wrote the plot to {png}" in out

    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    assert struct.unpack(">II", data[16:24]) == (1000, 400)
    assert len(data) > 10_000

    page = html.read_text()
    assert evil not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in page
    assert page.count('src="data:image/png;base64,') == 1


def test_repeats_are_executions_of_their_own(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "s", n=4)
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    run_into(suite, Store(db), repeat=2, judge=NoisyJudge(0.0, 0))
    report = predicted(db, tmp_path / "r.json", "--noise", "0.2", "--sims", "300")
    assert sorted((c["case_id"], c["repeat"]) for c in report["cases"]) == [
        (f"case-{i:02d}", r) for i in range(4) for r in (0, 1)
    ]
    code, out = stability(db, "--noise", "0.2", "--sims", "300")
    assert code == 0, out
    assert "┃ case    ┃ repeat ┃ observed ┃" in out


def test_without_the_plots_extra_png_and_html_are_one_line_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = write_suite(tmp_path / "s", n=4)
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    run_into(suite, Store(db), judge=NoisyJudge(0.0, 0))
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib fails
    for flag in ("--png", "--html"):
        code, out = stability(db, "--noise", "0.1", flag, str(tmp_path / "x"))
        assert code == 2
        assert out.strip() == (
            f"error: {flag}: {flag} needs the plots extra; matplotlib is not installed: "
            "pip install 'checkweigh[plots]'"
        )
    code, out = stability(db, "--noise", "0.1", "--sims", "50")  # the console report still works
    assert code == 0, out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--noise", "lots"], "--noise: expected RATE or CHECK=RATE with RATE from 0 to 0.5"),
        (["--noise", "0.7"], "--noise: expected RATE or CHECK=RATE"),
        (["--noise", "=0.1"], "--noise: expected RATE or CHECK=RATE"),
        (["--noise", "0.1", "--noise", "0.2"], "--noise: RATE for every judge check given twice"),
        (["--noise", "tone=0.1"], "--noise: run RUN has no check 'tone'; its checks: right_time,"),
    ],
)
def test_bad_noise_flags(tmp_path: Path, args: list[str], message: str) -> None:
    suite = write_suite(tmp_path / "s", n=2)
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    run_id = run_into(suite, Store(db), judge=NoisyJudge(0.0, 0)).run_id
    code, out = stability(db, *args)
    assert code == 2
    assert out.startswith("error: " + message.replace("RUN", run_id)), out
    assert len(out.strip().splitlines()) == 1


def test_nothing_to_simulate(tmp_path: Path, suite_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    run_id = run_into(load_suite(suite_path), Store(db)).run_id  # no judge checks at all
    code, out = stability(db)
    assert code == 2
    assert out.strip() == (
        f"error: RUN: run {run_id} has no judge checks and no --noise was given: nothing to "
        "simulate (--noise CHECK=RATE treats a check as noisy)"
    )
    code, out = stability(db, "--noise", "0.1")
    assert code == 2
    assert "has no judge checks for RATE to apply to; name a check with CHECK=RATE" in out
    code, out = stability(db, "--noise", "correct_time=0.1", "--sims", "100")
    assert code == 0, out  # a deterministic check treated as noisy on request

    judged = write_suite(tmp_path / "j", n=2)  # judge checks asked once: nothing measured
    run_id = run_into(judged, Store(db), judge=NoisyJudge(0.0, 0)).run_id
    code, out = stability(db)
    assert code == 2
    assert out.strip() == (
        f"error: RUN: run {run_id} stored no repeated judge samples for grounded, polite, "
        "helpful (samples: k > 1): nothing to measure the noise from; give --noise with RATE "
        "from 0 to 0.5 (the chance one judge answer differs from its usual answer)"
    )


def test_ctrl_c_ends_a_long_simulation_with_130(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    run_id = store_large_run(tmp_path / "suite", db)
    out = tmp_path / "stability.json"
    args = ["stability", run_id, "--db", db, "--sims", "1000000", "--json", str(out)]
    proc = cli_process.start([*args, *(a for n in NOISE for a in ("--noise", n))], tmp_path)
    try:
        deadline = time.monotonic() + 30
        # past start-up and reading the run: a million reruns take minutes from here
        while cpu_seconds(proc.pid) < 2.5:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the simulation never started"
            time.sleep(0.1)
        began = time.monotonic()
        proc.send_signal(signal.SIGINT)
        done = cli_process.finish(proc, began, timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert done.code == 130, done.err
    assert "Traceback" not in done.err
    assert done.seconds < 5
    assert not out.exists()
