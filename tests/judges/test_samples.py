"""Repeated judging: the majority decides, the split and flip rate are stored with the
verdict, errored samples do not vote, and an even split is errored, never "no". With
``samples: auto`` the answers are asked one at a time until the stopping rule settles it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from checkweigh.cli import app
from checkweigh.core import AutoSamples, Case, CaseResult, VerdictState
from checkweigh.errors import SuiteError
from checkweigh.judges import JudgeCheck, ScriptedJudge
from checkweigh.runs import Evaluator
from checkweigh.store import ResultWriter, Store
from checkweigh.suites import load_suite
from checkweigh.testing import Reply, fake_llm_server
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


# samples: auto -------------------------------------------------------------------------------


def ask_auto(script: list[str], **rule: object) -> tuple[object, ScriptedJudge]:
    check = JudgeCheck(question="Is the tone friendly?", samples={"auto": True, **rule})
    judge = ScriptedJudge(script)
    return asyncio.run(check.evaluate(CASE, judge)), judge


YES, NO = says("yes", "friendly"), says("no", "curt")
SHAPE = "a whole number from 1 to 25, 'auto', or {auto: true, max, error, noise}"


def test_two_agreeing_answers_settle_an_adaptive_verdict() -> None:
    verdict, judge = ask_auto([YES, YES, NO, NO, NO])
    assert len(judge.requests) == 2  # the rest of the script is never asked
    assert verdict.state is VerdictState.PASSED
    assert verdict.reason == "friendly (2 yes, 0 no, 0 errored of 2)"
    assert verdict.measures == {  # type: ignore[attr-defined]
        "samples": 2.0,
        "yes": 2.0,
        "no": 0.0,
        "errored": 0.0,
        "flip_rate": 0.0,
        "adaptive": 1.0,
    }
    assert [r.tags["sample"] for r in judge.requests] == ["0", "1"]


def test_a_disagreement_asks_on_until_one_verdict_leads_by_two() -> None:
    verdict, judge = ask_auto([YES, NO, NO, YES, NO, NO, YES])
    assert len(judge.requests) == 6  # y n n y n n: "no" leads by two after the sixth
    assert verdict.state is VerdictState.FAILED
    assert verdict.measures["flip_rate"] == 2 / 6  # type: ignore[attr-defined]
    assert [r.tags["sample"] for r in judge.requests] == [str(i) for i in range(6)]


def test_the_budget_ends_a_close_call_on_its_majority() -> None:
    verdict, judge = ask_auto([YES, NO] * 2 + [YES, NO, NO], max=5)
    assert len(judge.requests) == 5
    assert verdict.state is VerdictState.PASSED
    assert verdict.reason == "friendly (3 yes, 2 no, 0 errored of 5)"


def test_errored_answers_use_the_budget_without_voting() -> None:
    verdict, judge = ask_auto(["junk"] * 6, max=3)  # each answer: junk, then a failed repair
    assert len(judge.requests) == 6
    assert verdict.state is VerdictState.ERRORED
    assert verdict.reason == "no valid answer (0 yes, 0 no, 3 errored of 3)"

    verdict, judge = ask_auto([YES, "junk", "junk", NO], max=3)  # never read as "no"
    assert verdict.state is VerdictState.ERRORED
    assert verdict.reason == "no majority"
    assert verdict.measures["errored"] == 1.0  # type: ignore[attr-defined]

    verdict, judge = ask_auto(["junk", "junk", YES, YES])
    assert verdict.state is VerdictState.PASSED
    assert verdict.reason == "friendly (2 yes, 0 no, 1 errored of 3)"


def test_the_same_answers_in_the_same_order_give_the_same_verdict() -> None:
    script = [NO, YES, YES, NO, YES, YES, NO]
    first, _ = ask_auto(script)
    again, _ = ask_auto(script)
    assert first == again
    assert first.measures == again.measures  # type: ignore[attr-defined]
    assert (first.state, first.measures["samples"]) == (VerdictState.PASSED, 6.0)  # type: ignore[attr-defined]


def test_a_stricter_error_waits_for_a_lead_of_three() -> None:
    verdict, judge = ask_auto([YES, YES, YES, NO], error=0.005)
    assert (verdict.state, len(judge.requests)) == (VerdictState.PASSED, 3)


def test_only_the_adaptive_form_changes_the_version() -> None:
    assert JudgeCheck(question="q?").version == "judge-binary/1+plain@2"
    assert JudgeCheck(question="q?", samples=5).version == "judge-binary/1+plain@2"
    assert JudgeCheck(question="q?", samples="auto").version == "judge-binary-auto/1+plain@2"
    rule = JudgeCheck(question="q?", samples={"auto": True, "max": 7}).samples
    assert rule == AutoSamples(max=7, error=0.05, noise=0.1)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0", f"expected {SHAPE}, got 0"),
        ("often", f"expected {SHAPE}, got 'often'"),
        ("{auto: true, max: 4}", "max: expected an odd whole number from 3 to 25, got 4"),
        ("{auto: true, max: 27}", "max: expected an odd whole number from 3 to 25, got 27"),
        (
            "{auto: true, error: 0.5}",
            "error: expected a number between 0 and 0.5 (exclusive), got 0.5",
        ),
        (
            "{auto: true, noise: -1}",
            "noise: expected a number between 0 and 0.5 (exclusive), got -1",
        ),
        ("{auto: false}", "auto: expected true (samples: N asks a fixed N), got False"),
        ("{max: 5}", "auto: required in the adaptive form {auto: true, max, error, noise}"),
        (
            "{auto: true, maximum: 5}",
            "unknown key 'maximum'; the adaptive form takes auto, max, error, noise",
        ),
    ],
)
def test_a_bad_samples_value_is_one_line_naming_the_field(
    tmp_path: Path, value: str, message: str
) -> None:
    (tmp_path / "cases.jsonl").write_text(CASE.model_dump_json() + "\n")
    (tmp_path / "suite.yaml").write_text(
        "name: tone\ncases: cases.jsonl\nchecks:\n  friendly:\n    type: judge\n"
        f"    question: Is the tone friendly?\n    samples: {value}\n"
        "rubrics:\n  clarity:\n    weights: {friendly: 1.0}\n"
    )
    with pytest.raises(SuiteError) as info:
        load_suite(tmp_path / "suite.yaml")
    assert str(info.value) == f"{tmp_path / 'suite.yaml'}:7: checks.friendly.samples: {message}"


RUN_SUITE = """\
name: tone
cases: cases.jsonl
checks:
  friendly:
    type: judge
    question: Is the tone friendly?
    samples: auto
