"""Judge set-up mistakes found by probing the CLI with the real SDKs: a judge that cannot work
(no key, a base URL that is not an http(s) URL or carries a password, a malformed ``--judge``)
is one line and exit 2 before any case runs, with no traceback and no secret printed; a base
URL where nothing listens fails each check at once, not after the whole retry budget."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from checkweigh.cli import app
from checkweigh.core import VerdictState
from checkweigh.store import Store
from support.judge_suite import CASES, KEY, judge_suite

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


@pytest.mark.parametrize("judge", ["openai:gpt-test", "anthropic:claude-test"])
def test_a_stopped_local_server_fails_each_check_at_once(judge: str, tmp_path: Path) -> None:
    """Nothing listens at the base URL: with the default retries and deadline (11 attempts,
    120 s) each check ends errored at once with one clear reason, and the run ends."""
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    suite = judge_suite(tmp_path / "suite")
    env = {
        "OPENAI_API_KEY": KEY,
        "ANTHROPIC_API_KEY": KEY,
        "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
        "CHECKWEIGH_CACHE_DIR": str(tmp_path / "cache"),
        "COLUMNS": "200",
    }
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    start = time.monotonic()
    result = CliRunner().invoke(
        app, ["run", str(suite), "--db", db, "-q", "--judge", judge], env=env
    )
    took = time.monotonic() - start
    out = result.stdout + result.stderr
    assert result.exit_code == 1, out  # the errored-executions gate
    assert "Traceback" not in out
    assert took < 15.0  # not 11 attempts with backoff per check
    store = Store(db)
    verdicts = [r.verdicts["grounded"] for r in store.iter_results(store.get_run("latest").id)]
    assert len(verdicts) == CASES
    for verdict in verdicts:
        assert verdict.state is VerdictState.ERRORED
        assert verdict.error == (
            f"{judge}: connection refused: nothing listens at the base URL (is the server running?)"
        )
