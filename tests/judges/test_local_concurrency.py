"""The judge's default concurrency: 32 for a provider or anything else, 2 for an inference server
on this machine that decodes one request at a time, recognised by what it answers on
``GET /models`` (llama-cpp-python, llama.cpp's server, LM Studio) or ``GET /api/version``
(Ollama); the report says why it was lowered, and a given concurrency is never second-guessed."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from checkweigh.judges import DEFAULT_CONCURRENCY, MAX_WINDOW, JudgeOptions, make_judge
from checkweigh.judges._options import LOCAL_CONCURRENCY
from checkweigh.service._run import make_cached_judge
from checkweigh.testing import fake_llm_server


@contextmanager
def serving(routes: dict[str, Any]) -> Iterator[tuple[str, list[str]]]:
    """A server on 127.0.0.1 answering GET ``path`` with ``routes[path]`` as JSON (404 else);
    yields its base URL (with /v1) and the paths it was asked for."""
    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            asked.append(self.path)
            body = routes.get(self.path)
            data = json.dumps(body).encode() if body is not None else b'{"error": "not found"}'
            self.send_response(200 if body is not None else 404)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", asked
    finally:
        server.shutdown()
        server.server_close()


def models(owner: str) -> dict[str, Any]:
    return {"object": "list", "data": [{"id": "m", "object": "model", "owned_by": owner}]}


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    monkeypatch.setenv("CHECKWEIGH_CACHE_DIR", str(tmp_path / "cache"))


@pytest.mark.parametrize(
    ("routes", "server"),
    [
        ({"/v1/models": models("me")}, "llama-cpp-python"),
        ({"/v1/models": models("llamacpp")}, "llama.cpp server"),
        ({"/v1/models": models("organization_owner")}, "LM Studio"),
        ({"/v1/models": models("library"), "/api/version": {"version": "0.12.3"}}, "Ollama"),
    ],
)
def test_a_single_request_server_on_this_machine_gets_two_and_the_report_says_why(
    monkeypatch: pytest.MonkeyPatch, routes: dict[str, Any], server: str
) -> None:
    with serving(routes) as (url, asked):
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        judge = make_cached_judge("openai:local", no_cache=False, replay=False)
        assert judge is not None
        metered = judge.judge
        assert (metered.adaptive, metered.concurrency) == (False, LOCAL_CONCURRENCY)
        assert metered.options is not None
        assert metered.options.concurrency == LOCAL_CONCURRENCY
        note = metered.concurrency_note()
        assert note is not None
        assert server in note
        assert "--judge-concurrency" in note
        assert asked[0] == "/v1/models"


@pytest.mark.parametrize(
    "routes",
    [
        {},  # a proxy or test double that lists nothing
        {"/v1/models": models("openai")},  # a proxy in front of a provider
        {"/v1/models": models("vllm")},  # batches many requests at once
        {"/v1/models": {"data": "not a list"}},
        {"/v1/models": [1, 2, 3], "/api/version": {"version": 3}},
    ],
)
def test_anything_else_on_this_machine_gets_the_provider_default(
    monkeypatch: pytest.MonkeyPatch, routes: dict[str, Any]
) -> None:
    with serving(routes) as (url, asked):
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        judge = make_cached_judge("openai:local", no_cache=False, replay=False)
        assert judge is not None
        # the provider default: adaptive, from today's 32 up to MAX_WINDOW
        assert judge.judge.adaptive
        assert judge.judge.concurrency == MAX_WINDOW
        assert DEFAULT_CONCURRENCY == 32
        assert judge.judge.concurrency_note() is None
        assert asked == ["/v1/models", "/api/version"]


def test_the_scripted_judge_server_and_a_stopped_server_get_the_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with fake_llm_server([]) as fake:  # answers no GET at all (501)
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        judge = make_cached_judge("openai:local", no_cache=False, replay=False)
        assert judge is not None
        assert (judge.judge.adaptive, judge.judge.concurrency) == (True, MAX_WINDOW)
        assert fake.requests == []  # the probe is not a judge call
    # the same port after the server stopped: refused at once, no wait
    judge = make_cached_judge("openai:local", no_cache=False, replay=False)
    assert judge is not None
    assert (judge.judge.adaptive, judge.judge.concurrency) == (True, MAX_WINDOW)


def test_a_given_concurrency_is_kept_and_nothing_is_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    with serving({"/v1/models": models("me")}) as (url, asked):
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        options = JudgeOptions(concurrency=8)
        judge = make_cached_judge("openai:local", no_cache=False, replay=False, options=options)
        assert judge is not None
        assert (judge.judge.adaptive, judge.judge.concurrency) == (False, 8)
        assert judge.judge.concurrency_note() is None
        assert asked == []


def test_a_remote_base_url_is_never_probed(monkeypatch: pytest.MonkeyPatch) -> None:
    # the network guard would fail the test on any connection to this address
    monkeypatch.setenv("OPENAI_BASE_URL", "https://judge.example.com/v1")
    options, note = JudgeOptions().settle(make_judge("openai:remote"))
    assert options.concurrency == 32
    assert note is None


def test_the_ollama_provider_is_known_without_asking(monkeypatch: pytest.MonkeyPatch) -> None:
    with serving({}) as (url, asked):
        monkeypatch.setenv("OLLAMA_BASE_URL", url)
        options, note = JudgeOptions().settle(make_judge("ollama:llama3"))
        assert options.concurrency == 2
        assert note is not None
        assert "Ollama" in note
        assert asked == []
