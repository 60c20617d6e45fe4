"""A store with a monitor's windows made the live way: the recorded airline spans
(tests/importers/fixtures/otel_airline.jsonl) posted to the OTLP receiver as many traces (ids
varied), some failing a check, at times across three 60-second windows; scored by a
LiveScorer on a fake clock; the two ended windows closed, the third still open.

Per window, the traces are copies of the fixture's two conversations: ``A`` (looks the
reservation up, answers at length: passes both checks), ``B`` (never looks it up, answers in 14
words: fails both) and ``L`` (``A`` with its lookup tool renamed: fails ``looked_up`` only).
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from aiohttp import web
from fastapi.testclient import TestClient

from checkweigh.core import PassPolicy
from checkweigh.live import LiveScorer, LiveSettings, Monitor, load_monitor
from checkweigh.server import create_app
from checkweigh.store import Store
from checkweigh.testing import FakeLLM, Reply, fake_llm_server
from support.live_airline import FIXTURE, T0, TOKEN, Clock

TRACE_A = "5b8aa5a2d2c872e8321cf37308d69df2"
TRACE_B = "9c1e7f0a4b3d2e1f8a7b6c5d4e3f2a1b"
PLAN = ("AAAABL", "AABBB", "AB")
"""The traces of each window, oldest first; the last window is still open."""
NOW = T0 + 60 * len(PLAN) - 30
"""The scorer's time: the first two windows ended (and are closed), the third has not."""
HOSTILE = '<img src=x onerror="window.__pwned=1">'
SUITE = """\
name: airline-live
cases: cases.jsonl
checks:
  answered:
    type: word_count
    path: output
    min: 20
  looked_up:
    type: tool_called
    step: {name: get_reservation_details}
rubrics:
  support:
    weights: {answered: 1.0, looked_up: 1.0}
"""
MONITOR = """\
name: airline-prod
suite: suite.yaml
window: 60s
filter:
  service: airline-support-agent
alerts:
  - {check: looked_up, below: 0.9, alpha: 0.05, min_cases: 3}
  - {check: answered, drop: true, alpha: 0.01}
webhook: WEBHOOK
"""
"""Two alert rules: the first decides on this few traces, the second needs 20 (undecided);
their webhook answers 503 (a failed post is shown as such)."""
JUDGE_CHECK = """\
  grounded:
    type: judge
    question: Is every statement in the final answer supported by the trace?
rubrics:
"""
JUDGED = """\
judge: openai:gpt-test
judge_prices: "0.15,0.6"
sample:
  judge: 0.5
budget:
  calls_per_hour: 2
"""
"""A judge on half the traces (by their ids), two calls an hour: the budget runs out."""
YES = '{"verdict": "yes", "reason": "every claim is in the trace"}'


class Live(NamedTuple):
    """The store, the monitor, the scorer that filled it and a client of a server over it."""

    store: Store
    monitor: Monitor
    scorer: LiveScorer
    client: TestClient
    traces: list[list[str]]
    """Each window's trace ids, oldest window first."""
    judge: FakeLLM | None = None
    """The scripted judge server, when the monitor has a judge."""


