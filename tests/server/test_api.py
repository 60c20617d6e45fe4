"""The JSON API, in process, over runs the real engine stored from recorded traces."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from checkweigh.core import CompareThresholds
from server.conftest import SCRIPT_ID, Stored
from support.recorded_suite import standard_cases


def test_home_opens_the_runs_list(client: TestClient) -> None:
    answer = client.get("/", follow_redirects=False)
    assert answer.status_code == 307
    assert answer.headers["location"] == "/runs"


def test_the_runs_list_is_newest_first_paginated_with_its_total(
    client: TestClient, stored: Stored
) -> None:
    body = client.get("/api/runs").json()
    assert body["total"] == 2
    assert [r["id"] for r in body["items"]] == [stored.candidate, stored.base]
    page = client.get("/api/runs", params={"limit": 1, "offset": 1}).json()
    assert (page["total"], page["limit"], page["offset"]) == (2, 1, 1)
    assert [r["id"] for r in page["items"]] == [stored.base]
    assert client.get("/api/runs", params={"offset": 5}).json()["items"] == []


@pytest.mark.parametrize(
    ("params", "count"),
    [
        ({"suite": "bookings"}, 2),
        ({"suite": "another"}, 0),
        ({"status": "complete"}, 2),
        ({"status": "incomplete"}, 0),
        ({"suite": "bookings", "status": "complete", "limit": 1}, 2),
    ],
)
def test_runs_filter_by_suite_and_status(
    client: TestClient, params: dict[str, object], count: int
) -> None:
    assert client.get("/api/runs", params=params).json()["total"] == count


def test_one_run_has_its_aggregates_gates_snapshot_and_notes(
    client: TestClient, stored: Stored
) -> None:
    run = client.get(f"/api/runs/{stored.base}").json()
    assert run["id"] == stored.base
    assert run["status"] == "complete"
    assert run["executions"] == 13
    summary = run["summary"]
    assert summary["executions"] == 13
    assert summary["gates"] == [
        {
            "gate": "completion tcr >= 0.5",
            "passed": True,
            "actual": pytest.approx(0.8),
            "decided": True,
            "needs": None,
            "low": None,
            "high": None,
            "status": "passed",
        }
    ]
    assert summary["notes"] == []
    assert summary["case_gates"]["passed"] == 8
    assert summary["case_gates"]["failing"][0]["case_id"] == "wrong-time"
    completion = summary["rubrics"][0]
    assert completion["rubric"] == "completion"
    assert set(run["config"]["checks"]) == {
        "correct_participants",
        "correct_time",
        "checked_first",
        "clear_explanation",
    }
    # an id prefix names it too, as on the command line
    assert client.get(f"/api/runs/{stored.base[:-2]}").json()["id"] == stored.base


def test_results_are_listed_in_input_order_with_states_and_verdicts(
    client: TestClient, stored: Stored
) -> None:
    body = client.get(f"/api/runs/{stored.base}/results").json()
    assert body["total"] == 13
    ids = [r["case_id"] for r in body["items"]]
    assert ids[:6] == [c["id"] for c in standard_cases()]
    assert [r["position"] for r in body["items"]] == list(range(13))
    wrong = body["items"][2]
    assert wrong == {
        "case_id": "wrong-time",
        "repeat": 0,
        "position": 2,
        "state": "failed",
        "score": 70.0,
        "errored": False,
        "latency_ms": 380.0,
        "rubrics": {
            "completion": {"status": "scored", "score": 0.7, "outcome": "graceful_failure"}
        },
        "verdicts": {
            "correct_participants": "passed",
            "correct_time": "failed",
            "checked_first": "passed",
            "clear_explanation": "passed",
        },
    }
    page = client.get(f"/api/runs/{stored.base}/results", params={"limit": 4, "offset": 4})
    assert [r["case_id"] for r in page.json()["items"]] == ids[4:8]
    assert page.json()["total"] == 13


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"state": "passed"}, ["ok-1", "ok-2", *(f"good-{i}" for i in range(6))]),
        ({"state": "failed"}, ["wrong-time", "missing-bob", "crash", "terse", SCRIPT_ID]),
        ({"state": "errored"}, []),
        ({"failed_check": "correct_time"}, ["wrong-time", "crash", SCRIPT_ID]),
        ({"failed_check": "clear_explanation"}, ["crash", "terse"]),
        ({"failed_check": "correct_time", "state": "failed", "limit": 2}, ["wrong-time", "crash"]),
        ({"outcome": "hard_failure"}, ["crash"]),
        (
            {"errored": "false", "failed_check": "correct_participants"},
            ["missing-bob", "crash", "terse"],
        ),
        ({"errored": "true"}, []),
    ],
)
def test_each_results_filter(
    client: TestClient, stored: Stored, params: dict[str, str], expected: list[str]
) -> None:
    body = client.get(f"/api/runs/{stored.base}/results", params=params).json()
    assert [r["case_id"] for r in body["items"]] == expected
    if "limit" not in params:
        assert body["total"] == len(expected)


def test_one_case_result_has_every_verdict_with_its_reason(
    client: TestClient, stored: Stored
) -> None:
    body = client.get(f"/api/runs/{stored.base}/results/wrong-time").json()
    assert body["state"] == "failed"
    assert body["reason"].startswith("required check failed: correct_time:")
    assert set(body["verdicts"]) == {
        "correct_participants",
        "correct_time",
        "checked_first",
        "clear_explanation",
    }
    assert body["verdicts"]["correct_time"] == {
        "state": "failed",
        "reason": "final_state.booking.time is '11:00', expected '10:00'",
        "error": None,
        "measures": None,
    }
    # the stored case and the judge exchange are not stored yet: absent, not faked
    assert "trace" not in body
    assert "judge" not in body
    assert (
        client.get(f"/api/runs/{stored.base}/results/wrong-time", params={"repeat": 0}).json()
        == body
    )


def test_a_hostile_case_id_comes_back_verbatim_as_json_data(
    client: TestClient, stored: Stored
) -> None:
    listed = client.get(f"/api/runs/{stored.base}/results", params={"offset": 12})
    assert listed.headers["content-type"] == "application/json"
    assert listed.json()["items"][0]["case_id"] == SCRIPT_ID
    one = client.get(f"/api/runs/{stored.base}/results/{SCRIPT_ID}")
    assert one.status_code == 200
    assert one.headers["content-type"] == "application/json"
    assert one.json()["case_id"] == SCRIPT_ID
    assert one.headers["x-content-type-options"] == "nosniff"
    assert json.loads(one.text)["case_id"] == SCRIPT_ID


def test_compare_answers_regression_detected_the_flips_and_significance(
    client: TestClient, stored: Stored
) -> None:
    params = {"base": stored.base, "candidate": stored.candidate}
    body = client.get("/api/runs/compare", params=params).json()
    assert (body["base"], body["candidate"]) == (stored.base, stored.candidate)
    assert body["threshold_exceeded"] is True
    assert body["significant"] is False  # 3 flips: McNemar's p = 0.25
    assert body["verdict"] == "not_significant"
    assert body["regression_detected"] is False  # as the verdict says
    assert [c["case_id"] for c in body["regressions"]] == ["good-0", "good-1", "good-2"]
    assert all(c["flipped"] for c in body["regressions"])
    rate = next(s for s in body["suite"] if s["metric"] == "case pass rate (%)")
    assert rate["p_value"] == pytest.approx(0.25)
    assert rate["allowed"] == CompareThresholds().max_pass_rate_drop
    assert body["alpha"] == CompareThresholds().alpha


@pytest.mark.parametrize(
    ("overrides", "regression"),
    [
        ({}, True),
        ({"max_pass_rate_drop": 30, "max_avg_score_drop": 10}, False),
        ({"max_pass_rate_drop": 30}, True),  # the average score still drops 6.9 > 5
        ({"max_pass_rate_drop": 30, "max_avg_score_drop": 6.9}, True),
        ({"max_pass_rate_drop": 30, "max_avg_score_drop": 7}, False),
    ],
)
def test_compare_overrides_change_regression_detected(
    client: TestClient, stored: Stored, overrides: dict[str, float], regression: bool
) -> None:
    params = {"base": stored.base, "candidate": stored.candidate, **overrides}
    body = client.get("/api/runs/compare", params=params).json()
    assert body["threshold_exceeded"] is regression, body["suite"]
    assert body["regression_detected"] is (body["verdict"] == "regression")


def test_compare_strict_and_alpha_change_the_verdict(client: TestClient, stored: Stored) -> None:
    params = {"base": stored.base, "candidate": stored.candidate}
    assert (
        client.get("/api/runs/compare", params={**params, "strict": "true"}).json()["verdict"]
        == "regression"
    )
    assert (
        client.get("/api/runs/compare", params={**params, "alpha": 0.3}).json()["verdict"]
        == "regression"
    )


def test_compare_answers_what_compare_json_writes(
    client: TestClient, stored: Stored, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from checkweigh.cli import app

    out = tmp_path / "cmp.json"
    result = CliRunner().invoke(
        app, ["compare", stored.base, stored.candidate, "--db", stored.url, "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    params = {"base": stored.base, "candidate": stored.candidate}
    assert client.get("/api/runs/compare", params=params).json() == json.loads(out.read_text())


def test_stability_answers_what_stability_json_writes(
    client: TestClient, stored: Stored, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from checkweigh.cli import app

    out = tmp_path / "stab.json"
    args = ["--noise", "correct_time=0.1", "--sims", "300", "--seed", "4"]
    result = CliRunner().invoke(
        app, ["stability", stored.base, "--db", stored.url, "--json", str(out), *args]
    )
    assert result.exit_code == 0, result.output
    answer = client.get(
        f"/api/runs/{stored.base}/stability",
        params={"noise": "correct_time=0.1", "sims": 300, "seed": 4},
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body == json.loads(out.read_text())
    assert body["run"]["id"] == stored.base
    assert body["stability"]["simulations"] == 300


def test_the_openapi_document_and_docs_page(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    assert {
        "/api/runs",
        "/api/runs/{run_id}",
        "/api/runs/{run_id}/results",
        "/api/runs/{run_id}/results/{case_id}",
        "/api/runs/compare",
        "/api/runs/{run_id}/stability",
    } <= set(spec["paths"])
    params = {p["name"]: p for p in spec["paths"]["/api/runs/compare"]["get"]["parameters"]}
    default = params["max_avg_score_drop"]["schema"]["default"]
    assert default == CompareThresholds().max_avg_score_drop
    assert "post" in spec["paths"]["/api/runs"]


def test_the_docs_page_loads_only_what_the_server_serves(client: TestClient) -> None:
    page = client.get("/docs")
    assert page.status_code == 200
    sources = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert sources, page.text
    for source in sources:
        assert source.startswith("/static/"), source  # no CDN, no other host
        assert client.get(source).status_code == 200, source
    # no inline script: each <script> loads a file (a CSP of script-src 'self' holds)
    assert re.findall(r"<script[^>]*>([^<]*)</script>", page.text) == ["", ""]
    assert "SwaggerUIBundle" in client.get("/static/swagger/swagger-ui-bundle.js").text
