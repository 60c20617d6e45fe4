"""The comparison the server answers from its cached case indexes is the one read from the
store whole (what ``checkweigh compare --json`` writes), threshold for threshold."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from checkweigh.service import ComparisonMemo, compare_stored, compare_thresholds, comparison_json
from checkweigh.store import ResultWriter, RunStatus, Store
from server.conftest import Stored, store_two_runs


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"case_score_threshold": 0.0, "max_avg_score_drop": 0.0},
        {"max_pass_rate_drop": 50.0, "alpha": 0.2},
        {"strict": "true", "max_latency_increase_pct": 1.0},
    ],
)
def test_the_indexed_comparison_is_the_stored_one(
    client: TestClient, stored: Stored, params: dict[str, Any]
) -> None:
    for base, candidate in ((stored.base, stored.candidate), (stored.candidate, stored.base)):
        answer = client.get(
            "/api/runs/compare", params={"base": base, "candidate": candidate, **params}
        )
        assert answer.status_code == 200, answer.text
        values = {
            "case_score_delta" if k == "case_score_threshold" else k: float(v)
            for k, v in params.items()
            if k != "strict"
        }
        with Store(stored.url) as store:
            whole = compare_stored(
                store, base, candidate, compare_thresholds(values), strict="strict" in params
            )
        expected = comparison_json(whole.base.id, whole.candidate.id, whole.result)
        assert answer.json() == expected
        # asked again: the indexes are cached now, the answer the same
        again = client.get(
            "/api/runs/compare", params={"base": base, "candidate": candidate, **params}
        )
        assert again.json() == expected
    # the changed cases are reported with their reasons, the flips first
    body = client.get(
        "/api/runs/compare", params={"base": stored.base, "candidate": stored.candidate}
    ).json()
    assert body["regressions"], body
    assert all(r["reason"] for r in body["regressions"])


def test_a_comparison_of_finished_runs_is_made_once_per_thresholds(
    stored: Stored, monkeypatch: pytest.MonkeyPatch
) -> None:
    from checkweigh.server import create_app
    from checkweigh.service import _compare

    made: list[float] = []
    real = _compare.compare_decided

    def counted(*args: Any, **kwargs: Any) -> Any:
        made.append(kwargs["thresholds"].alpha)
        return real(*args, **kwargs)

    monkeypatch.setattr(_compare, "compare_decided", counted)
    pair = {"base": stored.base, "candidate": stored.candidate}
    with Store(stored.url) as store, TestClient(create_app(store)) as client:
        first = client.get("/api/runs/compare", params=pair).json()
        # the page, and the API again: the same runs and thresholds, the kept comparison
        page = client.get("/compare", params=pair)
        assert page.status_code == 200
        assert f"{first['suite'][0]['candidate']:.1f}" in page.text
        assert client.get("/api/runs/compare", params=pair).json() == first
        assert made == [0.05]
        # other thresholds (or runs) are another comparison
        other = client.get("/api/runs/compare", params={**pair, "alpha": 0.2}).json()
        assert made == [0.05, 0.2]
        assert other["alpha"] == 0.2
        reverse = {"base": stored.candidate, "candidate": stored.base}
        assert client.get("/api/runs/compare", params=reverse).status_code == 200
        assert made == [0.05, 0.2, 0.05]


def test_a_comparison_with_a_running_run_is_not_kept(tmp_path: Path) -> None:
    # a database of its own with a run still running: the candidate's results, written by a
    # run that has not ended (its results may still grow)
    stored = store_two_runs(tmp_path, f"sqlite:///{tmp_path / 'runs.db'}")
    memo = ComparisonMemo()
    thresholds = compare_thresholds({})
    with Store(stored.url) as store:
        info = store.get_run(stored.candidate)
        running = store.create_run(info.suite, "suite.yaml", info.config, 1)
        results = list(store.iter_results(info.id))
        with ResultWriter(store, running) as writer:
            for result in results:
                writer.add(result)
        assert store.get_run(running).status is RunStatus.RUNNING

        first = compare_stored(store, stored.base, running, thresholds, memo=memo)
        again = compare_stored(store, stored.base, running, thresholds, memo=memo)
        assert again.result is not first.result  # compared afresh
        assert again.result == first.result
        # the finished candidate's comparison is kept, and the same
        finished = compare_stored(store, stored.base, stored.candidate, thresholds, memo=memo)
        kept = compare_stored(store, stored.base, stored.candidate, thresholds, memo=memo)
        assert kept.result is finished.result
        assert finished.result.regressions == first.result.regressions
