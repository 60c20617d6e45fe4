"""``compare`` of two monitor windows: different traces, so the comparison is unpaired (Fisher's
exact test, Welch's t); through the CLI (exit codes, --json, --markdown), the API and the
compare page, the windows built by the live scorer from traces received over OTLP/HTTP."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from checkweigh.cli import app
from checkweigh.live import LiveScorer, LiveSettings, load_monitor
from checkweigh.server import create_app
from checkweigh.store import RunStatus, Store, windows
from support.live_airline import HOUR, LOOKUP_TRACE, SUITE, T0, Clock, send, traces


def _two_windows(tmp_path: Path, *, second_looks_up: bool) -> Store:
    """Hour 1: 40 traces that all look the reservation up; hour 2: 30 traces that all do, or
    none does. Both windows closed by the scorer's housekeeping."""
    (tmp_path / "suite.yaml").write_text(SUITE)
    monitor = tmp_path / "monitor.yaml"
    monitor.write_text("name: airline\nsuite: suite.yaml\nwindow: 1h\n")
    store = Store(f"sqlite:///{tmp_path / 'live.db'}")
    clock = Clock(T0 + 60)

    async def scenario() -> None:
        scorer = LiveScorer(store, [load_monitor(monitor)], LiveSettings(quiet_s=5), clock=clock)
        await asyncio.to_thread(send, store, traces(40, only=LOOKUP_TRACE), clock)
        clock.now += 10
        while await scorer.step():
            pass
        clock.now = T0 + HOUR + 60
        await asyncio.to_thread(
            send, store, traces(30, first=100, lookups=second_looks_up, only=LOOKUP_TRACE), clock
        )
        clock.now += 10
        while await scorer.step():
            pass
        clock.now = T0 + 2 * HOUR + 60
        await scorer.housekeeping(clock.now)
        for m in scorer.monitors:
            await m.close()

    asyncio.run(scenario())
    second, first = windows(store, "airline")
    assert (first.traces, second.traces) == (40, 30)
    assert first.closed
    assert second.closed
    return store


def _compare(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["compare", *args], env={"COLUMNS": "200"})
    return result.exit_code, result.output


def test_a_check_that_stopped_holding_is_an_unpaired_regression(tmp_path: Path) -> None:
    store = _two_windows(tmp_path, second_looks_up=False)
    out_json, out_md = tmp_path / "cmp.json", tmp_path / "cmp.md"
    code, out = _compare(
        "monitor:airline@-1h",
        "monitor:airline",
        "--db",
        store.url,
        "--json",
        str(out_json),
        "--markdown",
        str(out_md),
    )
    assert code == 1, out
    assert "REGRESSION" in out
    assert "unpaired: two monitor windows (40 and 30 traces)" in out
    assert "Fisher's exact (unpaired: 40 base, 30 candidate traces)" in out
    assert "pass->fail" not in out
    assert "paired execution" not in out
    data = json.loads(out_json.read_text())
    assert data["unpaired"] is True
    assert (data["paired"], data["only_base"], data["only_candidate"]) == (0, 40, 30)
    assert data["verdict"] == "regression"
    assert (data["regressions"], data["improvements"]) == ([], [])
    rate = data["suite"][0]
    assert (rate["metric"], rate["base"], rate["candidate"]) == ("case pass rate (%)", 100.0, 0.0)
    assert rate["exceeded"] is True
    # every trace passed against none: the one table as extreme, C(70, 40) to 1
    assert 0 < rate["p_value"] < 1e-15
    checks = {c["check"]: c for c in data["checks"]}
    looked = checks["looked_up"]
    assert (looked["base_rate"], looked["candidate_rate"], looked["change"]) == (1.0, 0.0, -1.0)
    assert (looked["worse"], looked["better"]) == (0, 0)
    assert looked["p_value"] == rate["p_value"]
    assert checks["answered"]["change"] == 0.0
    markdown = out_md.read_text()
    assert "unpaired: two monitor windows (40 and 30 traces)" in markdown
    assert "### Checks in both windows (Fisher's exact test)" in markdown
    assert "| looked\\_up | 100.0% | 0.0% | -100.0 | < 0.001 | significant |" in markdown
    assert "pass → fail" not in markdown
    assert "Not compared" not in markdown


def test_two_windows_alike_are_no_regression(tmp_path: Path) -> None:
    store = _two_windows(tmp_path, second_looks_up=True)
    code, out = _compare("monitor:airline@-1h", "monitor:airline", "--db", store.url)
    assert code == 0, out
    assert "NO REGRESSION" in out
    assert "unpaired: two monitor windows (40 and 30 traces)" in out


def test_the_api_and_the_page_compare_two_windows_unpaired(tmp_path: Path) -> None:
    store = _two_windows(tmp_path, second_looks_up=False)
    client = TestClient(create_app(store))
    params = {"base": "monitor:airline@-1h", "candidate": "monitor:airline"}
    answer = client.get("/api/runs/compare", params=params)
    assert answer.status_code == 200, answer.text
    data = answer.json()
    assert data["unpaired"] is True
    assert data["regression_detected"] is True
    assert data["base"] == windows(store, "airline")[1].run_id
    assert data["suite"][0]["test"] == "Fisher's exact (unpaired: 40 base, 30 candidate traces)"
    assert [c["check"] for c in data["checks"]] == ["looked_up", "answered"]
    page = client.get("/compare", params=params)
    assert page.status_code == 200, page.text
    assert "unpaired: two monitor windows (40 and 30 traces)" in page.text
    assert 'data-check="looked_up"' in page.text
    assert "pass→fail" not in page.text
    assert 'id="regressions"' not in page.text


def test_a_window_against_an_ordinary_run_sharing_no_case_is_refused(tmp_path: Path) -> None:
    """Only two windows compare unpaired: a window against another kind of run is still "no
    pair, no test" (exit 2, one line)."""
    store = _two_windows(tmp_path, second_looks_up=True)
    [window, _] = windows(store, "airline")
    info = store.get_run(window.run_id)
    # the same results stored as an ordinary run (no monitor in its configuration)
    config = {k: v for k, v in info.config.items() if k != "monitor"}
    results = list(store.iter_results(window.run_id))
    ordinary = store.create_run(info.suite, info.suite_path, config, 1)
    store.add_results(ordinary, [r._replace(case_id=f"other-{r.case_id}") for r in results])
    assert info.summary is not None
    store.finish_run(ordinary, RunStatus.COMPLETE, info.summary)
    code, out = _compare("monitor:airline", ordinary, "--db", store.url)
    assert code == 2, out
    assert "the runs share no case" in out
    assert "only two monitor windows are compared unpaired" in out


@pytest.mark.parametrize("ref", ["monitor:airline@-1h", "monitor:airline"])
def test_a_window_against_itself_is_refused(tmp_path: Path, ref: str) -> None:
    store = _two_windows(tmp_path, second_looks_up=True)
    code, out = _compare(ref, ref, "--db", store.url)
    assert code == 2, out
    assert "both refer to run mon-" in out
