"""Live scoring's tables: traces received over OTLP, their spans, and the work queue that turns
each trace into a case exactly once, however many server processes share the database.

A trace's spans are kept as they arrive (:func:`keep_chunks`, in one transaction, before the
request is acknowledged). A process claims ready traces (:func:`claim_ready`) with a lease: on
PostgreSQL ``SELECT ... FOR UPDATE SKIP LOCKED`` inside the claiming ``UPDATE``, so two processes
never take the same trace; on SQLite the ``UPDATE`` is one statement under the database's single
writer lock. A process that dies stops renewing its leases and another takes the traces when
they expire. The results of a trace and its ``done`` mark are written in one transaction that
holds only while the lease is still the writer's (:func:`finish_traces`): a trace is scored
exactly once.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson
from sqlalchemy import Connection, Table, and_, delete, func, insert, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite

from ..core import CaseResult
from ._rows import UNSTORABLE, storable
from ._store import RunStatus, Store, _db_errors, write_results
from ._tables import (
    CaseBodyRow,
    LiveBudgetRow,
    LiveChunkRow,
    LiveTraceRow,
    LiveWindowRow,
    RunRow,
)

OPEN, CLAIMED, DONE = "open", "claimed", "done"
_WINDOWS: Table = LiveWindowRow.__table__  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class Chunk:
    """A trace's part of one export request, as received."""

    trace_id: str
    body: bytes
    """An OTLP/JSON export request holding only this trace's items."""
    spans: int
    rooted: bool


def _upsert(conn: Connection) -> Any:
    return postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert


def keep_chunks(store: Store, chunks: Sequence[Chunk], now: float) -> int:
    """Store the chunks and note their traces as seen now, in one transaction; return how many
    of the spans belong to traces already scored (kept, counted as late, not scored).

    Raises:
        StoreError: the database refused the write (nothing was kept).
    """
    if not chunks:
        return 0
    merged: dict[str, tuple[int, bool]] = {}
    for c in chunks:
        spans, rooted = merged.get(c.trace_id, (0, False))
        merged[c.trace_id] = (spans + c.spans, rooted or c.rooted)
    late = 0
    with _db_errors(f"keep spans in {store.safe_url}"), store.engine.begin() as conn:
        conn.execute(
            insert(LiveChunkRow),
            [{"trace_id": c.trace_id, "received_at": now, "body": c.body} for c in chunks],
        )
        done = set(
            conn.execute(
                select(LiveTraceRow.trace_id).where(
                    LiveTraceRow.trace_id.in_(list(merged)), LiveTraceRow.state == DONE
                )
            ).scalars()
        )
        for trace_id in sorted(done):
            late += merged[trace_id][0]
            conn.execute(
                update(LiveTraceRow)
                .where(LiveTraceRow.trace_id == trace_id)
                .values(late=LiveTraceRow.late + merged[trace_id][0])
            )
        fresh = [
            {
                "trace_id": trace_id,
                "first_seen": now,
                "last_seen": now,
                "spans": spans,
                "rooted": rooted,
                "state": OPEN,
                "late": 0,
            }
            for trace_id, (spans, rooted) in sorted(merged.items())
            if trace_id not in done
        ]
        if fresh:  # sorted: two processes upserting the same traces lock them in one order
            stmt = _upsert(conn)(LiveTraceRow)
            stmt = stmt.on_conflict_do_update(
                index_elements=[LiveTraceRow.trace_id],
                set_={
                    "last_seen": stmt.excluded.last_seen,
                    "spans": LiveTraceRow.spans + stmt.excluded.spans,
                    "rooted": or_(LiveTraceRow.rooted, stmt.excluded.rooted),
                },
            )
            conn.execute(stmt, fresh)
    return late


@dataclass(frozen=True, slots=True)
class Claimed:
    """A trace this process leased to make its case, with its stored requests."""

    seq: int
    trace_id: str
    first_seen: float
    last_seen: float
    spans: int
    """Spans stored when it was claimed (more arriving before it is done are late)."""
    requests: list[Any]
    """Its stored OTLP/JSON requests, in the order they arrived."""


