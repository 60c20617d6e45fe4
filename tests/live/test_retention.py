"""Retention: the spans of traces scored longer ago than ``retention`` and the case bodies of
windows that ended before it are removed; the windows keep their results and summaries, and
what is newer is untouched. Driven with a clock, in process, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import func, select

from checkweigh.live import LiveScorer, LiveSettings, load_monitor
from checkweigh.server import create_app
from checkweigh.store import RunStatus, Store, windows
from checkweigh.store._tables import CaseBodyRow, LiveChunkRow, LiveTraceRow
from support.live_airline import Clock
from support.otel_agent import export_body, monitor_text, suite_text

TOKEN = "a-token-of-sufficient-length"
HEADERS = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/x-protobuf"}
DAY = 86400.0
T_OLD = 1_800_000_000.0 + 600  # 10 minutes into a window of an hour
T_NEW = T_OLD + 40 * DAY


def _receive(store: Store, clock: Clock, numbers: range) -> dict[str, int]:
    """Post traces ``numbers`` as the exporter would, received at the clock's time."""
    body, sent = export_body(numbers, int(clock.now * 1e9))
    client = TestClient(create_app(store, token=TOKEN, wall_clock=clock))
    answer = client.post("/v1/traces", content=body, headers=HEADERS)
    assert answer.status_code == 200, answer.content
    return sent


def _rounds(scorer: LiveScorer) -> None:
    async def rounds() -> None:
        while await scorer.step():
            pass

    asyncio.run(rounds())


def _count(store: Store, table: type, *where: object) -> int:
    with store.engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(table).where(*where)).scalar_one())


def test_retention_summarises_old_windows_and_removes_their_spans(
    tmp_path: Path, store: Store
) -> None:
    (tmp_path / "suite.yaml").write_text(suite_text())
    (tmp_path / "monitor.yaml").write_text(monitor_text())
    clock = Clock(T_OLD)
    old = _receive(store, clock, range(0, 6))
    clock.now += 10
    scorer = LiveScorer(
        store,
        [load_monitor(tmp_path / "monitor.yaml")],
        LiveSettings(quiet_s=5, retention_s=30 * DAY),
        clock=clock,
    )
    _rounds(scorer)
    clock.now = T_NEW
    new = _receive(store, clock, range(6, 12))
    clock.now += 10
    _rounds(scorer)  # scores the new traces; closes the old window and prunes it
    clock.now += 2 * 3600  # the new window ends too: closed, and kept whole
    asyncio.run(scorer.housekeeping(clock.now))

    [recent, early] = windows(store, "booking")
    assert (early.traces, recent.traces) == (6, 6)
    assert (early.closed, early.pruned) == (True, True)
    assert (recent.closed, recent.pruned) == (True, False)
    # the old traces' spans are gone; the new ones' are kept
    t, c = LiveTraceRow, LiveChunkRow
    assert _count(store, t, t.trace_id.in_(list(old))) == 0
    assert _count(store, c, c.trace_id.in_(list(old))) == 0
    assert _count(store, t, t.trace_id.in_(list(new)), t.state == "done") == 6
    assert _count(store, c, c.trace_id.in_(list(new))) >= 1
    # the old window keeps its results and its summary; only its case bodies went
    b = CaseBodyRow
    assert _count(store, b, b.run_id == early.run_id) == 0
    assert _count(store, b, b.run_id == recent.run_id) == 6
    for window, ids, numbers in ((early, old, range(6)), (recent, new, range(6, 12))):
        info = store.get_run(window.run_id)
        assert info.status is RunStatus.COMPLETE
        assert info.summary is not None
        assert info.summary.cases == 6
        results = list(store.iter_results(window.run_id))
        assert sorted(r.case_id for r in results) == sorted(ids)
        # one trace in five books without looking at the calendar: that verdict outlives the
        # spans it was read from
        checked = [r.verdicts["checked_availability"].state.value for r in results]
        assert checked.count("failed") == sum(1 for n in numbers if n % 5 == 0)
