"""Case pass/fail and the run's two dimensions through the CLI, and the CI outputs: JUnit XML
that validates against the schema CI systems read, and Markdown that renders as tables with
user text kept literal."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from checkweigh.cli import app
from checkweigh.core import PassPolicy, RunSummary
from checkweigh.reports import render_markdown
from checkweigh.store import Store
from checkweigh.testing import Reply, fake_llm_server
from support.recorded_suite import make_case, standard_cases, write_suite

runner = CliRunner()
SCHEMA = xmlschema.XMLSchema(Path(__file__).parents[1] / "support" / "junit.xsd")


def _run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_default_thresholds_fail_a_run_with_failing_cases(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "s", standard_cases(), thresholds=None)
    code, out, _ = _run("run", str(suite), "--db", f"sqlite:///{tmp_path / 'r.db'}", "-q")
    assert code == 1
    assert "cases 2 passed, 4 failed, 0 errored of 6" in out
    assert "gate FAIL  metrics: mean case score 61.7% >= 80%" in out
    assert "gate FAIL  cases: pass rate 33.3% >= 100%" in out
    assert "failed wrong-time#0: required check failed: correct_time: " in out
    assert "failed terse#0: score 40.0 < pass threshold 75" in out
    assert "gates FAILED" in out

    (info,) = Store(f"sqlite:///{tmp_path / 'r.db'}").list_runs()
    assert info.config["thresholds"] == {
        "pass_threshold": 75.0,
        "metrics_pass_threshold": 80.0,
        "cases_pass_threshold": 100.0,
        "outcome_checks": [],
        "score_rubrics": None,
        "pass_policy": "threshold",
    }
    assert info.summary is not None
    g = info.summary.case_gates
    assert g is not None
    assert (g.weighted_metrics_score_pct, g.metrics_passed) == (pytest.approx(61.6667, 1e-4), False)
    assert (g.cases_pass_rate_pct, g.cases_passed) == (pytest.approx(33.333, 1e-4), False)
    assert info.gates_passed is False


def test_threshold_flags_override_the_suite_and_are_snapshotted(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "s", standard_cases(), thresholds=None)
    db = f"sqlite:///{tmp_path / 'r.db'}"
    code, out, _ = _run(
        "run", str(suite), "--db", db, "-q", "--metrics-threshold", "60", "--cases-threshold", "33"
    )
    assert code == 0, out
    assert "gate PASS  cases: pass rate 33.3% >= 33%" in out
    (info,) = Store(db).list_runs()
    assert info.config["thresholds"]["cases_pass_threshold"] == 33.0
    assert info.config["thresholds"]["metrics_pass_threshold"] == 60.0
    # a lower pass threshold passes more cases: 0.6 and 0.4 scores now pass; required still fails
    code, out, _ = _run("run", str(suite), "--db", db, "-q", "--pass-threshold", "40")
    assert "cases 4 passed, 2 failed, 0 errored of 6" in out


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--cases-threshold", "101"), ("--metrics-threshold", "-1"), ("--pass-threshold", "200")],
)
def test_a_threshold_out_of_range_is_one_line(tmp_path: Path, flag: str, value: str) -> None:
    suite = write_suite(tmp_path / "s", standard_cases())
    code, _, err = _run("run", str(suite), "--db", f"sqlite:///{tmp_path / 'r.db'}", flag, value)
    assert code == 2
    assert err.strip() == f"error: {flag}: expected a percentage from 0 to 100, got {value}"


def test_a_bad_thresholds_block_names_file_line_and_field(tmp_path: Path) -> None:
    suite = write_suite(
        tmp_path / "s", standard_cases(), thresholds={"cases_pass_threshold": 150.0}
    )
    code, _, err = _run("run", str(suite), "--db", f"sqlite:///{tmp_path / 'r.db'}")
    assert code == 2
    line = err.strip()
    assert line.startswith(f"error: {suite}:")
    assert "thresholds.cases_pass_threshold" in line
    assert "100" in line
    text = suite.read_text().replace("cases_pass_threshold: 150.0", "score_rubrics: [complete]")
    suite.write_text(text)
    code, _, err = _run("run", str(suite), "--db", f"sqlite:///{tmp_path / 'r.db'}")
    assert code == 2
    assert "thresholds.score_rubrics[0]: unknown rubric 'complete'" in err


def _nasty_cases() -> list[dict[str, object]]:
    cases = standard_cases()
    # user text with markup, an XML terminator and a control character
    cases.append(
        make_case(
            "a<b>&c]]>\x07",
            participants=["Alice"],
            time="10:00",
            reply="<script>alert(1)</script> | [x](http://evil)",
        )
    )
    return cases


def test_junit_validates_and_lists_failed_checks(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "s", _nasty_cases())
    db = f"sqlite:///{tmp_path / 'r.db'}"
    junit = tmp_path / "reports" / "junit.xml"
    code, out, _ = _run("run", str(suite), "--db", db, "-q", "--junit", str(junit))
    assert code == 1, out  # 2 of 7 pass: 28.6% < 30%
    assert f"wrote 7 test case(s) to {junit}" in out
    SCHEMA.validate(str(junit))
    root = ET.parse(junit).getroot()
    cases_suite, gates_suite = root.findall("testsuite")
    assert cases_suite.get("name") == "bookings"
    assert (cases_suite.get("tests"), cases_suite.get("failures"), cases_suite.get("errors")) == (
        "7",
        "5",
        "0",
    )
    by_name = {tc.get("name"): tc for tc in cases_suite.findall("testcase")}
    assert set(by_name) >= {"ok-1", "wrong-time", "crash", "a<b>&c]]>\\x07"}
    assert by_name["ok-1"].find("failure") is None
    failure = by_name["wrong-time"].find("failure")
    assert failure is not None
    assert failure.get("message", "").startswith("required check failed: correct_time")
    assert "- correct_time: final_state.booking.time is '11:00', expected '10:00'" in (
        failure.text or ""
    )
    crash = by_name["crash"].find("failure")
    assert crash is not None
    assert "- checked_first: book_meeting at step 2 without any check_availability" in (
        crash.text or ""
    )
    props = {p.get("name"): p.get("value") for p in cases_suite.iter("property")}
    assert props["cases_pass_threshold"] == "30"
    gates = {tc.get("name"): tc for tc in gates_suite.findall("testcase")}
    assert gates["gate: cases"].find("failure") is not None
    assert gates["gate: metrics"].find("failure") is None
    assert root.get("failures") == str(5 + 1)

    # the same file from the stored run
    again = tmp_path / "again.xml"
    code, _, _ = _run("show", "latest", "--db", db, "--junit", str(again))
    assert code == 1
    SCHEMA.validate(str(again))
    # 7 cases + the metrics, cases and tcr gates
    assert len(ET.parse(again).getroot().findall("testsuite/testcase")) == 7 + 3


def test_an_errored_case_is_a_junit_error(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    suite = write_suite(folder, standard_cases())
    (folder / "flaky.py").write_text(
        "from checkweigh.checks import check\n\n\n"
        "@check\n"
        "def polite(case):\n"
        "    if case.id == 'ok-2':\n"
        "        raise KeyError('tone model unavailable')\n"
        "    return True\n"
    )
    text = suite.read_text().replace(
        "rubrics:\n", "  polite:\n    type: python\n    function: flaky:polite\nrubrics:\n"
    )
    suite.write_text(
        text.replace("clear_explanation: 0.2\n", "clear_explanation: 0.2\n      polite: 0.1\n")
    )
    junit = tmp_path / "j.xml"
    _run("run", str(suite), "--db", f"sqlite:///{tmp_path / 'r.db'}", "-q", "--junit", str(junit))
    SCHEMA.validate(str(junit))
    (tc,) = [t for t in ET.parse(junit).getroot().iter("testcase") if t.get("name") == "ok-2"]
    error = tc.find("error")
    assert error is not None
    assert "polite: KeyError" in error.get("message", "")


def _cells(md: MarkdownIt, text: str) -> list[list[str]]:
    rows: list[list[str]] = []
    tokens = md.parse(text)
    for i, tok in enumerate(tokens):
        if tok.type == "tr_open":
            rows.append([])
        elif tok.type == "inline" and tokens[i - 1].type in ("th_open", "td_open"):
            rows[-1].append(tok.content)
    return rows


def test_markdown_renders_tables_and_keeps_user_text_literal(tmp_path: Path) -> None:
    suite = write_suite(
        tmp_path / "s",
        _nasty_cases(),
        thresholds={"cases_pass_threshold": 0.0, "metrics_pass_threshold": 0.0},
    )
    db = f"sqlite:///{tmp_path / 'r.db'}"
    md_path = tmp_path / "summary.md"
    code, out, _ = _run("run", str(suite), "--db", db, "-q", "--markdown", str(md_path))
    assert code == 0, out
    text = md_path.read_text(encoding="utf-8")
    assert text.startswith("## checkweigh: bookings ✅ passed")
    md = MarkdownIt("commonmark").enable("table")
    tokens = md.parse(text)
    kinds = {t.type for t in tokens}
    assert "table_open" in kinds
    html = md.render(text)
    assert "<script>" not in html
    assert 'href="http://evil"' not in html
    # every row has as many cells as its header: user text did not break a table
    for table in text.split("\n\n"):
        rows = _cells(md, table)
        if rows:
            assert all(len(r) == len(rows[0]) for r in rows), table
    gates = _cells(md, text)
    assert ["cases: pass rate (2 of 7)", "28.6%", "≥ 0%", "✅ pass"] in gates
    failing = [r for r in gates if r and r[0].startswith("a")]
    assert failing
    assert failing[0][0].startswith("a&lt;b&gt;&amp;c")


def test_markdown_for_a_failed_run_names_the_failing_dimension() -> None:
    summary = RunSummary.model_validate(
        {
            "executions": 2,
            "cases": 2,
            "errored_executions": 0,
            "agent_errors": 0,
            "rubrics": [],
            "slowest": [],
            "case_gates": {
                "weighted_metrics_score_pct": 90.0,
                "metrics_pass_threshold": 80.0,
                "metrics_passed": True,
                "cases_pass_rate_pct": 50.0,
                "cases_pass_threshold": 100.0,
                "cases_passed": False,
                "executions": 2,
                "passed": 1,
                "failed": 1,
                "errored": 0,
                "pass_threshold": 75.0,
                "failing": [
                    {
                        "case_id": "c|2",
                        "repeat": 0,
                        "state": "failed",
                        "score_pct": 60.0,
                        "reason": "score 60.0 < pass threshold 75",
                    }
                ],
            },
        }
    )
    text = render_markdown("s", "run-1", "complete", summary)
    assert text.startswith("## checkweigh: s ❌ failed")
    assert "| cases: pass rate (1 of 2) | 50.0% | ≥ 100% | ❌ fail |" in text
    assert "| c\\|2 #0 | failed | 60.0 | score 60.0 &lt; pass threshold 75 |" in text
    assert json.loads(summary.model_dump_json())["case_gates"]["cases_passed"] is False
    assert PassPolicy().cases_pass_threshold == 100.0


OUTCOMES_CHECK = """\
  outcomes:
    type: expected_outcomes