rubrics:
  clarity:
    weights: {friendly: 1.0}
"""


def test_checkweigh_run_asks_each_case_until_settled(tmp_path: Path) -> None:
    """A real `checkweigh run` with the openai SDK against a local server that answers each
    case from its own script: the cases run concurrently, each verdict's answers in order."""
    scripts = {
        "steady": [YES, YES],
        "torn": [YES, NO, NO, YES, NO, NO],
        "garbled": ["not json", "still not json", NO, NO],
    }
    for case_id in scripts:
        trace = [{"kind": "assistant", "content": f"Reply of [{case_id}]"}]
        line = json.dumps({"id": case_id, "trace": trace}) + "\n"
        with (tmp_path / "cases.jsonl").open("a") as f:
            f.write(line)
    (tmp_path / "suite.yaml").write_text(RUN_SUITE)

    def respond(body: dict[str, Any]) -> Reply:
        text = json.dumps(body["messages"])
        (case_id,) = (c for c in scripts if f"[{c}]" in text)
        return Reply(scripts[case_id].pop(0))

    db = f"sqlite:///{tmp_path / 'runs.db'}"
    with fake_llm_server([], respond=respond) as server:
        env = {
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "sk-test",
            "CHECKWEIGH_CACHE_DIR": str(tmp_path / "cache"),
        }
        args = ["run", str(tmp_path / "suite.yaml"), "--db", db, "-q", "--judge", "openai:m"]
        result = CliRunner().invoke(app, args, env=env)
    assert result.exit_code == 1, result.stdout + result.stderr  # two cases fail the gate
    assert len(server.requests) == 2 + 6 + 4
    assert scripts == {"steady": [], "torn": [], "garbled": []}

    store = Store(db)
    run = store.get_run("latest")
    assert run.config["checks"]["friendly"]["version"] == "judge-binary-auto/1+plain@2"
    verdicts = {r.case_id: r.verdicts["friendly"] for r in store.iter_results(run.id)}
    split = {
        case_id: (v.state.value, {k: int(n) for k, n in v.measures.items() if k != "flip_rate"})
        for case_id, v in verdicts.items()
    }
    assert split == {
        "steady": ("passed", {"samples": 2, "yes": 2, "no": 0, "errored": 0, "adaptive": 1}),
        "torn": ("failed", {"samples": 6, "yes": 2, "no": 4, "errored": 0, "adaptive": 1}),
        "garbled": ("failed", {"samples": 3, "yes": 0, "no": 2, "errored": 1, "adaptive": 1}),
    }
