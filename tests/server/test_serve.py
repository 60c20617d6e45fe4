"""``checkweigh serve`` through the real command: refusing hosts without a token, bad input
as one line and exit 2, and a real server answering over loopback."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from server.conftest import TOKEN, Stored
from support.cli_process import ENTRY, run
from support.large_run import NOISE, cpu_over, store_large_run, wait_for_cpu


def _one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10", "example.org"])
def test_a_non_loopback_host_without_a_token_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host: str
) -> None:
    monkeypatch.delenv("CHECKWEIGH_TOKEN", raising=False)
    done = run(["serve", "--host", host, "--db", f"sqlite:///{tmp_path / 'r.db'}"], tmp_path)
    assert done.code == 2
    line = _one_line_error(done.err)
    assert line == (
        f"error: --host: listening on {host} needs a token: set CHECKWEIGH_TOKEN (clients then "
        "send Authorization: Bearer <token>), or listen on 127.0.0.1"
    )
    assert not (tmp_path / "r.db").exists()  # refused before opening anything


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--db", "nope://x"], "error: --db: cannot use database URL 'nope://x'"),
        (["--db", "sqlite:///{tmp}/a-file/r.db"], "error: --db: cannot create database "),
        (["--port", "99999"], "error: --port: expected an integer <= 65535, got 99999"),
        (["--port", "http"], "error: --port: "),
    ],
)
def test_bad_serve_input_is_one_line_and_exit_2(
    tmp_path: Path, args: list[str], fragment: str
) -> None:
    (tmp_path / "a-file").write_text("not a folder\n")  # even root cannot make a folder under it
    done = run(["serve", *(arg.format(tmp=tmp_path) for arg in args)], tmp_path)
    assert done.code == 2, done.err
    assert fragment in _one_line_error(done.err)


@contextmanager
def _serving(
    db: str, cwd: Path, env: dict[str, str], *args: str, logs: list[str] | None = None
) -> Iterator[tuple[str, float]]:
    """``checkweigh serve --port 0``: its base URL, and the seconds until it answered; what it
    printed is appended to ``logs`` once it has stopped."""
    began = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-c", ENTRY, "serve", "--db", db, "--port", "0", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **env},
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        found = re.search(r"on (http://127\.0\.0\.1:\d+) ", line)
        assert found, line
        url = found.group(1)
        headers = {"Authorization": f"Bearer {env['CHECKWEIGH_TOKEN']}"} if env else {}
        while True:
            try:
                httpx.get(f"{url}/api/runs", headers=headers, timeout=1).raise_for_status()
                break
            except httpx.TransportError:
                assert time.monotonic() - began < 10, "the server never answered"
                time.sleep(0.01)
        yield url, time.monotonic() - began
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=10)
        if logs is not None:
            logs.extend([line, out, err])


def test_serve_starts_and_answers(
    stored: Stored, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # how fast it starts is a figure of benchmarks/bench_server.py, not a timed test
    monkeypatch.delenv("CHECKWEIGH_TOKEN", raising=False)
    with _serving(stored.url, tmp_path, {}) as (url, _):
        body = httpx.get(f"{url}/api/runs").json()
        assert [r["id"] for r in body["items"]] == [stored.candidate, stored.base]
        home = httpx.get(url, follow_redirects=False)
        assert home.headers["location"] == "/runs"
        assert f'data-run-id="{stored.base}"' in httpx.get(f"{url}/runs").text


def test_serve_with_a_token_refuses_requests_without_it(stored: Stored, tmp_path: Path) -> None:
    logs: list[str] = []
    with _serving(stored.url, tmp_path, {"CHECKWEIGH_TOKEN": TOKEN}, logs=logs) as (url, _):
        refused = httpx.get(f"{url}/api/runs")
        assert refused.status_code == 401
        assert refused.json() == {
            "error": "this server needs a token: send Authorization: Bearer <token>"
        }
        wrong = httpx.get(f"{url}/api/runs", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        assert TOKEN not in wrong.text
        allowed = httpx.get(f"{url}/api/runs", headers={"Authorization": f"Bearer {TOKEN}"})
        assert allowed.json()["total"] == 2
    assert "token required" in logs[0]
    assert TOKEN not in "".join(logs)


def test_the_cli_starts_without_importing_the_server() -> None:
    code = (
        "import sys, checkweigh.cli; "
        "print(sorted(m for m in ('fastapi', 'uvicorn', 'starlette') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_the_server_with_130_and_no_traceback(
    stored: Stored, tmp_path: Path, signum: signal.Signals
) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", ENTRY, "serve", "--db", stored.url, "--port", "0"],
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    found = re.search(r"on (http://127\.0\.0\.1:\d+) ", proc.stderr.readline())
    assert found
    assert httpx.get(f"{found.group(1)}/api/runs").status_code == 200
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 130
    assert "Traceback" not in err


@pytest.fixture(scope="module")
def large_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """(database URL, run id) of a 2,000-case run: 100,000 simulated reruns of it take
    seconds of CPU."""
    folder = tmp_path_factory.mktemp("large")
    db = f"sqlite:///{folder / 'runs.db'}"
    return db, store_large_run(folder / "suite", db)


@pytest.mark.parametrize("token", [None, TOKEN], ids=["open", "token"])
def test_stability_stops_when_its_client_leaves_and_sigterm_ends_serve_mid_simulation(
    large_run: tuple[str, str], tmp_path: Path, token: str | None
) -> None:
    db, run_id = large_run
    env = {k: v for k, v in os.environ.items() if k != "CHECKWEIGH_TOKEN"}
    headers = {}
    if token is not None:  # the token's middleware stands between the client and the route
        env["CHECKWEIGH_TOKEN"] = token
        headers["Authorization"] = f"Bearer {token}"
    proc = subprocess.Popen(
        [sys.executable, "-c", ENTRY, "serve", "--db", db, "--port", "0"],
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stderr is not None
        found = re.search(r"on (http://127\.0\.0\.1:\d+) ", proc.stderr.readline())
        assert found
        url = f"{found.group(1)}/api/runs/{run_id}/stability"
        query = [("noise", n) for n in NOISE] + [("sims", "100000")]
        runs = httpx.get(f"{found.group(1)}/api/runs", headers=headers, timeout=10)
        assert runs.status_code == 200
        deadline = time.monotonic() + 20  # the cases index it builds at start, then idle
        while cpu_over(proc.pid, 0.3) > 0.05:
            assert time.monotonic() < deadline, "the server never went idle"

        # a client that gives up mid-simulation: the simulation notices at its next batch
        host, port = found.group(1).removeprefix("http://").split(":")
        path = httpx.URL(url, params=query).raw_path.decode()
        auth = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        with socket.create_connection((host, int(port)), timeout=10) as client:
            client.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n{auth}\r\n".encode())
            wait_for_cpu(proc.pid, 0.6)  # past reading the run: simulating
        time.sleep(0.5)
        assert cpu_over(proc.pid, 1.0) < 0.3  # a simulation still running would take ~1.0

        # a client still waiting when SIGTERM comes: answered 503, and serve exits at once
        answers: list[httpx.Response | httpx.HTTPError] = []

        def wait_for_it() -> None:
            try:
                answers.append(httpx.get(url, params=query, headers=headers, timeout=60))
            except httpx.HTTPError as exc:  # recorded, and the assertion below shows it
                answers.append(exc)

        waiting = threading.Thread(target=wait_for_it)
        waiting.start()
        wait_for_cpu(proc.pid, 0.6)
        began = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=10)
        stopped_in = time.monotonic() - began
        waiting.join(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert stopped_in < 5, f"serve took {stopped_in:.1f}s to stop"  # not 15 s of simulation
    (answer,) = answers
    assert isinstance(answer, httpx.Response), answer
    assert answer.status_code == 503
    assert answer.json() == {"error": "stopped before it finished: the server is stopping"}


@pytest.mark.parametrize("token", ["short-token", "               Zq", "  fifteen-chars-x  "])
def test_a_short_token_is_refused_at_start_without_showing_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, token: str
) -> None:
    monkeypatch.setenv("CHECKWEIGH_TOKEN", token)
    db = tmp_path / "r.db"
    done = run(["serve", "--db", f"sqlite:///{db}"], tmp_path)
    assert done.code == 2
    assert _one_line_error(done.err) == (
        "error: CHECKWEIGH_TOKEN: expected a token of at least 16 characters (python -c "
        "'import secrets; print(secrets.token_urlsafe(32))' makes one)"
    )
    assert token.strip() not in done.err + done.out
    assert not db.exists()


@pytest.mark.parametrize("name", ["http://evals.internal", "evals.internal/runs", "a b", ""])
def test_a_bad_allowed_host_is_one_line_and_exit_2(tmp_path: Path, name: str) -> None:
    done = run(
        ["serve", "--allowed-host", name, "--db", f"sqlite:///{tmp_path / 'r.db'}"], tmp_path
    )
    assert done.code == 2
    assert _one_line_error(done.err).startswith(
        "error: --allowed-host: expected a host name or address (no scheme, path or port)"
    )


def test_serve_answers_only_its_own_host_names_and_caps_bodies(
    stored: Stored, tmp_path: Path
) -> None:
    env = {"CHECKWEIGH_TOKEN": TOKEN}
    auth = {"Authorization": f"Bearer {TOKEN}"}
    args = ("--allowed-host", "evals.internal", "--max-upload", "1")
    with _serving(stored.url, tmp_path, env, *args) as (url, _):
        port = url.rsplit(":", 1)[1]
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", "evals.internal"):
            answer = httpx.get(f"{url}/api/runs", headers={**auth, "Host": host})
            assert answer.status_code == 200, host
        rebound = httpx.get(f"{url}/api/runs", headers={**auth, "Host": f"evil.example:{port}"})
        assert rebound.status_code == 421
        assert stored.base not in rebound.text
        big = b"[" + b"0," * (600 * 1024) + b"0]"  # 1.2 MB, declared by its Content-Length
        too_large = httpx.post(
            f"{url}/api/runs",
            content=big,
            headers={**auth, "Content-Type": "application/json"},
        )
        assert too_large.status_code == 413
        assert too_large.json() == {
            "error": "body: larger than this server's limit of 1 MiB (--max-upload)"
        }


ON_EVERY_ADDRESS = ("--host", "0.0.0.0", "--port", "0")


def test_listening_on_every_address_says_which_names_it_answers(
    stored: Stored, tmp_path: Path
) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", ENTRY, "serve", "--db", stored.url, *ON_EVERY_ADDRESS],
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "CHECKWEIGH_TOKEN": TOKEN},
    )
    try:
        assert proc.stderr is not None
        assert "on http://0.0.0.0:" in proc.stderr.readline()
        assert proc.stderr.readline().strip() == (
            "warning: --host 0.0.0.0 answers only requests for this machine's loopback names; "
            "give the names clients use with --allowed-host NAME"
        )
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