def claim_ready(
    store: Store,
    owner: str,
    *,
    now: float,
    quiet_s: float,
    max_age_s: float,
    lease_s: float,
    limit: int,
) -> list[Claimed]:
    """Lease up to ``limit`` traces that are ready to become cases: their root span came and
    no span came for ``quiet_s``, or their first span is ``max_age_s`` old; or another
    process's lease on them ran out (it died). Oldest first.

    Raises:
        StoreError: the database refused.
    """
    t = LiveTraceRow
    ready = or_(
        and_(t.state == OPEN, t.rooted.is_(True), t.last_seen <= now - quiet_s),
        and_(t.state == OPEN, t.first_seen <= now - max_age_s),
        and_(t.state == CLAIMED, t.lease_until < now),
    )
    with _db_errors(f"claim traces in {store.safe_url}"), store.engine.begin() as conn:
        pick = select(t.seq).where(ready).order_by(t.seq).limit(limit)
        if conn.dialect.name == "postgresql":  # another process's picks are skipped, not waited on
            pick = pick.with_for_update(skip_locked=True)
        rows = conn.execute(
            update(t)
            .where(t.seq.in_(pick.scalar_subquery()))
            .values(state=CLAIMED, owner=owner, lease_until=now + lease_s)
            .returning(t.seq, t.trace_id, t.first_seen, t.last_seen, t.spans)
        ).all()
        if not rows:
            return []
        by_trace: dict[str, list[Any]] = {row.trace_id: [] for row in rows}
        stored = conn.execute(
            select(LiveChunkRow.trace_id, LiveChunkRow.body)
            .where(LiveChunkRow.trace_id.in_(list(by_trace)))
            .order_by(LiveChunkRow.id)
        )
        for trace_id, body in stored:
            by_trace[trace_id].append(orjson.loads(body))
    return [
        Claimed(r.seq, r.trace_id, r.first_seen, r.last_seen, r.spans, by_trace[r.trace_id])
        for r in sorted(rows, key=lambda r: r.seq)
    ]


def renew_leases(store: Store, owner: str, seqs: Iterable[int], until: float) -> int:
    """Extend this process's leases on ``seqs``; return how many it still held."""
    seqs = list(seqs)
    if not seqs:
        return 0
    t = LiveTraceRow
    with _db_errors(f"renew leases in {store.safe_url}"), store.engine.begin() as conn:
        done = conn.execute(
            update(t)
            .where(t.seq.in_(seqs), t.owner == owner, t.state == CLAIMED)
            .values(lease_until=until)
        )
        return int(done.rowcount)


@dataclass(slots=True)
class Finished:
    """What became of a claimed trace: its outcome and, per window run, its results."""

    claimed: Claimed
    outcome: dict[str, Any]
    """The case's id or why there is none, and each monitor's window and sampling."""
    results: dict[str, list[CaseResult]] = field(default_factory=dict)
    """Window run id -> the trace's results in it (one per monitor that scored it)."""
    counts: dict[tuple[str, float], dict[str, float]] = field(default_factory=dict)
    """(monitor, window start) -> increments of its counters (traces, judged, ...)."""


def finish_traces(store: Store, owner: str, finished: Sequence[Finished]) -> list[int]:
    """Store the traces' results and mark them done, in one transaction, for the traces this
    process still leases; return the seqs stored (a trace whose lease another process took
    meanwhile is left to that process, nothing of it written here).

    One transaction for the whole batch, not one per trace: a commit per trace was most of
    the scorer's time on SQLite (and held the single write lock the receiver waits for). A
    failure writes nothing: the leases run out and the traces are claimed again.

    Raises:
        StoreError: the database refused.
    """
    stored: list[int] = []
    results: dict[str, list[CaseResult]] = {}
    counts: dict[tuple[str, float], dict[str, float]] = {}
    t = LiveTraceRow
    with _db_errors(f"store live results in {store.safe_url}"), store.engine.begin() as conn:
        # in trace id order, as keep_chunks upserts them: the receiver and the scorer lock
        # shared rows in one order, so on PostgreSQL neither waits for the other in a cycle
        for item in sorted(finished, key=lambda f: f.claimed.trace_id):
            c = item.claimed
            spans_now = conn.execute(
                update(t)
                .where(t.seq == c.seq, t.owner == owner, t.state == CLAIMED)
                .values(state=DONE, owner=None, lease_until=None, outcome=item.outcome)
                .returning(t.spans)
            ).scalar_one_or_none()
            if spans_now is None:
                continue  # the lease ran out and another process has the trace
            if spans_now > c.spans:  # came while the case was being scored
                conn.execute(
                    update(t).where(t.seq == c.seq).values(late=t.late + spans_now - c.spans)
                )
            for run_id, found in item.results.items():
                results.setdefault(run_id, []).extend(found)
            for key, more in item.counts.items():
                total = counts.setdefault(key, {})
                for name, value in more.items():
                    total[name] = total.get(name, 0) + value
            stored.append(c.seq)
        for run_id, found in results.items():
            _write(conn, run_id, found)
        # sorted: two processes updating the same windows lock their rows in one order
        for (monitor, start), added in sorted(counts.items()):
            _count(conn, monitor, start, added)
    return stored