rubrics:
"""


def test_expected_outcomes_decide_cases_through_a_judge(tmp_path: Path) -> None:
    """A low-scoring case whose expected outcomes all hold passes; a perfect-scoring case with
    one outcome not met fails; a case without outcomes falls back to its score."""
    low = make_case("low-but-done", participants=["Alice"], time="10:00", reply="Done.")
    low["ground_truth"]["expected_outcomes"] = ["A meeting is booked at 10:00."]
    perfect = make_case("perfect-but-wrong", participants=["Alice", "Bob"], time="10:00")
    perfect["ground_truth"]["expected_outcomes"] = [
        "A meeting is booked at 10:00.",
        "The agent tells the user the room number.",
    ]
    plain = make_case("plain", participants=["Alice", "Bob"], time="10:00")
    suite = write_suite(tmp_path / "s", [low, perfect, plain], thresholds=None)
    suite.write_text(suite.read_text().replace("rubrics:\n", OUTCOMES_CHECK, 1))

    def answer(verdict: str, reason: str) -> Reply:
        return Reply(json.dumps({"verdict": verdict, "reason": reason}))

    # each statement is judged on its own, in case order (one case and one call at a time)
    script = [
        answer("yes", "booked at 10:00"),
        answer("yes", "booked at 10:00"),
        answer("no", "no room number is mentioned"),
    ]
    db = f"sqlite:///{tmp_path / 'r.db'}"
    with fake_llm_server(script) as server:
        env = {
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "sk-test",
            "CHECKWEIGH_CACHE_DIR": str(tmp_path / "cache"),
            "COLUMNS": "200",
        }
        result = runner.invoke(
            app,
            [
                "run",
                str(suite),
                "--db",
                db,
                "-q",
                "--judge",
                "openai:gpt-test",
                "--judge-concurrency",
                "1",
                "--concurrency",
                "1",
                "--json",
                str(tmp_path / "r.json"),
            ],
            env=env,
        )
    assert len(server.requests) == 3
    by_case = {
        r["case_id"]: r["case"] for r in json.loads((tmp_path / "r.json").read_text())["results"]
    }
    assert by_case["low-but-done"]["state"] == "passed"
    assert by_case["low-but-done"]["reason"] == "every expected outcome passed"
    assert by_case["low-but-done"]["score_pct"] < 75
    assert by_case["perfect-but-wrong"]["state"] == "failed"
    assert by_case["perfect-but-wrong"]["reason"].startswith("expected outcomes not met: outcomes:")
    assert by_case["plain"]["state"] == "passed"
    assert by_case["plain"]["reason"] == "score 100.0 >= pass threshold 75"
    assert "cases 2 passed, 1 failed, 0 errored of 3" in result.stdout
    assert result.exit_code == 1  # 66.7% < 100%
