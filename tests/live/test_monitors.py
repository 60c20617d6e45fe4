"""Monitors over received traces: deterministic checks on every trace, judge checks on a
sample within a budget per hour (what is left out counted, never dropped silently), results
per time window, windows closed with their summary and alert rules, a fired rule's webhook."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from checkweigh.errors import InputError
from checkweigh.live import (
    LiveScorer,
    LiveSettings,
    OpenSummaries,
    check_counts,
    load_monitor,
    window_summary,
)
from checkweigh.store import RunStatus, Store, budget_spent, queue_state, windows
from checkweigh.testing import Reply, fake_llm_server
from support.live_airline import HOUR, T0, Clock, send, traces

SUITE = """\
name: airline-live
cases: cases.jsonl
checks:
  answered:
    type: word_count
    path: output
    min: 5
  looked_up:
    type: tool_called
    step: {name: get_reservation_details}
  grounded:
    type: judge
    question: Is every statement in the final answer supported by the trace?
rubrics:
  support:
    weights: {answered: 1.0, looked_up: 1.0, grounded: 1.0}
"""


def _write(folder: Path, monitor: str) -> Path:
    (folder / "suite.yaml").write_text(SUITE)
    path = folder / "monitor.yaml"
    path.write_text(monitor)
    return path


def _run(scorer: LiveScorer) -> None:
    """Score what is ready, then close the monitors' judges (in the loop that used them)."""

    async def rounds() -> None:
        while await scorer.step():
            pass
        for monitor in scorer.monitors:
            await monitor.close()

    asyncio.run(rounds())


def _yes(request: dict[str, Any]) -> Reply:
    return Reply(json.dumps({"verdict": "yes", "reason": "every claim is in the trace"}))


@pytest.fixture
def judge_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    with fake_llm_server([], respond=_yes) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("CHECKWEIGH_CACHE_DIR", str(tmp_path / "cache"))
        yield server


