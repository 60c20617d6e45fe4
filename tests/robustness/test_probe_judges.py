"""Judge set-up mistakes found by probing the CLI with the real SDKs: a judge that cannot work
(no key, a base URL that is not an http(s) URL or carries a password, a malformed ``--judge``)
is one line and exit 2 before any case runs, with no traceback and no secret printed."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from checkweigh.cli import app
from support.judge_suite import KEY, judge_suite

SECRET = "hunter2-password"


@pytest.mark.parametrize(
    ("judge", "env", "message"),
    [
        pytest.param(
            "anthropic:claude-test",
            {"ANTHROPIC_API_KEY": ""},
            "anthropic:claude-test: no API key: set ANTHROPIC_API_KEY",
            id="anthropic without a key",
        ),
        pytest.param(
            "openai:gpt-test",
            {"OPENAI_API_KEY": ""},
            "openai:gpt-test: Missing credentials",
            id="openai without a key",
        ),
        pytest.param(
            "openai:gpt-test",
            {"OPENAI_BASE_URL": "not a url"},
            "expected an http:// or https:// base URL with a host (check OPENAI_BASE_URL)",
            id="openai base URL that is not a URL",
        ),
        pytest.param(
            "openai:gpt-test",
            {"OPENAI_BASE_URL": "ftp://127.0.0.1:8080/v1"},
            "got 'ftp://127.0.0.1:8080/v1'",
            id="openai base URL with another scheme",
        ),
        pytest.param(
            "ollama:llama3",
            {"OLLAMA_BASE_URL": "127.0.0.1:11434/v1"},
            "(check OLLAMA_BASE_URL)",
            id="ollama base URL without a scheme",
        ),
        pytest.param(
            "anthropic:claude-test",
            {"ANTHROPIC_BASE_URL": "http:///v1"},
            "(check ANTHROPIC_BASE_URL)",
            id="anthropic base URL without a host",
        ),
        pytest.param(
            "openai:gpt-test",
            {"OPENAI_BASE_URL": f"http://user:{SECRET}@127.0.0.1:9/v1"},
            "the base URL 'http://127.0.0.1:9/v1/' holds a user name or password",
            id="openai base URL with a password",
        ),
        pytest.param("openai:", {}, "expected PROVIDER:MODEL", id="empty model"),
        pytest.param("foo:bar", {}, "got 'foo:bar'", id="unknown provider"),
    ],
)
def test_a_judge_that_cannot_work_is_one_line_and_exit_2(
    judge: str, env: dict[str, str], message: str, tmp_path: Path
) -> None:
    suite = judge_suite(tmp_path / "suite")
    base = {
        "OPENAI_API_KEY": KEY,
        "ANTHROPIC_API_KEY": KEY,
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
        "CHECKWEIGH_CACHE_DIR": str(tmp_path / "cache"),
        "COLUMNS": "200",
    }
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    result = CliRunner().invoke(
        app, ["run", str(suite), "--db", db, "--judge", judge], env={**base, **env}
    )
    out = result.stdout + result.stderr
    assert result.exit_code == 2, out
    assert "Traceback" not in out
    assert message in out
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1, out
    assert lines[0].startswith("error: --judge: ")
    assert KEY not in out
    assert SECRET not in out
