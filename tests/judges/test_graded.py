"""The graded judge: the seed's overall_score formula, labels, overrides with renormalization,
binary metrics, scale and binary modes, and strict answers."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from checkweigh.checks import OVERALL
from checkweigh.core import Case, VerdictState
from checkweigh.errors import SuiteError
from checkweigh.judges import (
    DEFAULT_METRICS,
    GradedJudgeCheck,
    GradedMetric,
    JudgeRequest,
    ScriptedJudge,
    configure,
    label,
    overall_score,
)
from checkweigh.suites import load_suite
from support.evaluating import evaluate_all

NAMES = [m.name for m in DEFAULT_METRICS]
CASE = Case(
    id="g1",
    input={"message": "Book Alice at 10"},
    trace=[
        {"kind": "tool_call", "name": "book_meeting", "arguments": {"who": "Alice", "at": "10:00"}},
        {"kind": "assistant", "content": "Booked Alice at 10:00."},
    ],
)


def test_the_seed_formula_and_default_weights() -> None:
    assert [m.weight for m in DEFAULT_METRICS] == [15, 15, 15, 12.5, 12.5, 10, 10, 10]
    assert {m.tier for m in DEFAULT_METRICS} == {"Execution", "Knowledge", "Process", "Delivery"}
    assert overall_score(dict.fromkeys(NAMES, 5), DEFAULT_METRICS) == pytest.approx(100.0)
    assert overall_score(dict.fromkeys(NAMES, 3), DEFAULT_METRICS) == pytest.approx(60.0)
    # a 0 on one 15% metric and 5 elsewhere still passes a 75 gate: 85
    scores = {**dict.fromkeys(NAMES, 5), "tool_routing": 0}
    assert overall_score(scores, DEFAULT_METRICS) == pytest.approx(85.0)
    assert [label(s) for s in range(6)] == [
        "critical_fail",
        "fail",
        "poor",
        "acceptable",
        "good",
        "excellent",
    ]


def test_overrides_are_renormalized() -> None:
    completion = GradedMetric("task_completion", 20, "Outcome", "Task done?", binary=True)
    metrics = configure(
        weights={"tool_routing": 30}, exclude=["conversation_management"], add=[completion]
    )
    assert [m.name for m in metrics][-1] == "task_completion"
    assert "conversation_management" not in [m.name for m in metrics]
    scores = {**{m.name: 5 for m in metrics}, "task_completion": 0}
    total = sum(m.weight for m in metrics)  # 30+15+15+12.5+12.5+10+10+20 = 125
    assert overall_score(scores, metrics) == pytest.approx(100 * (125 - 20) / total)
    with pytest.raises(ValueError, match="cannot weight unknown metric 'speed'"):
        configure(weights={"speed": 1})


def scale_reply(request: JudgeRequest) -> str:
    text = request.messages[1].content
    names = [line[2:].split(":")[0] for line in text.splitlines() if line.startswith("- ")]
    scores = [{"metric": n, "score": 4, "reason": "good"} for n in names]
    return json.dumps({"scores": scores})


def test_scale_mode_scores_every_metric_and_stores_the_numbers() -> None:
    check = GradedJudgeCheck(pass_threshold=75)
    verdicts = asyncio.run(check.evaluate(CASE, ScriptedJudge([scale_reply])))
    verdict = verdicts[OVERALL]
    assert verdict.state is VerdictState.PASSED  # 4/5 everywhere = 80
    assert verdict.reason.startswith("overall 80.0 >= 75: tool_routing 4 good, ")
    assert verdict.measures["overall_score"] == pytest.approx(80.0)
    assert verdict.measures["score.response_delivery"] == 4.0


def test_binary_mode_scores_by_share_of_yes() -> None:
    def answers(request: JudgeRequest) -> str:
        text = request.messages[1].content
        count = sum(1 for line in text.splitlines() if line.split(". ")[0].isdigit())
        rows = [
            {"index": i, "verdict": "no" if i == 1 else "yes", "reason": "checked"}
            for i in range(1, count + 1)
        ]
        return json.dumps({"answers": rows})

    check = GradedJudgeCheck(mode="binary", pass_threshold=95)
    verdict = asyncio.run(check.evaluate(CASE, ScriptedJudge([answers])))[OVERALL]
    # tool_routing has two sub-questions, one answered no: 2.5 of 5; the rest score 5
    assert verdict.measures["score.tool_routing"] == 2.5
    assert verdict.measures["overall_score"] == pytest.approx(92.5)  # 100 - 15% x half
    assert verdict.state is VerdictState.FAILED
    assert verdict.reason.startswith("overall 92.5 < 95: tool_routing 2.5 poor")


def test_invalid_scores_are_errored() -> None:
    missing = json.dumps({"scores": [{"metric": "tool_routing", "score": 5, "reason": "ok"}]})
    verdict = asyncio.run(GradedJudgeCheck().evaluate(CASE, ScriptedJudge([missing] * 2)))[OVERALL]
    assert verdict.state is VerdictState.ERRORED
    assert "expected one score for each of" in verdict.error
    too_high = json.dumps({"scores": [{"metric": n, "score": 7, "reason": "great"} for n in NAMES]})
    verdict = asyncio.run(GradedJudgeCheck().evaluate(CASE, ScriptedJudge([too_high] * 2)))[OVERALL]
    assert verdict.state is VerdictState.ERRORED
    assert "score: Input should be less than or equal to 5" in verdict.error


def test_a_suite_override_naming_an_unknown_metric_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "cases.jsonl").write_text(CASE.model_dump_json() + "\n")
    (tmp_path / "suite.yaml").write_text(
        "name: graded\ncases: cases.jsonl\nchecks:\n  quality:\n    type: graded\n"
        "    weights: {speed: 2}\nrubrics:\n  overall:\n    weights: {quality: 1}\n"
    )
    with pytest.raises(SuiteError, match=r"suite.yaml:4: checks.quality: cannot weight unknown"):
        load_suite(tmp_path / "suite.yaml")


def test_per_run_weights_through_the_cli(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from checkweigh.cli import app
    from checkweigh.store import Store
    from checkweigh.testing import Reply, fake_llm_server

    (tmp_path / "cases.jsonl").write_text(CASE.model_dump_json() + "\n")
    (tmp_path / "suite.yaml").write_text(
        "name: graded\ncases: cases.jsonl\nchecks:\n  quality:\n    type: graded\n"
        "rubrics:\n  overall:\n    weights: {quality: 1}\n"
    )
    scores = [{"metric": n, "score": 0 if n == "tool_routing" else 5, "reason": "r"} for n in NAMES]
    db = f"sqlite:///{tmp_path / 'r.db'}"
    with fake_llm_server([], default=Reply(json.dumps({"scores": scores}))) as server:
        env = {
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "sk-test",
            "CHECKWEIGH_CACHE_DIR": str(tmp_path / "cache"),
        }
        args = ["run", str(tmp_path / "suite.yaml"), "--db", db, "-q", "--judge", "openai:m"]
        runner = CliRunner()
        plain = runner.invoke(app, args, env=env)
        assert plain.exit_code == 0, plain.stdout
        dropped = runner.invoke(app, [*args, "--graded-weight", "tool_routing=0"], env=env)
        assert dropped.exit_code == 0, dropped.stdout
        bad = runner.invoke(app, [*args, "--graded-weight", "speed=2"], env=env)
    assert bad.exit_code == 2
    assert "--graded-weight: cannot weight unknown metric 'speed'" in bad.stderr
    store = Store(db)
    first, second = reversed(store.list_runs())
    overall = [
        next(store.iter_results(r.id)).verdicts["quality"].measures["overall_score"]
        for r in (first, second)
    ]
    assert overall[0] == pytest.approx(85.0)  # tool_routing's 0 costs its 15%
    assert overall[1] == pytest.approx(100.0)  # dropped for the run: renormalized over the rest
    assert second.config["graded_weights"] == {"tool_routing": 0.0}


def test_a_rubric_weighs_the_graded_metrics_as_named_verdicts(tmp_path: Path) -> None:
    from checkweigh.core import CaseResult
    from checkweigh.runs import Evaluator

    (tmp_path / "cases.jsonl").write_text(CASE.model_dump_json() + "\n")
    (tmp_path / "suite.yaml").write_text(
        "name: graded\ncases: cases.jsonl\nchecks:\n  quality:\n    type: graded\n"
        "    pass_threshold: 70\nrubrics:\n  execution:\n    weights:\n"
        "      quality.tool_routing: 2\n      quality.parameter_extraction: 1\n"
        "      quality.result_interpretation: 1\n"
    )
    suite = load_suite(tmp_path / "suite.yaml")
    scores = {**dict.fromkeys(NAMES, 4), "parameter_extraction": 2}
    answer = {"scores": [{"metric": n, "score": s, "reason": "r"} for n, s in scores.items()]}
    judge = ScriptedJudge([json.dumps(answer)])
    results: list[CaseResult] = []
    results.extend(evaluate_all(Evaluator.from_suite(suite, judge), [CASE]))
    (result,) = results
    assert len(judge.requests) == 1  # one call answers the check and each metric
    routing = result.verdicts["quality.tool_routing"]
    assert routing.state is VerdictState.PASSED  # 4/5 = 80 >= 70
    assert routing.reason == "tool_routing 4 good"
    assert routing.measures == {"score": 4.0}
    extraction = result.verdicts["quality.parameter_extraction"]
    assert extraction.state is VerdictState.FAILED  # 2/5 = 40 < 70
    assert extraction.reason == "parameter_extraction 2 poor"
    # only the metrics a rubric weighs are recorded, beside the check's own verdict
    assert set(result.verdicts) == {
        "quality",
        "quality.tool_routing",
        "quality.parameter_extraction",
        "quality.result_interpretation",
    }
    assert result.results["execution"].score == pytest.approx(0.75)
    (tmp_path / "bad.yaml").write_text(
        (tmp_path / "suite.yaml").read_text().replace("tool_routing: 2", "speed: 2")
    )
    with pytest.raises(SuiteError, match=r"unknown check 'quality.speed'"):
        load_suite(tmp_path / "bad.yaml")