def _trace_requests(original: str, new_id: str, rename_lookup: bool) -> list[str]:
    """The fixture's requests holding ``original``'s spans, renamed ``new_id``."""
    out = []
    for line in FIXTURE.read_text().splitlines():
        doc: dict[str, Any] = json.loads(line)
        kept = copy.deepcopy(doc)
        for rs in kept["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                ss["spans"] = [s for s in ss["spans"] if s["traceId"] == original]
                for s in ss["spans"]:
                    s["traceId"] = new_id
            rs["scopeSpans"] = [ss for ss in rs["scopeSpans"] if ss["spans"]]
        kept["resourceSpans"] = [rs for rs in kept["resourceSpans"] if rs["scopeSpans"]]
        if kept["resourceSpans"]:
            text = json.dumps(kept)
            out.append(
                text.replace("get_reservation_details", "lookup_reservation")
                if rename_lookup
                else text
            )
    return out


def trace_id(window: int, k: int, kind: str) -> str:
    """A trace's id: the fixture's, its first hex digits naming the window and position."""
    original = TRACE_B if kind == "B" else TRACE_A
    return f"{window:02x}{k:02x}" + original[4:]


def post(client: TestClient, clock: Clock, when: float, requests: list[str]) -> None:
    """Post a trace's requests to the receiver as received at ``when``."""
    clock.now = when
    for body in requests:
        answer = client.post(
            "/v1/traces",
            content=body,
            headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
        )
        assert answer.status_code == 200, answer.text


def build(folder: Path, monkeypatch: pytest.MonkeyPatch, judged: bool = False) -> Iterator[Live]:
    """The store filled and a server over it (the caller's fixture yields from this); with
    ``judged``, the suite has a judge check, asked of a scripted server on 127.0.0.1 for the
    traces the sampling rate and the budget let through."""
    if judged:
        with fake_llm_server([], default=Reply(YES)) as server:
            monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-of-the-fake-server")
            monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
            monkeypatch.setenv("CHECKWEIGH_CACHE_DIR", str(folder / "judge-cache"))
            suite = SUITE.replace("rubrics:\n", JUDGE_CHECK, 1)
            weighed = suite.replace("looked_up: 1.0}", "looked_up: 1.0, grounded: 1.0}")
            (folder / "suite.yaml").write_text(weighed)
            (folder / "monitor.yaml").write_text(MONITOR + JUDGED)  # WEBHOOK set once it runs
            yield from _filled(folder, monkeypatch, server)
        return
    (folder / "suite.yaml").write_text(SUITE)
    (folder / "monitor.yaml").write_text(MONITOR)
    yield from _filled(folder, monkeypatch)


def _filled(
    folder: Path, monkeypatch: pytest.MonkeyPatch, judge: FakeLLM | None = None
) -> Iterator[Live]:
    clock = Clock(T0)
    with Store(f"sqlite:///{folder / 'live.db'}") as store:
        # the receiver stamps each trace with the time it came: here the fake clock's
        receiver = TestClient(create_app(store, token=TOKEN, wall_clock=clock))
        traces: list[list[str]] = []
        for w, kinds in enumerate(PLAN):
            ids = []
            for k, kind in enumerate(kinds):
                new = trace_id(w, k, kind)
                original = TRACE_B if kind == "B" else TRACE_A
                post(
                    receiver,
                    clock,
                    T0 + 60 * w + 2 + k,
                    _trace_requests(original, new, kind == "L"),
                )
                ids.append(new)
            traces.append(ids)
        hooks: list[dict[str, Any]] = []

        async def score() -> tuple[Monitor, LiveScorer]:
            async def hook(request: web.Request) -> web.Response:
                hooks.append(await request.json())
                return web.Response(status=503, text="down for maintenance")

            app = web.Application()
            app.router.add_post("/hook", hook)
            runner = web.AppRunner(app)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            path = folder / "monitor.yaml"
            path.write_text(path.read_text().replace("WEBHOOK", f"http://127.0.0.1:{port}/hook"))
            monitor = load_monitor(path)
            scorer = LiveScorer(store, [monitor], LiveSettings(quiet_s=5), clock=Clock(NOW))
            try:
                while await scorer.step():
                    pass
                await scorer.housekeeping(NOW)
            finally:
                await monitor.close()  # its judge's connections belong to this event loop
                await runner.cleanup()
            return monitor, scorer

        monitor, scorer = asyncio.run(score())
        assert [h["check"] for h in hooks] == ["looked_up"] * 3  # fired once, tried 3 times
        with TestClient(create_app(store, token=TOKEN, scorer=scorer)) as client:
            client.headers["Authorization"] = f"Bearer {TOKEN}"
            yield Live(store, monitor, scorer, client, traces, judge)


class Recomputed(NamedTuple):
    """A window's figures recomputed from its stored results."""

    executions: int
    cases_passed: int
    checks: dict[str, tuple[int, int]]
    """check -> (passed, failed)."""
    failing: dict[str, list[str]]
    """trace id -> the checks it failed."""
    tcr: float | None
    judged: int
    """Traces whose judge check was asked (decided, not left out)."""
    skipped_rate: int
    """Traces whose judge check the sampling rate left out."""
    skipped_budget: int
    """Traces whose judge check the spent budget left out."""


def recompute(store: Store, run_id: str) -> Recomputed:
    """Count what the window's stored results say, as a reader of the store would."""
    info = store.get_run(run_id)
    policy = PassPolicy.from_snapshot(info.config.get("thresholds"))
    checks: dict[str, tuple[int, int]] = {}
    failing: dict[str, list[str]] = {}
    scores: list[float] = []
    executions = passed = judged = by_rate = by_budget = 0
    for r in store.iter_results(run_id):
        grounded = r.verdicts.get("grounded")
        if grounded is not None:
            left_out = grounded.state.value == "not_applicable"
            judged += not left_out
            by_rate += left_out and grounded.reason.startswith("not sampled (judge rate")
            by_budget += left_out and "budget" in grounded.reason
        executions += 1
        verdict = policy.decide(r)
        passed += verdict.passed
        if verdict.score_pct is not None:
            scores.append(verdict.score_pct / 100)
        for name, v in r.verdicts.items():
            p, f = checks.get(name, (0, 0))
            checks[name] = (p + (v.state.value == "passed"), f + (v.state.value == "failed"))
            if v.state.value == "failed":
                failing.setdefault(r.case_id, []).append(name)
    tcr = sum(scores) / len(scores) if scores else None
    return Recomputed(executions, passed, checks, failing, tcr, judged, by_rate, by_budget)
