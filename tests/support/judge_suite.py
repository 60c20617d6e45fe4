"""A recorded suite with a yes/no judge check, and the CLI run against a scripted server."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from checkweigh.cli import app
from checkweigh.testing import FakeLLM, Reply, fake_llm_server

from .recorded_suite import standard_cases, write_suite

KEY = "sk-proj-test-key-that-must-never-leak-4b3a2c1d"
YES = '{"verdict": "yes", "reason": "every claim is in the trace"}'
CASES = len(standard_cases())

_JUDGE_CHECK = """\
  grounded:
    type: judge
    question: Is every statement in the final answer supported by the trace?
rubrics:
"""
# tiny waits so that retries do not slow the tests; every other setting keeps its default
FAST_BLOCK = "judge:\n  backoff_initial_s: 0.01\n  backoff_max_s: 0.5\n"


def judge_suite(folder: Path, block: str = FAST_BLOCK) -> Path:
    """The standard recorded suite plus a judge check weighted into the rubric, with
    ``block`` (a suite ``judge:`` block) appended; the gate is errored executions == 0."""
    suite = write_suite(folder, standard_cases(), gate=0.0)
    text = suite.read_text().replace("rubrics:\n", _JUDGE_CHECK, 1)
    text = text.replace("clear_explanation: 0.2\n", "clear_explanation: 0.2\n      grounded: 0.2\n")
    suite.write_text(text + block)
    return suite


def run_judged(
    suite: Path, server: FakeLLM | None, tmp: Path, *args: str, judge: str = "openai:gpt-test"
) -> tuple[int, str]:
    """``checkweigh run SUITE --judge ...`` against ``server``; the exit code and all output."""
    env = {
        "OPENAI_API_KEY": KEY,
        "ANTHROPIC_API_KEY": KEY,
        "CHECKWEIGH_CACHE_DIR": str(tmp / "cache"),
        "COLUMNS": "200",
    }
    if server is not None:
        env["OPENAI_BASE_URL"] = env["ANTHROPIC_BASE_URL"] = server.base_url
    db = f"sqlite:///{tmp / 'runs.db'}"
    result = CliRunner().invoke(
        app, ["run", str(suite), "--db", db, "-q", "--judge", judge, *args], env=env
    )
    return result.exit_code, result.stdout + result.stderr


def says_no_to(*replies: str) -> Callable[[dict[str, Any]], Reply]:
    """A scripted judge's answer for each request: no when the agent's last reply (a line of
    the prompt) is one of ``replies``, yes otherwise."""

    def answer(body: dict[str, Any]) -> Reply:
        prompt = body["messages"][-1]["content"]
        verdict = "no" if any(f"\n{text}" in prompt for text in replies) else "yes"
        return Reply(json.dumps({"verdict": verdict, "reason": f"judged {verdict}"}))

    return answer


def cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """``checkweigh ARGS`` in-process: the exit code and all output."""
    result = CliRunner().invoke(app, list(args), env=env or {})
    return result.exit_code, result.stdout + result.stderr


def with_judge(
    tmp: Path, respond: Callable[[dict[str, Any]], Reply], *args: str
) -> tuple[int, str]:
    """``checkweigh ARGS`` beside a scripted judge server answering with ``respond`` (the SDK's
    key and base URL, and a judge cache under ``tmp``, in its environment)."""
    with fake_llm_server([], respond=respond) as server:
        env = {
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": KEY,
            "CHECKWEIGH_CACHE_DIR": str(tmp / "cache"),
            "COLUMNS": "220",
        }
        return cli(*args, env=env)
