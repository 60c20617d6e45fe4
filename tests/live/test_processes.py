"""Live scoring across real ``checkweigh serve`` processes: two over one PostgreSQL share the
traces and score each exactly once (a trace's spans split between them, one of them killed
while it holds claims); a server killed mid-stream and restarted loses no acknowledged span;
retention removes old spans and old windows' case bodies and keeps their results."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider

from support.live_serve import (
    SLOW_CHECK,
    Serve,
    noted,
    scored,
    slow_check_yaml,
    traces,
    wait_until,
)
from support.otel_agent import emit_trace, monitor_text, provider, spans_of, suite_text
from support.postgres import fresh_database


def _folder(tmp_path: Path, check_s: float) -> Path:
    """The booking suite with the slow, noting check, and its monitor."""
    (tmp_path / "live_slow_checks.py").write_text(SLOW_CHECK)
    log = tmp_path / "scored.log"
    (tmp_path / "suite.yaml").write_text(suite_text(slow_check_yaml(check_s, log), ", noted: 1"))
    path = tmp_path / "monitor.yaml"
    path.write_text(monitor_text())
    return path


@pytest.fixture
def pg_url() -> Iterator[str]:
    with fresh_database() as url:
        yield url


def _send(providers: list[TracerProvider], numbers: range, *, split: bool = True) -> dict[str, int]:
    """Emit traces ``numbers``: a third with their spans dealt over every provider, the others
    wholly to one provider in turn; flush; return trace id -> spans."""
    tracers = [p.get_tracer("test_processes") for p in providers]
    sent = {}
    for n in numbers:
        mine = tracers if split and n % 3 == 0 else [tracers[n % len(tracers)]]
        sent[emit_trace(mine, n, time.time_ns())] = spans_of(n)
    for p in providers:
        assert p.force_flush(20_000)
    return sent


def _owner_pid(owner: str | None) -> int | None:
    return None if owner is None else int(owner.split(":")[-2])


def _all_done(db: str, sent: dict[str, int]) -> bool:
    held = traces(db)
    return all(held.get(t, ("", 0, None))[0] == "done" for t in sent)


def test_two_servers_over_one_postgresql_score_every_trace_once(
    tmp_path: Path, pg_url: str
) -> None:
    # a case takes 0.3 s: a batch of claims keeps one process busy for a second or more, so
    # the other (polling every 0.25 s when idle) takes the rest
    monitor = _folder(tmp_path, 0.3)
    servers = [Serve(pg_url, monitor, args=["--quiet-window", "1.5"]) for _ in range(2)]
    providers: list[TracerProvider] = []
    try:
        for s in servers:
            s.start()
        providers = [provider(s.exporter()) for s in servers]
        sent = _send(providers, range(90))
        wait_until(lambda: _all_done(pg_url, sent), 40, "every trace scored")
        results = scored(pg_url)
        held = traces(pg_url)
    finally:
        for p in providers:
            p.shutdown()
        for s in servers:
            s.stop()
    assert results == dict.fromkeys(sent, 1)  # every trace, once
    # the traces split over the two receivers were whole when scored: nothing came late
    assert {t: held[t][1] for t in sent} == sent
    by = noted(tmp_path / "scored.log")
    assert sorted(case for _, case in by) == sorted(sent)  # and none scored twice in vain
    pids = Counter(pid for pid, _ in by)
    assert set(pids) == {s.pid for s in servers}, pids  # both processes took a share


def test_a_killed_server_leaves_its_claims_to_the_other(tmp_path: Path, pg_url: str) -> None:
    monitor = _folder(tmp_path, 0.5)  # a batch of claims takes seconds to score
    args = ["--quiet-window", "1", "--lease", "3"]
    victim, survivor = Serve(pg_url, monitor, args=args), Serve(pg_url, monitor, args=args)
    providers: list[TracerProvider] = []
    try:
        # the victim alone first: it claims traces (with two running, the other may take
        # every one of them first); the survivor starts once it died holding them
        victim.start()
        providers = [provider(victim.exporter())]
        sent = _send(providers, range(60), split=False)

        def victim_holds() -> bool:
            return any(_owner_pid(o) == victim.pid for _, _, o in traces(pg_url).values())

        wait_until(victim_holds, 20, "the victim claimed traces")
        victim.kill()  # mid-scoring: its claims are held by no living process
        # read after the kill (its leases have seconds left): what it held and never finished
        held = {t for t, (_, _, o) in traces(pg_url).items() if _owner_pid(o) == victim.pid}
        providers[0].shutdown()
        survivor.start()
        providers.append(provider(survivor.exporter()))
        # the stream goes on to the survivor
        sent |= _send(providers[1:], range(60, 90), split=False)
        wait_until(lambda: _all_done(pg_url, sent), 40, "every trace scored after the kill")
        results = scored(pg_url)
    finally:
        for p in providers[1:]:
            p.shutdown()
        survivor.stop()
        victim.stop()
    assert held
    assert results == dict.fromkeys(sent, 1)
    by = noted(tmp_path / "scored.log")
    # what the victim held was scored again by the survivor, once its lease ran out: stored
    # once (the victim's results never committed)
    taken_over = {case for pid, case in by if pid == survivor.pid} & held
    assert taken_over == held
    assert {pid for pid, _ in by} <= {victim.pid, survivor.pid}


def test_a_server_killed_mid_stream_and_restarted_loses_no_acknowledged_span(
    tmp_path: Path,
) -> None:
    monitor = _folder(tmp_path, 0.01)
    db = f"sqlite:///{tmp_path / 'live.db'}"
    server = Serve(db, monitor, args=["--quiet-window", "1", "--lease", "2"])
    acked: Counter[str] = Counter()
    made = None
    sent: dict[str, int] = {}
    try:
        server.start()
        made = provider(server.exporter(acked), delay_ms=100)
        tracer = made.get_tracer("test_processes")
        for n in range(150):
            sent[emit_trace([tracer], n, time.time_ns())] = spans_of(n)
            if n == 60:
                assert made.force_flush(20_000)
                before = Counter(acked)  # stored, by the 200s
                server.kill()
            if n == 90:  # the exporter retried what failed meanwhile; the server is back
                server.start()
            time.sleep(0.02)
        assert made.force_flush(30_000)
        wait_until(lambda: _all_done(db, sent), 30, "every trace scored after the restart")
        results = scored(db)
        held = traces(db)
    finally:
        if made is not None:
            made.shutdown()
        server.stop()
    assert sum(before.values()) > 0
    stored = {t: held[t][1] for t in held}
    assert all(stored[t] >= n for t, n in before.items())  # acknowledged before the kill
    # every span made was acknowledged in the end (the exporter retried through the
    # restart) and is stored; a batch stored but not answered before the kill comes twice
    assert acked == Counter(sent)
    assert all(stored[t] >= n for t, n in sent.items())
    assert results == dict.fromkeys(sent, 1)