def test_sampling_and_budget_leave_judge_checks_out_and_count_them(
    tmp_path: Path, judge_env: Any, store: Store
) -> None:
    monitor = _write(
        tmp_path,
        "name: airline\nsuite: suite.yaml\nwindow: 1h\njudge: openai:gpt-test\n"
        "sample: {judge: 0.5}\nbudget: {calls_per_hour: 6}\njudge_cache: false\n",
    )
    clock = Clock(T0 + 60)
    send(store, traces(20), clock)  # 40 traces
    clock.now += 10
    scorer = LiveScorer(store, [load_monitor(monitor)], LiveSettings(quiet_s=5), clock=clock)
    _run(scorer)
    [window] = windows(store, "airline")
    assert window.traces == 40
    # every trace scored by the deterministic checks; the judge saw a sample within budget
    assert window.judged == 6
    assert window.judged + window.skipped_rate + window.skipped_budget == 40
    assert 10 <= window.skipped_rate <= 30  # a rate of one half, decided by the trace id
    assert window.skipped_budget == 40 - 6 - window.skipped_rate
    assert window.judge_calls == len(judge_env.requests) == 6
    assert budget_spent(store, "airline", int(clock.now // HOUR)) == (6, 0.0)
    results = list(store.iter_results(window.run_id))
    assert len(results) == 40
    reasons = [r.verdicts["grounded"].reason for r in results]
    assert sum(r.startswith("not sampled (judge rate 0.5)") for r in reasons) == window.skipped_rate
    assert sum("budget of 6 calls this hour is spent" in r for r in reasons) == (
        window.skipped_budget
    )
    assert all(r.verdicts["answered"].state.value != "not_applicable" for r in results)
    # the same traces scored again by another monitor process decide the same sample
    again = load_monitor(monitor)
    assert [again.sampled(r.case_id) for r in results] == [
        not r.verdicts["grounded"].reason.startswith("not sampled (judge") for r in results
    ]


async def _hook_server(received: list[dict[str, Any]]) -> tuple[web.AppRunner, str]:
    async def hook(request: web.Request) -> web.Response:
        received.append(await request.json())
        return web.Response(status=204)

    app = web.Application()
    app.router.add_post("/hook", hook)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}/hook"


def test_windows_close_with_their_summary_and_a_drop_fires_the_webhook(
    tmp_path: Path, store: Store
) -> None:
    received: list[dict[str, Any]] = []

    async def scenario() -> None:
        runner, url = await _hook_server(received)
        try:
            monitor = _write(
                tmp_path,
                "name: airline\nsuite: suite.yaml\nwindow: 1h\n"
                "alerts:\n  - {check: looked_up, drop: true, alpha: 0.01, min_cases: 20}\n"
                "  - {check: answered, below: 0.2, min_cases: 20}\n"
                f"webhook: {url}\n",
            )
            clock = Clock(T0 + 60)
            scorer = LiveScorer(
                store, [load_monitor(monitor)], LiveSettings(quiet_s=5), clock=clock
            )
            # hour 1: every trace looks the reservation up; hour 2: none does
            await asyncio.to_thread(send, store, traces(20), clock)
            clock.now += 10
            while await scorer.step():
                pass
            clock.now = T0 + HOUR + 60
            await asyncio.to_thread(send, store, traces(40, lookups=False)[40:], clock)
            clock.now += 10
            while await scorer.step():
                pass
            clock.now = T0 + 2 * HOUR + 60
            await scorer.housekeeping(clock.now)
            second, first = windows(store, "airline")
            assert first.closed
            assert second.closed
            for window in (first, second):
                info = store.get_run(window.run_id)
                assert info.status is RunStatus.COMPLETE
                assert info.config["monitor"]["name"] == "airline"
                assert info.summary is not None
                assert info.summary.executions == window.traces == 40
            counts = check_counts(window_summary(store, second))
            assert counts["looked_up"] == (0, 40)
            [looked, answered] = second.alerts
            assert looked["state"] == "fired"
            assert answered["state"] in ("quiet", "undecided")
            assert "at most" in looked["false_alarms"]
            assert looked["webhook"]["ok"] is True
            [first_looked, _] = first.alerts
            assert first_looked["state"] == "undecided"  # no window before it
        finally:
            await runner.cleanup()

    asyncio.run(scenario())
    second, first = windows(store, "airline")
    assert store.get_run("monitor:airline").id == second.run_id
    assert store.get_run("monitor:airline@-1h").id == first.run_id
    assert store.get_run("monitor:airline@2027-01-15T08:30").id == first.run_id
    with pytest.raises(InputError, match="no run 'latest'"):  # windows are not an agent's runs
        store.get_run("latest")
    with pytest.raises(InputError, match="no window holding 2027-01-08"):
        store.get_run("monitor:airline@-7d")
    assert len(received) == 1
    assert received[0]["monitor"] == "airline"
    assert received[0]["check"] == "looked_up"
    assert received[0]["window"]["run_id"].startswith("mon-")


def test_traces_outside_the_filter_are_not_scored(tmp_path: Path) -> None:
    monitor = _write(
        tmp_path,
        "name: airline\nsuite: suite.yaml\nfilter:\n  service: [other-agent]\n"
        "  resource: {deployment.environment: staging}\n",
    )
    store = Store(f"sqlite:///{tmp_path / 'live.db'}")
    clock = Clock(T0 + 60)
    send(store, traces(2), clock)
    clock.now += 10
    _run(LiveScorer(store, [load_monitor(monitor)], LiveSettings(quiet_s=5), clock=clock))
    assert windows(store, "airline") == []
    assert queue_state(store).done == 4
    # the same filter naming the fixture's service scores them
    monitor.write_text(monitor.read_text().replace("other-agent", "airline-support-agent"))
    store2 = Store(f"sqlite:///{tmp_path / 'live2.db'}")
    send(store2, traces(2), clock)
    clock.now += 10
    _run(LiveScorer(store2, [load_monitor(monitor)], LiveSettings(quiet_s=5), clock=clock))
    assert windows(store2, "airline")[0].traces == 4


def test_a_trace_is_not_scored_before_its_quiet_window(tmp_path: Path) -> None:
    monitor = _write(tmp_path, "name: airline\nsuite: suite.yaml\n")
    store = Store(f"sqlite:///{tmp_path / 'live.db'}")
    clock = Clock(T0 + 60)
    send(store, traces(1), clock)
    scorer = LiveScorer(store, [load_monitor(monitor)], LiveSettings(quiet_s=5), clock=clock)
    clock.now += 2
    _run(scorer)
    assert queue_state(store).open == 2
    clock.now += 5
    _run(scorer)
    assert queue_state(store).done == 2


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("name: a b\nsuite: suite.yaml\n", "monitor.yaml:1: name: expected 1 to 100 letters"),
        (
            "name: a\nsuite: suite.yaml\nwindow: soon\n",
            "monitor.yaml:3: window: expected a duration",
        ),
        ("name: a\nsuite: suite.yaml\nsampel: {judge: 1}\n", "monitor.yaml:3: sampel: unknown key"),
        ("name: a\nsuite: suite.yaml\nsample: {judge: 2}\n", "monitor.yaml:3: sample.judge:"),
        ("name: a\n", "monitor.yaml:1: suite: missing"),
        (
            "name: a\nsuite: suite.yaml\nbudget: {usd_per_hour: 1}\n",
            "monitor.yaml:3: budget.usd_per_hour: budget.usd_per_hour needs judge_prices",
        ),
        (
            "name: a\nsuite: suite.yaml\nalerts:\n  - {check: nope, below: 0.9}\n",
            "monitor.yaml:4: alerts[0].check: no check 'nope'",
        ),
        (
            "name: a\nsuite: suite.yaml\nalerts:\n  - check: answered\n    below: 90\n",
            "monitor.yaml:5: alerts[0].below:",
        ),
        ("name: a\nsuite: suite.yaml\nwebhook: ftp://x\n", "monitor.yaml:3: webhook:"),
        ("name: a\nsuite: missing.yaml\n", "missing.yaml: suite file not found"),
        (
            "name: a\nsuite: suite.yaml\nbudget: {calls_per_hour: 5}\n",
            "monitor.yaml:3: budget: the monitor has no judge (judge: PROVIDER:MODEL), so a "
            "judge budget changes nothing",
        ),
        (
            "name: a\nsuite: suite.yaml\nsample: {judge: 0.5}\n",
            "monitor.yaml:3: sample: the monitor has no judge",
        ),
        (
            "name: a\nsuite: suite.yaml\nalerts:\n  - {check: grounded, drop: true}\n",
            "monitor.yaml:4: alerts[0].check: 'grounded' is a judge check and the monitor has no "
            "judge: its rate is never decided",
        ),
    ],
)
def test_a_bad_monitor_file_is_one_line(tmp_path: Path, text: str, says: str) -> None:
    monitor = _write(tmp_path, text)
    with pytest.raises(InputError) as caught:
        load_monitor(monitor)
    line = str(caught.value)
    assert "\n" not in line
    assert says in line, line


