"""`checkweigh run --judge` end to end: the real openai SDK against a local chat-completions
server. A re-run makes zero calls; --replay with a cold cache errors cleanly; no judge means
skipped judge checks with a note; the API key is stored nowhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from checkweigh.cli import app
from checkweigh.store import Store
from checkweigh.testing import Reply, fake_llm_server
from support.recorded_suite import standard_cases, write_suite

KEY = "sk-test-key-that-must-never-be-stored-9f8e7d"
JUDGE_CHECK = """\
  grounded:
    type: judge
    question: Is every statement in the final answer supported by the trace?
rubrics:
"""


@pytest.fixture
def judge_suite(tmp_path: Path) -> Path:
    suite = write_suite(tmp_path / "s", standard_cases(), gate=0.0)
    text = suite.read_text().replace("rubrics:\n", JUDGE_CHECK, 1)
    text = text.replace("clear_explanation: 0.2\n", "clear_explanation: 0.2\n      grounded: 0.2\n")
    suite.write_text(text)
    return suite


def _run(suite: Path, db: str, *args: str, env: dict[str, str]) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["run", str(suite), "--db", db, "-q", *args], env=env)
    return result.exit_code, result.stdout + result.stderr


def test_judge_checks_run_cache_and_replay(judge_suite: Path, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    answers = [Reply(json.dumps({"verdict": "yes", "reason": "every claim is in the trace"}))]
    answers *= len(standard_cases())
    with fake_llm_server(answers) as server:
        env = {
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": KEY,
            "CHECKWEIGH_CACHE_DIR": str(tmp_path / "cache"),
            "COLUMNS": "200",
        }
        code, out = _run(
            judge_suite, db, "--judge", "openai:gpt-test", "--judge-prices", "0.15,0.6", env=env
        )
        assert code == 0, out
        # six calls of 120 tokens in and 18 out; (720 x 0.15 + 108 x 0.6) / 1e6 = $0.0002
        assert "judge openai:gpt-test: 6 call(s), 0 cache hit(s), 0 error(s), 720 tokens in" in out
        assert "/ 108 out" in out
        assert "$0.0002" in out
        assert len(server.requests) == 6
        stats = Store(db).get_run("latest").summary.judge  # type: ignore[union-attr]
        assert stats is not None
        assert (stats.calls, stats.input_tokens, stats.output_tokens) == (6, 720, 108)
        assert stats.cost_usd == pytest.approx(0.0001728)

        code, out = _run(judge_suite, db, "--judge", "openai:gpt-test", env=env)
        assert code == 0, out
        assert "judge openai:gpt-test: 0 call(s), 6 cache hit(s)" in out
        assert len(server.requests) == 6  # the re-run made no call

    latest = Store(db).get_run("latest")
    assert latest.config["judge"] == "openai:gpt-test"
    verdicts = [r.verdicts["grounded"] for r in Store(db).iter_results(latest.id)]
    assert {v.reason for v in verdicts} == {"every claim is in the trace"}
    for path in [tmp_path / "runs.db", *(tmp_path / "cache").rglob("*")]:
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def test_replay_with_a_cold_cache_errors_cleanly(judge_suite: Path, tmp_path: Path) -> None:
    env = {"CHECKWEIGH_CACHE_DIR": str(tmp_path / "empty"), "COLUMNS": "200"}
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    code, out = _run(judge_suite, db, "--judge", "openai:gpt-test", "--replay", env=env)
    assert code == 1  # the default gate: no errored executions
    assert "6 errored" in out
    assert "judge openai:gpt-test: 0 call(s), 0 cache hit(s), 0 error(s), 6 replay miss(es)" in out
    assert "no cached answer for this call" in out
    assert "Traceback" not in out


def test_without_a_judge_judge_checks_are_skipped_and_noted(
    judge_suite: Path, tmp_path: Path
) -> None:
    code, out = _run(judge_suite, f"sqlite:///{tmp_path / 'r.db'}", env={"COLUMNS": "200"})
    assert code == 0, out
    assert "note: judge checks grounded were skipped (no judge configured: pass --judge" in out
    assert "renormalized over the checks that ran" in out
    # the same TCR as the suite without the judge check: it was excluded, not failed
    assert "TCR 0.616" in out


def test_user_text_is_printed_literally(judge_suite: Path, tmp_path: Path) -> None:
    """A model named ``m`` makes ``openai:m:``, which rich would render as an emoji code."""
    answers = [Reply(json.dumps({"verdict": "yes", "reason": "[bold]fine[/bold] :m:"}))] * 6
    with fake_llm_server(answers) as server:
        env = {
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": KEY,
            "CHECKWEIGH_CACHE_DIR": str(tmp_path / "cache"),
            "COLUMNS": "200",
        }
        code, out = _run(
            judge_suite, f"sqlite:///{tmp_path / 'r.db'}", "--judge", "openai:m", env=env
        )
    assert code == 0, out
    assert "judge openai:m: 6 call(s)" in out
    assert "Ⓜ" not in out
