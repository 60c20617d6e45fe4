# ruff: noqa: E501  (tables: one bad input and its exact answer a line)
"""Robustness of the server's API: each row is a realistic bad request (a bad parameter, an
unknown id, a malformed upload, a wrong token) and the exact answer expected: its status and
its one-line JSON error, never a traceback, never a stored half-run.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from checkweigh.cli import app as cli
from checkweigh.server import create_app
from checkweigh.store import Store
from server.conftest import TOKEN, Stored, store_two_runs

AUTH = {"Authorization": f"Bearer {TOKEN}"}
CHECKS = "correct_participants, correct_time, checked_first, clear_explanation"


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Stored:
    folder = tmp_path_factory.mktemp("robust-server")
    return store_two_runs(folder, f"sqlite:///{folder / 'runs.db'}")


@pytest.fixture
def client(stored: Stored) -> Iterator[TestClient]:
    with Store(stored.url) as store, TestClient(create_app(store, token=TOKEN)) as c:
        yield c


# (path with {base} and {candidate}, status, exact error with the same placeholders)
BAD_REQUESTS = [
    ("/api/runs?limit=0", 422, "query parameter limit: Input should be greater than or equal to 1"),
    ("/api/runs?limit=501", 422, "query parameter limit: Input should be less than or equal to 500"),
    ("/api/runs?limit=ten", 422, "query parameter limit: Input should be a valid integer, unable to parse string as an integer"),
    ("/api/runs?offset=-1", 422, "query parameter offset: Input should be greater than or equal to 0"),
    ("/api/runs?status=done", 422, "query parameter status: Input should be 'running', 'complete' or 'incomplete'"),
    ("/api/runs/nope", 404, "no run 'nope'"),
    ("/api/runs/2026", 422, "run id prefix '2026' is ambiguous; give more of it"),
    ("/api/runs/nope/results", 404, "no run 'nope'"),
    ("/api/runs/{base}/results?state=ok", 422, "query parameter state: Input should be 'passed', 'failed' or 'errored'"),
    ("/api/runs/{base}/results?outcome=success", 422, "query parameter outcome: Input should be 'successful_completion', 'graceful_failure', 'partial_failure' or 'hard_failure'"),
    ("/api/runs/{base}/results?failed_check=politeness", 422, f"failed_check: expected one of the run's checks ({CHECKS})"),
    ("/api/runs/{base}/results?errored=maybe", 422, "query parameter errored: Input should be a valid boolean, unable to interpret input"),
    ("/api/runs/{base}/results?limit=100000", 422, "query parameter limit: Input should be less than or equal to 500"),
    ("/api/runs/{base}/results/no-such-case", 404, "run {base} has no case 'no-such-case' (repeat 0)"),
    ("/api/runs/{base}/results/ok-1?repeat=3", 404, "run {base} has no case 'ok-1' (repeat 3)"),
    ("/api/runs/{base}/results/ok-1?repeat=-1", 422, "query parameter repeat: Input should be greater than or equal to 0"),
    ("/api/runs/nope/results/ok-1", 404, "no run 'nope'"),
    ("/api/runs/compare?base={base}", 422, "query parameter candidate: Field required"),
    ("/api/runs/compare?base=nope&candidate={candidate}", 404, "base: no run 'nope'"),
    ("/api/runs/compare?base={base}&candidate=nope", 404, "candidate: no run 'nope'"),
    ("/api/runs/compare?base={base}&candidate={base}", 422, "candidate: both refer to run {base}"),
    ("/api/runs/compare?base={base}&candidate={candidate}&max_pass_rate_drop=-1", 422, "max_pass_rate_drop: expected a number >= 0, got -1"),
    ("/api/runs/compare?base={base}&candidate={candidate}&max_avg_score_drop=nan", 422, "max_avg_score_drop: expected a number >= 0, got nan"),
    ("/api/runs/compare?base={base}&candidate={candidate}&max_latency_increase_pct=inf", 422, "max_latency_increase_pct: expected a number >= 0, got inf"),
    ("/api/runs/compare?base={base}&candidate={candidate}&case_score_threshold=-5", 422, "case_score_threshold: expected a number >= 0, got -5"),
    ("/api/runs/compare?base={base}&candidate={candidate}&alpha=1", 422, "alpha: expected a level between 0 and 1, got 1"),
    ("/api/runs/compare?base={base}&candidate={candidate}&alpha=five", 422, "query parameter alpha: Input should be a valid number, unable to parse string as a number"),
    ("/api/runs/{base}/stability", 422, "run {base} has no judge checks and no noise was given: nothing to simulate (noise CHECK=RATE treats a check as noisy)"),
    ("/api/runs/{base}/stability?noise=0.9", 422, "noise: expected RATE or CHECK=RATE with RATE from 0 to 0.5 (the chance one judge answer differs from its usual answer), got '0.9'"),
    ("/api/runs/{base}/stability?noise=politeness=0.1", 422, f"noise: run {{base}} has no check 'politeness'; its checks: {CHECKS}"),
    ("/api/runs/{base}/stability?noise=0.1", 422, "noise: run {base} has no judge checks for RATE to apply to; name a check with CHECK=RATE"),
    ("/api/runs/{base}/stability?noise=correct_time=0.1&sims=0", 422, "query parameter sims: Input should be greater than or equal to 1"),
    ("/api/runs/nope/stability", 404, "no run 'nope'"),
    ("/api/nothing", 404, "no such endpoint: GET /api/nothing"),
]  # fmt: skip


@pytest.mark.parametrize(("path", "status", "error"), BAD_REQUESTS)
def test_a_bad_request_is_its_status_and_one_line(
    client: TestClient, stored: Stored, path: str, status: int, error: str
) -> None:
    names = {"base": stored.base, "candidate": stored.candidate}
    answer = client.get(path.format(**names), headers=AUTH)
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"] == "application/json"
    assert answer.json() == {"error": error.format(**names)}
    assert "Traceback" not in answer.text


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = doc
        for key in parents:
            target = target[int(key)] if key.isdigit() else target[key]
        if value is _DROP:
            del target[int(last) if last.isdigit() else last]
        else:
            target[int(last) if last.isdigit() else last] = value

    return change


_DROP = object()

# (what is wrong, how the exported run is changed, status, exact error)
BAD_UPLOADS = [
    ("no summary", _set("summary", _DROP), 422, "body.summary: Field required"),
    ("no results", _set("results", _DROP), 422, "body.results: Field required"),
    ("results not a list", _set("results", {"a": 1}), 422, "body.results: Input should be a valid list"),
    ("a running run", _set("run.status", "running"), 422, "body.run.status: expected a finished run (complete or incomplete)"),
    ("an unknown status", _set("run.status", "done"), 422, "body.run.status: Input should be 'running', 'complete' or 'incomplete'"),
    ("an id with a path in it", _set("run.id", "../../etc"), 422, "body.run.id: expected 1 to 40 letters, digits, '.', '_' or '-'"),
    ("an id too long", _set("run.id", "x" * 41), 422, "body.run.id: expected 1 to 40 letters, digits, '.', '_' or '-'"),
    ("no configuration", _set("run.config", _DROP), 422, "body.run.config: Field required"),
    ("a date that is not one", _set("run.created_at", "yesterday"), 422, "body.run.created_at: Input should be a valid datetime or date, input is too short"),
    ("a result without verdicts", _set("results.0.verdicts", _DROP), 422, "body.results[0].verdicts: Field required"),
    ("a result with a bad score status", _set("results.2.scores.completion.status", "great"), 422, "body.results[2].scores.completion.status: Invalid enum value 'great'; expected one of 'scored', 'errored', 'not_applicable'"),
    ("a result with a bad verdict state", _set("results.1.verdicts.correct_time.state", "yes"), 422, "body.results[1].verdicts.correct_time.state: Invalid enum value 'yes'; expected one of 'passed', 'failed', 'not_applicable', 'errored'"),
    ("a result too few", lambda d: d["results"].pop(), 422, "body.results: 12 result(s) but the summary counts 13 execution(s)"),
    ("a summary that is not one", _set("summary.executions", "many"), 422, "body.summary.executions: Input should be a valid integer, unable to parse string as an integer"),
]  # fmt: skip


@pytest.fixture(scope="module")
def exported(stored: Stored, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("export") / "run.json"
    result = CliRunner().invoke(cli, ["show", stored.base, "--db", stored.url, "--json", str(out)])
    assert result.exit_code in (0, 1), result.output
    data: dict[str, Any] = json.loads(out.read_text())
    return data


@pytest.mark.parametrize(
    ("what", "change", "status", "error"), BAD_UPLOADS, ids=[row[0] for row in BAD_UPLOADS]
)
def test_a_malformed_upload_is_refused_and_stores_nothing(
    exported: dict[str, Any],
    tmp_path: Path,
    what: str,
    change: Callable[[dict[str, Any]], None],
    status: int,
    error: str,
) -> None:
    doc = copy.deepcopy(exported)
    change(doc)
    with (
        Store(f"sqlite:///{tmp_path / 'team.db'}") as store,
        TestClient(create_app(store, token=TOKEN)) as team,
    ):
        answer = team.post("/api/runs", json=doc, headers=AUTH)
        assert answer.status_code == status, answer.text
        assert answer.json() == {"error": error}
        assert team.get("/api/runs", headers=AUTH).json()["total"] == 0


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (b"not json", "body: expected JSON: Expecting value"),
        (b"[]", "body: Input should be a valid dictionary or object to extract fields from"),
    ],
)
def test_an_upload_that_is_not_a_run_is_422(client: TestClient, body: bytes, error: str) -> None:
    answer = client.post(
        "/api/runs", content=body, headers={**AUTH, "Content-Type": "application/json"}
    )
    assert answer.status_code == 422
    assert answer.json()["error"].startswith(error)


@pytest.mark.parametrize(
    ("headers", "status", "error"),
    [
        ({}, 401, "this server needs a token: send Authorization: Bearer <token>"),
        ({"Authorization": "Bearer " + TOKEN.upper()}, 401, "wrong token"),
        ({"Authorization": "Bearer " + TOKEN + " " + TOKEN}, 401, "wrong token"),
        ({"Authorization": "Token " + TOKEN}, 401, "expected the header Authorization: Bearer <token>"),
    ],
)  # fmt: skip
def test_a_wrong_token_is_401_and_never_echoed(
    client: TestClient, exported: dict[str, Any], headers: dict[str, str], status: int, error: str
) -> None:
    for answer in (
        client.get("/api/runs", headers=headers),
        client.post("/api/runs", json=exported, headers=headers),
    ):
        assert answer.status_code == status
        assert answer.json() == {"error": error}
        assert TOKEN not in answer.text
