"""``POST /api/runs`` (a run's ``--json`` published to another store) and the bearer token."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from checkweigh.cli import app as cli
from checkweigh.server import create_app
from checkweigh.store import Store
from server.conftest import TOKEN, Stored, base_cases, run_suite
from support.postgres import fresh_database

AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _exported(stored: Stored, run_id: str, tmp_path: Path) -> dict[str, Any]:
    """The run as ``checkweigh show --json`` writes it (what ``run --json`` writes)."""
    out = tmp_path / f"{run_id}.json"
    result = CliRunner().invoke(cli, ["show", run_id, "--db", stored.url, "--json", str(out)])
    assert result.exit_code in (0, 1), result.output
    data: dict[str, Any] = json.loads(out.read_text())
    return data


@pytest.fixture
def team_server(tmp_path: Path) -> Iterator[TestClient]:
    """An empty team store behind a token."""
    with (
        Store(f"sqlite:///{tmp_path / 'team.db'}") as store,
        TestClient(create_app(store, token=TOKEN)) as c,
    ):
        yield c


def _round_trip(stored: Stored, team: TestClient, tmp_path: Path) -> None:
    exported = _exported(stored, stored.base, tmp_path)
    answer = team.post("/api/runs", json=exported, headers=AUTH)
    assert answer.status_code == 201, answer.text
    assert answer.json()["id"] == stored.base
    listed = team.get("/api/runs", headers=AUTH).json()
    assert [r["id"] for r in listed["items"]] == [stored.base]
    assert listed["items"][0]["status"] == "complete"
    with Store(stored.url) as origin, TestClient(create_app(origin)) as local:
        for path in (
            f"/api/runs/{stored.base}",
            f"/api/runs/{stored.base}/results",
            f"/api/runs/{stored.base}/results?failed_check=correct_time",
            f"/api/runs/{stored.base}/results/wrong-time",
        ):
            uploaded, original = team.get(path, headers=AUTH).json(), local.get(path).json()
            if path.endswith("wrong-time"):
                # the export holds the verdicts, not the case: the upload has none to show
                assert original["case"]["id"] == "wrong-time"
                assert uploaded["case"] is None
                uploaded["case"] = original["case"]
            assert uploaded == original, path
    again = team.post("/api/runs", json=exported, headers=AUTH)
    assert again.status_code == 409
    assert again.json() == {"error": f"run.id: run {stored.base} is already stored"}


def test_an_uploaded_run_is_listed_and_its_results_match(
    stored: Stored, team_server: TestClient, tmp_path: Path
) -> None:
    _round_trip(stored, team_server, tmp_path)


def test_an_upload_to_postgresql_round_trips(stored: Stored, tmp_path: Path) -> None:
    with (
        fresh_database() as url,
        Store(url) as store,
        TestClient(create_app(store, token=TOKEN)) as team,
    ):
        _round_trip(stored, team, tmp_path)


def test_an_upload_without_a_configured_token_is_refused(
    stored: Stored, client: TestClient, tmp_path: Path
) -> None:
    answer = client.post("/api/runs", json=_exported(stored, stored.base, tmp_path))
    assert answer.status_code == 403
    assert answer.json() == {
        "error": "uploads are refused: this server has no token (start it with CHECKWEIGH_TOKEN)"
    }
    assert client.get("/api/runs").json()["total"] == 2  # nothing stored


@pytest.mark.parametrize(
    ("headers", "message"),
    [
        ({}, "this server needs a token: send Authorization: Bearer <token>"),
        ({"Authorization": "Bearer wrong"}, "wrong token"),
        ({"Authorization": f"Bearer {TOKEN}x"}, "wrong token"),
        ({"Authorization": f"Bearer {TOKEN[:-1]}"}, "wrong token"),
        ({"Authorization": TOKEN}, "expected the header Authorization: Bearer <token>"),
        ({"Authorization": f"Basic {TOKEN}"}, "expected the header Authorization: Bearer <token>"),
        ({"Authorization": "Bearer "}, "expected the header Authorization: Bearer <token>"),
    ],
)
@pytest.mark.parametrize("path", ["/api/runs", "/openapi.json", "/docs", "/", "/api/nothing"])
def test_with_a_token_every_request_needs_it(
    token_client: TestClient, headers: dict[str, str], message: str, path: str
) -> None:
    answer = token_client.get(path, headers=headers, follow_redirects=False)
    if not headers and path in ("/", "/docs"):
        # a page asked for by a browser (no header at all) opens the login page instead
        assert answer.status_code == 303
        assert answer.headers["location"] == "/login?next=" + quote(path, safe="")
        return
    assert answer.status_code == 401
    assert answer.json() == {"error": message}
    assert answer.headers["www-authenticate"] == "Bearer"
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert TOKEN not in answer.text


def test_the_token_opens_everything_and_never_appears_in_an_answer(
    token_client: TestClient, stored: Stored
) -> None:
    for path in (
        "/api/runs",
        f"/api/runs/{stored.base}",
        f"/api/runs/{stored.base}/results",
        f"/api/runs/compare?base={stored.base}&candidate={stored.candidate}",
        "/openapi.json",
        "/docs",
        "/api/runs/unknown",
        "/api/runs?limit=-1",
    ):
        answer = token_client.get(path, headers=AUTH)
        assert answer.status_code in (200, 404, 422), path
        assert TOKEN not in answer.text
        assert TOKEN not in str(answer.headers)


def test_the_api_is_read_only_except_uploads(token_client: TestClient, stored: Stored) -> None:
    for method, path in (
        ("DELETE", f"/api/runs/{stored.base}"),
        ("PUT", f"/api/runs/{stored.base}"),
        ("PATCH", "/api/runs"),
        ("POST", f"/api/runs/{stored.base}/results"),
    ):
        answer = token_client.request(method, path, headers=AUTH)
        assert answer.status_code == 405, (method, path)
        assert answer.json() == {"error": f"{method} is not allowed on {path} (read-only)"}


def test_api_keys_in_the_environment_never_reach_an_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-test-" + "k" * 40
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    db = f"sqlite:///{tmp_path / 'k.db'}"
    run_id = run_suite(tmp_path / "suite", base_cases(), db)
    with Store(db) as store, TestClient(create_app(store)) as c:
        for path in (f"/api/runs/{run_id}", f"/api/runs/{run_id}/results", "/api/runs"):
            assert key not in c.get(path).text


def test_the_json_run_writes_uploads_as_is(tmp_path: Path, team_server: TestClient) -> None:
    db = f"sqlite:///{tmp_path / 'ci.db'}"
    out = tmp_path / "run.json"
    run_id = run_suite(tmp_path / "suite", base_cases(), db, "--json", str(out))
    answer = team_server.post(
        "/api/runs",
        content=out.read_bytes(),
        headers={**AUTH, "Content-Type": "application/json"},
    )
    assert answer.status_code == 201, answer.text
    results = team_server.get(f"/api/runs/{run_id}/results", headers=AUTH).json()
    exported = json.loads(out.read_text())
    assert [(r["case_id"], r["state"], r["score"]) for r in results["items"]] == [
        (r["case_id"], r["case"]["state"], r["case"]["score_pct"]) for r in exported["results"]
    ]


def test_an_export_with_its_cases_uploads_them_and_a_bad_one_is_refused(
    stored: Stored, team_server: TestClient, tmp_path: Path
) -> None:
    out = tmp_path / "with-cases.json"
    shown = CliRunner().invoke(
        cli, ["show", stored.base, "--db", stored.url, "--json", str(out), "--json-cases"]
    )
    assert shown.exit_code in (0, 1), shown.output
    alone = CliRunner().invoke(cli, ["show", stored.base, "--db", stored.url, "--json-cases"])
    assert alone.exit_code == 2
    assert "error: --json-cases: the cases go in the JSON results; give --json FILE too" in (
        " ".join(alone.stderr.split())
    )
    with Store(stored.url) as origin:
        original = TestClient(create_app(origin)).get(f"/api/runs/{stored.base}/results/wrong-time")
    exported = json.loads(out.read_text())
    assert all("evaluated_case" in r for r in exported["results"])
    broken = json.loads(json.dumps(exported))
    broken["results"][1]["evaluated_case"]["trace"] = [{"kind": "shout"}]
    refused = team_server.post("/api/runs", json=broken, headers=AUTH)
    assert refused.status_code == 422
    assert refused.json()["error"].startswith("body.results[1].evaluated_case.trace.0.kind: ")
    assert team_server.post("/api/runs", json=exported, headers=AUTH).status_code == 201
    page = team_server.get(f"/api/runs/{stored.base}/results/wrong-time", headers=AUTH).json()
    assert page["case"] == original.json()["case"]
    assert page["case"]["id"] == "wrong-time"
