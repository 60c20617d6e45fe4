"""Repeated judging: the majority decides, the split and flip rate are stored with the
verdict, errored samples do not vote, and an even split is errored, never "no"."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from checkweigh.core import Case, CaseResult, VerdictState
from checkweigh.judges import JudgeCheck, ScriptedJudge
from checkweigh.runs import Evaluator
from checkweigh.store import ResultWriter, Store
from checkweigh.suites import load_suite
from support.evaluating import evaluate_all

CASE = Case(id="t1", trace=[{"kind": "assistant", "content": "Fine. Booked it. Anything else?"}])


def says(verdict: str, reason: str) -> str:
    return json.dumps({"verdict": verdict, "reason": reason})


def ask(script: list[str], samples: int) -> object:
    check = JudgeCheck(question="Is the tone friendly?", samples=samples)
    return asyncio.run(check.evaluate(CASE, ScriptedJudge(script)))


def test_the_majority_decides_and_the_split_is_measured() -> None:
    script = [says("yes", "polite enough"), says("no", "curt"), says("yes", "friendly")] + [
        says("yes", "ok")
    ] * 2
    verdict = ask(script, 5)
    assert verdict.state is VerdictState.PASSED
    assert verdict.reason == "polite enough (4 yes, 1 no, 0 errored of 5)"
    assert verdict.measures == {  # type: ignore[attr-defined]
        "samples": 5.0,
        "yes": 4.0,
        "no": 1.0,
        "errored": 0.0,
        "flip_rate": 0.2,
    }


def test_errored_samples_do_not_vote_and_an_even_split_is_errored() -> None:
    verdict = ask([says("no", "curt"), "junk", "junk", says("yes", "fine")], 3)
    assert verdict.state is VerdictState.ERRORED
    assert verdict.reason == "no majority"
    assert verdict.measures["errored"] == 1.0  # type: ignore[attr-defined]
    verdict = ask(["junk"] * 6, 3)
    assert verdict.state is VerdictState.ERRORED
    assert verdict.reason == "no valid answer (0 yes, 0 no, 3 errored of 3)"


def test_samples_from_a_suite_are_stored_with_their_flip_rate(tmp_path: Path) -> None:
    (tmp_path / "cases.jsonl").write_text(CASE.model_dump_json() + "\n")
    (tmp_path / "suite.yaml").write_text(
        "name: tone\ncases: cases.jsonl\nchecks:\n  friendly:\n    type: judge\n"
        "    question: Is the tone friendly?\n    samples: 3\n    temperature: 0.7\n"
        "rubrics:\n  clarity:\n    weights: {friendly: 1.0}\n"
    )
    suite = load_suite(tmp_path / "suite.yaml")
    judge = ScriptedJudge([says("no", "curt"), says("no", "terse"), says("yes", "fine")])
    results: list[CaseResult] = []
    results.extend(evaluate_all(Evaluator.from_suite(suite, judge), [CASE]))
    assert {r.temperature for r in judge.requests} == {0.7}
    assert sorted(r.tags["sample"] for r in judge.requests) == ["0", "1", "2"]  # cached apart

    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    run_id = store.create_run("tone", "suite.yaml", {"rubrics": []}, 1)
    with ResultWriter(store, run_id) as writer:
        writer.add(results[0])
    (back,) = store.iter_results(run_id)
    stored = back.verdicts["friendly"]
    assert stored.state is VerdictState.FAILED
    assert stored.measures["flip_rate"] == 1 / 3