def test_an_open_windows_summary_is_made_at_most_every_few_seconds(tmp_path: Path) -> None:
    monitor = _write(tmp_path, "name: airline\nsuite: suite.yaml\n")
    store = Store(f"sqlite:///{tmp_path / 'live.db'}")
    clock = Clock(T0 + 60)
    scorer = LiveScorer(store, [load_monitor(monitor)], LiveSettings(quiet_s=5), clock=clock)
    ticks = Clock(0.0)
    summaries = OpenSummaries(max_age_s=10, clock=ticks)
    send(store, traces(2), clock)
    clock.now += 10
    _run(scorer)
    [window] = windows(store, "airline")
    assert summaries.get(store, window).executions == 4
    send(store, traces(3, first=10), clock)
    clock.now += 10
    _run(scorer)
    [window] = windows(store, "airline")
    assert window.traces == 10
    ticks.now = 5.0  # a page asked again at once reads the summary kept
    assert summaries.get(store, window).executions == 4
    ticks.now = 11.0
    assert summaries.get(store, window).executions == 10


def test_a_dollar_budget_holds_with_calls_in_flight(
    tmp_path: Path, judge_env: Any, store: Store
) -> None:
    # each judge call: 120 input and 18 output tokens at $1,000 per million = $0.138
    monitor = _write(
        tmp_path,
        "name: airline\nsuite: suite.yaml\nwindow: 1h\njudge: openai:gpt-test\n"
        'judge_prices: "1000,1000"\njudge_cache: false\nbudget: {usd_per_hour: 1.0}\n',
    )
    clock = Clock(T0 + 60)
    send(store, traces(20), clock)  # 40 traces, judged 16 at a time
    clock.now += 10
    _run(LiveScorer(store, [load_monitor(monitor)], LiveSettings(quiet_s=5), clock=clock))
    [window] = windows(store, "airline")
    assert window.judged == len(judge_env.requests) == 7  # $0.966: an eighth would pass $1
    assert window.judged + window.skipped_budget == 40
    assert window.judge_usd == pytest.approx(7 * 0.138)
    calls, usd = budget_spent(store, "airline", int(clock.now // HOUR))
    assert (calls, usd) == (7, pytest.approx(7 * 0.138))