def _write(conn: Connection, run_id: str, results: list[CaseResult]) -> None:
    try:
        with conn.begin_nested():
            write_results(conn, run_id, results)
    except UNSTORABLE:  # a value no encoder takes: its case is stored errored instead
        write_results(conn, run_id, storable(results))


_COUNTERS = ("traces", "judged", "skipped_rate", "skipped_budget", "judge_calls", "judge_usd")


def _count(conn: Connection, monitor: str, start: float, counts: dict[str, float]) -> None:
    w = LiveWindowRow
    values = {k: getattr(w, k) + v for k, v in counts.items() if k in _COUNTERS}
    # a result stored in a window already closed (a trace another process took over late)
    # opens it again: the closer summarises it anew
    conn.execute(
        update(w).where(w.monitor == monitor, w.start == start).values(**values, closed=False)
    )


def window_run_id(monitor: str, start: float) -> str:
    """The id of a monitor's window run: the same in every process (``mon-`` 8 hex digits of
    the monitor's name, the window's start in UTC)."""
    digest = hashlib.sha256(monitor.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    when = datetime.fromtimestamp(start, UTC).strftime("%Y%m%dT%H%M")
    return f"mon-{digest}-{when}"


def open_window(
    store: Store,
    monitor: str,
    start: float,
    end: float,
    suite: str,
    suite_path: str,
    config: dict[str, Any],
) -> str:
    """The run of a monitor's window, created (running, owned by no process: it outlives any
    one server) unless some process already did; return its id.

    Raises:
        StoreError: the database refused.
    """
    run_id = window_run_id(monitor, start)
    created = datetime.fromtimestamp(start, UTC)
    with _db_errors(f"open a window in {store.safe_url}"), store.engine.begin() as conn:
        run = _upsert(conn)(RunRow).values(
            id=run_id,
            suite=suite,
            suite_path=suite_path,
            status=RunStatus.RUNNING.value,
            created_at=created,
            repeat=1,
            executions=0,
            config=config,
            abandoned=False,
        )
        conn.execute(run.on_conflict_do_nothing(index_elements=[RunRow.id]))
        window = _upsert(conn)(LiveWindowRow).values(
            monitor=monitor,
            start=start,
            end=end,
            run_id=run_id,
            traces=0,
            judged=0,
            skipped_rate=0,
            skipped_budget=0,
            judge_calls=0,
            judge_usd=0.0,
            closed=False,
            pruned=False,
        )
        conn.execute(
            window.on_conflict_do_nothing(
                index_elements=[LiveWindowRow.monitor, LiveWindowRow.start]
            )
        )
    return run_id


@dataclass(frozen=True, slots=True)
class Window:
    """One window of one monitor, as the store holds it."""

    monitor: str
    start: float
    end: float
    run_id: str
    traces: int
    judged: int
    skipped_rate: int
    skipped_budget: int
    judge_calls: int
    judge_usd: float
    closed: bool
    alerts: list[dict[str, Any]]
    pruned: bool = False
    """Retention removed its case bodies (its results and summary stay)."""


def _window(row: Any) -> Window:
    return Window(
        row.monitor,
        row.start,
        row.end,
        row.run_id,
        row.traces,
        row.judged,
        row.skipped_rate,
        row.skipped_budget,
        row.judge_calls,
        row.judge_usd,
        bool(row.closed),
        row.alerts or [],
        bool(row.pruned),
    )


def windows(
    store: Store, monitor: str, limit: int = 48, before: float | None = None
) -> list[Window]:
    """A monitor's windows, newest first."""
    w = LiveWindowRow
    stmt = select(_WINDOWS).where(w.monitor == monitor).order_by(w.start.desc()).limit(limit)
    if before is not None:
        stmt = stmt.where(w.start < before)
    with _db_errors(f"read {store.safe_url}"), store.engine.connect() as conn:
        return [_window(row) for row in conn.execute(stmt)]


def window_at(store: Store, monitor: str, start: float) -> Window | None:
    """The monitor's window starting at ``start``, if it has one."""
    w = LiveWindowRow
    stmt = select(_WINDOWS).where(w.monitor == monitor, w.start == start)
    with _db_errors(f"read {store.safe_url}"), store.engine.connect() as conn:
        row = conn.execute(stmt).first()
    return None if row is None else _window(row)


def take_closable(store: Store, monitor: str, now: float, grace_s: float) -> list[Window]:
    """Mark closed, and return, the monitor's windows that ended ``grace_s`` ago or more and
    are still open: each is returned to exactly one process, which summarises it."""
    w = LiveWindowRow
    with _db_errors(f"close windows in {store.safe_url}"), store.engine.begin() as conn:
        rows = conn.execute(
            update(w)
            .where(w.monitor == monitor, w.closed.is_(False), w.end <= now - grace_s)
            .values(closed=True)
            .returning(*_WINDOWS.c)
        ).all()
    return sorted((_window(r) for r in rows), key=lambda x: x.start)


def note_alerts(store: Store, monitor: str, start: float, alerts: list[dict[str, Any]]) -> None:
    """Keep what the window's alert rules decided (and whether their webhooks went out)."""
    w = LiveWindowRow
    with _db_errors(f"write {store.safe_url}"), store.engine.begin() as conn:
        conn.execute(update(w).where(w.monitor == monitor, w.start == start).values(alerts=alerts))


def reserve_budget(
    store: Store,
    monitor: str,
    hour: int,
    calls: int,
    *,
    max_calls: int | None,
    max_usd: float | None,
    usd: float = 0.0,
) -> bool:
    """Reserve ``calls`` judge calls and ``usd`` dollars (what they are expected to cost) of
    the monitor's budget for the clock hour ``hour``; False (nothing reserved) when they would
    pass ``max_calls`` or ``max_usd``. Atomic across processes: what calls in flight will spend
    is counted before they are sent (:func:`spend_budget` corrects it by what they cost)."""
    b = LiveBudgetRow
    with _db_errors(f"write {store.safe_url}"), store.engine.begin() as conn:
        conn.execute(
            _upsert(conn)(b)
            .values(monitor=monitor, hour=hour, calls=0, usd=0.0)
            .on_conflict_do_nothing(index_elements=[b.monitor, b.hour])
        )
        fits = [b.monitor == monitor, b.hour == hour]
        if max_calls is not None:
            fits.append(b.calls + calls <= max_calls)
        if max_usd is not None:
            fits.append(b.usd + usd <= max_usd)
            fits.append(b.usd < max_usd)  # an estimate of 0 (nothing judged yet) is not free
        taken = conn.execute(update(b).where(*fits).values(calls=b.calls + calls, usd=b.usd + usd))
        return bool(taken.rowcount)


def spend_budget(store: Store, monitor: str, hour: int, calls: int, usd: float) -> None:
    """Correct a reservation by what the judging really took: ``calls`` more (negative:
    fewer) and ``usd`` spent."""
    b = LiveBudgetRow
    if not calls and not usd:
        return
    with _db_errors(f"write {store.safe_url}"), store.engine.begin() as conn:
        conn.execute(
            update(b)
            .where(b.monitor == monitor, b.hour == hour)
            .values(calls=b.calls + calls, usd=b.usd + (usd if math.isfinite(usd) else 0.0))
        )


def budget_spent(store: Store, monitor: str, hour: int) -> tuple[int, float]:
    """The judge calls and dollars the monitor spent in clock hour ``hour``."""
    b = LiveBudgetRow
    with _db_errors(f"read {store.safe_url}"), store.engine.connect() as conn:
        row = conn.execute(
            select(b.calls, b.usd).where(b.monitor == monitor, b.hour == hour)
        ).first()
    return (0, 0.0) if row is None else (int(row.calls), float(row.usd))


@dataclass(frozen=True, slots=True)
class QueueState:
    """How many traces are where in the queue, and how many late spans came."""

    open: int
    claimed: int
    done: int
    late_spans: int
    chunks: int


def queue_state(store: Store) -> QueueState:
    """The queue's counts (for the API and the page)."""
    t = LiveTraceRow
    with _db_errors(f"read {store.safe_url}"), store.engine.connect() as conn:
        by_state = dict(conn.execute(select(t.state, func.count()).group_by(t.state)).all())
        late = conn.execute(select(func.coalesce(func.sum(t.late), 0))).scalar_one()
        chunks = conn.execute(select(func.count()).select_from(LiveChunkRow)).scalar_one()
    return QueueState(
        int(by_state.get(OPEN, 0)),
        int(by_state.get(CLAIMED, 0)),
        int(by_state.get(DONE, 0)),
        int(late or 0),
        int(chunks),
    )


def trace_outcome(store: Store, trace_id: str) -> dict[str, Any] | None:
    """What became of a trace (None while it is not done, or unknown)."""
    t = LiveTraceRow
    with _db_errors(f"read {store.safe_url}"), store.engine.connect() as conn:
        row = conn.execute(select(t.state, t.outcome).where(t.trace_id == trace_id)).first()
    return None if row is None else {"state": row.state, **(row.outcome or {})}


def prune(store: Store, before: float) -> tuple[int, int]:
    """Retention: remove the spans of scored traces last seen before ``before``, and the case
    bodies of window runs that ended before it (their results and summary stay); return the
    traces and the window runs pruned."""
    t, w = LiveTraceRow, LiveWindowRow
    with _db_errors(f"prune {store.safe_url}"), store.engine.begin() as conn:
        old = select(t.trace_id).where(t.state == DONE, t.last_seen < before)
        conn.execute(delete(LiveChunkRow).where(LiveChunkRow.trace_id.in_(old)))
        traces = conn.execute(delete(t).where(t.state == DONE, t.last_seen < before)).rowcount
        old_windows = and_(w.end < before, w.closed.is_(True), w.pruned.is_(False))
        runs = list(conn.execute(select(w.run_id).where(old_windows)).scalars())
        if runs:
            conn.execute(delete(CaseBodyRow).where(CaseBodyRow.run_id.in_(runs)))
            conn.execute(update(w).where(old_windows).values(pruned=True))
    return int(traces), len(runs)


MONITOR_REF = "monitor:"
"""How a run reference names a monitor's window (see :func:`window_ref`)."""


def window_ref(store: Store, ref: str) -> str:
    """The run id of the window a reference names: ``monitor:NAME`` (its newest closed
    window, else its newest), ``monitor:NAME@2026-12-02T10:00`` (the window holding that
    time, UTC unless the time says otherwise) or ``monitor:NAME@-7d`` (the window that far
    before the newest closed one: the same hour last week).

    Raises:
        InputError: a reference to no window, or a time that is not one.
    """
    from ..errors import InputError
    from ._duration import parse_age

    name, _, when = ref.removeprefix(MONITOR_REF).partition("@")
    known = windows(store, name, limit=1000)
    if not known:
        raise InputError(f"no window of monitor {name!r} in {store.safe_url}", field="RUN")
    newest = next((w for w in known if w.closed), known[0])
    if not when:
        return newest.run_id
    if when.startswith("-"):
        try:
            at = newest.start - parse_age(when[1:])
        except ValueError as exc:
            raise InputError(f"{ref!r}: {exc}", field="RUN") from None
    else:
        try:
            moment = datetime.fromisoformat(when)
        except ValueError:
            raise InputError(
                f"{ref!r}: expected a time such as 2026-12-02T10:00 or an age such as -7d "
                "after '@'",
                field="RUN",
            ) from None
        at = (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
    found = next((w for w in known if w.start <= at < w.end), None)
    if found is None:
        shown = datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M UTC")
        raise InputError(f"monitor {name!r} has no window holding {shown}", field="RUN")
    return found.run_id
