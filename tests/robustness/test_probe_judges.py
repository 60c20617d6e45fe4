"""Judge set-up mistakes found by probing the CLI with the real SDKs: a judge that cannot work
(no key, a base URL that is not an http(s) URL or carries a password, a malformed ``--judge``)
is one line and exit 2 before any case runs, with no traceback and no secret printed; a base
URL where nothing listens fails each check at once, not after the whole retry budget."""

from __future__ import annotations

import errno
import re
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from checkweigh.cli import app
from checkweigh.core import VerdictState
from checkweigh.judges import JudgeCache
from checkweigh.store import Store
from checkweigh.testing import Reply, fake_llm_server
from support.judge_suite import CASES, KEY, YES, judge_suite

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
        pytest.param(
            "openai:gpt-test",
            {"OPENAI_API_KEY": KEY + "\n"},
            "the API key holds a control or non-ASCII character (a trailing newline?); "
            "fix OPENAI_API_KEY",
            id="openai key with a trailing newline",
        ),
        pytest.param(
            "anthropic:claude-test",
            {"ANTHROPIC_API_KEY": KEY + "\x1b"},
            "fix ANTHROPIC_API_KEY",
            id="anthropic key with a control character",
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


@pytest.mark.parametrize("judge", ["openai:gpt-test", "anthropic:claude-test", "ollama:llama3"])
def test_a_stopped_local_server_fails_each_check_at_once(judge: str, tmp_path: Path) -> None:
    """Nothing listens at the base URL: with the default retries and deadline (11 attempts,
    120 s) each check ends errored at once with one clear reason, and the run ends. (Ollama's
    placeholder key ``ollama`` was scrubbed as a secret: ``***:llama3: ...``.)"""
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    suite = judge_suite(tmp_path / "suite")
    env = {
        "OPENAI_API_KEY": KEY,
        "ANTHROPIC_API_KEY": KEY,
        "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
        "OLLAMA_BASE_URL": f"http://127.0.0.1:{port}/v1",
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


@contextmanager
def raw_server(response: bytes) -> Iterator[tuple[str, list[bytes]]]:
    """A server on 127.0.0.1 that answers every request with ``response`` as raw bytes (a
    broken HTTP response the scripted server cannot send), then closes the connection."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    seen: list[bytes] = []
    stop = threading.Event()

    def answer(conn: socket.socket) -> None:
        with conn:
            reader = conn.makefile("rb")
            head = b"".join(iter(lambda: reader.readline(), b"\r\n"))
            length = re.search(rb"content-length: *(\d+)", head, re.IGNORECASE)
            reader.read(int(length.group(1)) if length else 0)
            seen.append(head)
            conn.sendall(response)

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=answer, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", seen
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()


BODY = b'{"choices": [{"message": {"content": "{}"}}]}'


@pytest.mark.parametrize(
    ("response", "error", "retried"),
    [
        pytest.param(
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n{}\r\n",
            "malformed response: Invalid character in chunk size",
            False,
            id="broken chunked encoding",
        ),
        pytest.param(
            b"HTTP/1.1 200 OK\r\ncontent-type: app",
            "connection error: ServerDisconnectedError",
            True,
            id="closed in the middle of the headers",
        ),
        pytest.param(
            b"HTTP/1.1 200 OK\r\ncontent-length: 500\r\n\r\n" + BODY[:40],
            "connection error: Not enough data to satisfy content length header",
            True,
            id="body shorter than its content-length",
        ),
    ],
)
def test_a_broken_http_response_is_one_clear_line(
    response: bytes, error: str, retried: bool, tmp_path: Path
) -> None:
    suite = judge_suite(tmp_path / "suite")
    with raw_server(response) as (url, seen):
        env = {
            "OPENAI_API_KEY": KEY,
            "OPENAI_BASE_URL": f"{url}/v1",
            "CHECKWEIGH_CACHE_DIR": str(tmp_path / "cache"),
            "COLUMNS": "200",
        }
        db = f"sqlite:///{tmp_path / 'runs.db'}"
        limits = ["--judge-timeout", "0.5", "--judge-deadline", "1", "--judge-retries", "2"]
        result = CliRunner().invoke(
            app, ["run", str(suite), "--db", db, "-q", "--judge", "openai:m", *limits], env=env
        )
    out = result.stdout + result.stderr
    assert result.exit_code == 1, out
    assert "Traceback" not in out
    store = Store(db)
    verdicts = [r.verdicts["grounded"] for r in store.iter_results(store.get_run("latest").id)]
    assert {v.state for v in verdicts} == {VerdictState.ERRORED}
    for verdict in verdicts:
        assert verdict.error is not None
        assert verdict.error.startswith(f"openai:m: {error}")
        assert "\n" not in verdict.error
        assert "<" not in verdict.error  # no repr of aiohttp's half-read response
    calls = [r for r in seen if r.startswith(b"POST ")]  # not the local-server probe's GETs
    assert (len(calls) > CASES) is retried
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").rglob("*.json"))


@pytest.mark.parametrize("where", ["a file", "a folder under a file"])
def test_a_judge_cache_that_cannot_be_written_is_one_line_before_any_call(
    where: str, tmp_path: Path
) -> None:
    """Every valid answer was errored (NotADirectoryError) after it had been paid for."""
    suite = judge_suite(tmp_path / "suite")
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    cache = blocker if where == "a file" else blocker / "cache"
    with fake_llm_server([], default=Reply(YES)) as server:
        env = {
            "OPENAI_API_KEY": KEY,
            "OPENAI_BASE_URL": server.base_url,
            "CHECKWEIGH_CACHE_DIR": str(cache),
        }
        db = f"sqlite:///{tmp_path / 'runs.db'}"
        result = CliRunner().invoke(
            app, ["run", str(suite), "--db", db, "--judge", "openai:m"], env=env
        )
    out = result.stdout + result.stderr
    assert result.exit_code == 2, out
    assert "Traceback" not in out
    assert [line for line in out.splitlines() if line.strip()] == [
        f"error: cache: cannot write the judge cache at {str(cache)!r}: "
        f"{'File exists' if where == 'a file' else 'Not a directory'} "
        "(set CHECKWEIGH_CACHE_DIR to a writable folder, or pass --no-cache)"
    ]
    assert server.requests == []


def test_a_cache_that_fills_up_mid_run_keeps_the_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk when an answer is stored: the valid, paid-for answer stands (it was an
    errored verdict) and the report says how many answers were not stored and why."""

    def full(self: JudgeCache, key: str, reply: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(JudgeCache, "put", full)
    suite = judge_suite(tmp_path / "suite")
    with fake_llm_server([], default=Reply(YES)) as server:
        env = {
            "OPENAI_API_KEY": KEY,
            "OPENAI_BASE_URL": server.base_url,
            "CHECKWEIGH_CACHE_DIR": str(tmp_path / "cache"),
            "COLUMNS": "300",
        }
        db = f"sqlite:///{tmp_path / 'runs.db'}"
        result = CliRunner().invoke(
            app, ["run", str(suite), "--db", db, "--judge", "openai:m"], env=env
        )
    out = result.stdout + result.stderr
    assert result.exit_code == 0, out
    store = Store(db)
    run = store.get_run("latest")
    verdicts = [r.verdicts["grounded"] for r in store.iter_results(run.id)]
    assert {v.state for v in verdicts} == {VerdictState.PASSED}
    note = (
        f"{CASES} judge answer(s) could not be stored in the cache at "
        f"{str(tmp_path / 'cache')!r}: No space left on device; the next run asks again"
    )
    assert note in " ".join(out.split())
    assert note in (run.summary.notes if run.summary else [])
