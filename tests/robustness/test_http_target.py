"""Catalogue: HTTP agents that fail, and http targets written wrong, against the real
`checkweigh run` in a subprocess.

Each fault row is a realistic misbehaviour of the agent's endpoint on one of five cases, with
the exact outcome: the exit code by the gates, the one-line reason on the errored case, no
traceback, every case stored and the run complete. Each input row is a mistake in the suite
or the environment: exit 2, one line naming the field, no run started.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from email.utils import formatdate
from pathlib import Path
from typing import Any

import pytest

from support import cli_process as cli
from support.http_agent import Reply, closed_port, http_agent

SUITE = """\
name: bookings-http
cases: cases.jsonl
target:
  kind: http
  url: ${{AGENT_URL}}
  concurrency: 5
  backoff_s: 0.05
{extra}checks:
  correct_time: {{type: equals, path: final_state.time, value: "10:00"}}
rubrics:
  completion:
    weights: {{correct_time: 1.0}}
thresholds: {{cases_pass_threshold: 50}}
gates:
  - {{metric: errored_executions, max: {max_errored}}}
"""
TOKEN = "tok-9f2c1e7a-SECRET"


def _write(folder: Path, extra: dict[str, Any], max_errored: int = 0) -> None:
    extra = {"headers": {"Authorization": "Bearer ${AGENT_TOKEN}"}, **extra}
    lines = "".join(f"  {k}: {json.dumps(v)}\n" for k, v in extra.items())
    (folder / "suite.yaml").write_text(SUITE.format(extra=lines, max_errored=max_errored))
    (folder / "cases.jsonl").write_text(
        "".join(
            json.dumps({"id": f"book-{n}", "input": {"time": "10:00"}}) + "\n" for n in range(5)
        )
    )


def _run(folder: Path, url: str, **env: str | None) -> cli.Finished:
    """``checkweigh run`` with the agent's URL and token in the environment (a None in
    ``env`` leaves that variable unset)."""
    given = {"AGENT_URL": url, "AGENT_TOKEN": TOKEN, **env}
    os.environ.update({k: v for k, v in given.items() if v is not None})
    try:
        return cli.run(["run", "suite.yaml", "--db", "sqlite:///runs.db", "-q"], folder)
    finally:
        for name in ("AGENT_URL", "AGENT_TOKEN", *env):
            os.environ.pop(name, None)


@dataclass(frozen=True)
class Fault:
    name: str
    replies: list[Reply]
    """What the agent answers for book-2, in order (the other cases are answered well)."""
    code: int
    message: str
    errored: int = 1
    extra: dict[str, Any] = field(default_factory=dict)
    calls: int | None = None
    """How many requests book-2 got (retries), when it matters."""
    max_seconds: float = 20.0


FAULTS = [
    Fault(
        "500",
        [Reply(status=500, body={"error": "calendar DB down"})],
        1,
        'http agent answered 500 Internal Server Error (URL): {"error": "calendar DB down"}',
        calls=1,
    ),
    Fault("503-then-ok", [Reply(status=503), Reply()], 0, "0 errored", errored=0, calls=2),
    Fault(
        "429-retry-after-seconds",
        [Reply(status=429, retry_after="1"), Reply()],
        0,
        "0 errored",
        errored=0,
        calls=2,
    ),
    Fault(
        "429-retry-after-date",
        [Reply(status=429, retry_after=formatdate(0, usegmt=True)), Reply()],
        0,
        "0 errored",
        errored=0,
        calls=2,
    ),
    Fault(
        "503-always",
        [Reply(status=503)] * 5,
        1,
        "http agent answered 503 Service Unavailable (URL): ",
        extra={"retries": 2},
        calls=3,
    ),
    Fault(
        "429-retry-after-too-long",
        [Reply(status=429, retry_after="3600")],
        1,
        "(Retry-After 3600s is over max_wait_s 30)",
        calls=1,
    ),
    Fault(
        "malformed-json",
        [Reply(raw=b'{"trace": [], "final_state": {"time": "10:00"')],
        1,
        "http reply is not JSON (unexpected end of data)",
    ),
    Fault(
        "wrong-shape",
        [Reply(body={"answer": "Booked at 10:00"})],
        1,
        "http reply does not fit format checkweigh: answer: unknown key",
    ),
    Fault(
        "hang-request-timeout",
        [Reply(hang=True)],
        1,
        "http agent gave no reply within 1s (request_timeout_s): URL",
        extra={"request_timeout_s": 1},
        max_seconds=10,
    ),
    Fault(
        "hang-case-timeout",
        [Reply(hang=True)],
        1,
        "agent timed out after 1.5s",
        extra={"timeout_s": 1.5},
        max_seconds=10,
    ),
    Fault(
        "slow-but-in-time",
        [Reply(delay_s=0.5)],
        0,
        "0 errored",
        errored=0,
        extra={"timeout_s": 5},
    ),
]


@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
def test_an_http_agent_fault_is_an_errored_case_never_the_runs_end(
    tmp_path: Path, fault: Fault
) -> None:
    _write(tmp_path, fault.extra)
    with http_agent({"book-2": list(fault.replies)}) as agent:
        done = _run(tmp_path, agent.url)
    output = done.out + done.err
    assert done.code == fault.code, output
    assert fault.message.replace("URL", agent.url) in " ".join(done.out.split()), output
    assert f"{fault.errored} errored" in done.out
    assert "Traceback" not in output
    assert done.seconds < fault.max_seconds
    db = tmp_path / "runs.db"
    assert cli.stored(db) == 5
    assert cli.run_row(db) == ("complete", 5, False)
    if fault.calls is not None:
        assert len(agent.calls("book-2")) == fault.calls
    assert TOKEN not in output
    assert TOKEN.encode() not in db.read_bytes()


def test_a_refused_connection_errors_every_case_and_the_run_finishes(tmp_path: Path) -> None:
    _write(tmp_path, {"retries": 1})
    url = f"http://127.0.0.1:{closed_port()}/agent"
    done = _run(tmp_path, url)
    assert done.code == 1, done.out + done.err
    assert f"connection refused: {url} (after 2 tries; earlier: connection refused)" in done.out
    assert "5 errored" in done.out
    assert cli.run_row(tmp_path / "runs.db") == ("complete", 5, False)


def test_the_token_is_sent_but_never_stored_printed_or_echoed(tmp_path: Path) -> None:
    # the agent refuses the token and echoes it back in its error, as careless servers do
    echo = {"error": f"token Bearer {TOKEN} is not valid for this tenant"}
    _write(tmp_path, {}, max_errored=5)
    with http_agent({"book-2": [Reply(status=401, body=echo)]}) as agent:
        done = _run(tmp_path, agent.url)
    assert all(h["authorization"] == f"Bearer {TOKEN}" for _, _, h in agent.requests)
    assert "token Bearer *** is not valid" in done.out
    output = done.out + done.err
    assert TOKEN not in output
    for path in tmp_path.iterdir():  # the database, its journal, anything written
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path
    # the stored run's snapshot keeps the variable's name, not its value
    assert b"${AGENT_TOKEN}" in (tmp_path / "runs.db").read_bytes()


@dataclass(frozen=True)
class BadInput:
    name: str
    extra: dict[str, Any]
    message: str
    env: dict[str, str | None] = field(default_factory=dict)
    url: str = "http://127.0.0.1:9/agent"


BAD_INPUTS = [
    BadInput(
        "token-unset",
        {},
        "error: target.headers.Authorization: environment variable AGENT_TOKEN is not set",
        env={"AGENT_TOKEN": None},
    ),
    BadInput(
        "token-empty",
        {},
        "error: target.headers.Authorization: environment variable AGENT_TOKEN is empty",
        env={"AGENT_TOKEN": ""},
    ),
    BadInput(
        "url-unset",
        {},
        "error: target.url: environment variable AGENT_URL is not set",
        env={"AGENT_URL": None},
    ),
    BadInput(
        "url-not-http",
        {},
        "target.url: ${AGENT_URL} from the environment gives 'ftp://h/a': expected an "
        "http:// or https:// URL, got 'ftp://h/a'",
        url="ftp://h/a?token=s3cr3t",
    ),
    BadInput(
        "url-no-host",
        {},
        "target.url: ${AGENT_URL} from the environment gives 'http:///a': expected a host in "
        "the URL",
        url="http:///a",
    ),
    BadInput(
        "secret-in-suite",
        {"headers": {"X-Api-Key": "sk-live-123"}},
        "suite.yaml:LINE: target.headers: header X-Api-Key: a secret written in the suite is "
        "stored with every run",
    ),
    BadInput(
        "body-path",
        {"body": {"q": "{{inptu.time}}"}},
        "suite.yaml:LINE: target.body: '{{inptu.time}}' reads 'inptu'",
    ),
    BadInput(
        "messages-in-a-single-call-body",
        {"body": {"history": "{{messages}}"}},
        "cases.jsonl:1: user: case 'book-0' has no user, but target.body in suite.yaml reads "
        "{{messages}}, which only the turns of a conversation send",
    ),
    BadInput("retries-negative", {"retries": -1}, "suite.yaml:LINE: target.retries: "),
    BadInput(
        "reply-format",
        {"reply": {"format": "langchain"}},
        "suite.yaml:LINE: target.reply.format: ",
    ),
    BadInput("unknown-key", {"timeout": 5}, "suite.yaml:LINE: target.timeout: unknown key"),
]


@pytest.mark.parametrize("bad", BAD_INPUTS, ids=[b.name for b in BAD_INPUTS])
def test_a_bad_http_target_is_one_line_and_exit_2(tmp_path: Path, bad: BadInput) -> None:
    _write(tmp_path, bad.extra)
    text = (tmp_path / "suite.yaml").read_text().splitlines()
    key = next(iter(bad.extra), "")
    line = next((n for n, t in enumerate(text, 1) if key and t.startswith(f"  {key}:")), 0)
    done = _run(tmp_path, bad.url, **bad.env)
    assert done.code == 2, done.out + done.err
    lines = done.err.strip().splitlines()
    assert len(lines) == 1, done.err
    assert bad.message.replace("LINE", str(line)) in lines[0]
    if bad.name.startswith("url-not") or bad.name == "url-no-host":  # set, but unusable
        assert lines[0].startswith("error: suite.yaml:5: target.url: ")
        assert "s3cr3t" not in lines[0]
    assert "Traceback" not in done.out + done.err
    assert cli.stored(tmp_path / "runs.db") == 0
