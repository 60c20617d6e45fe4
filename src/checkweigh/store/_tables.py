"""The tables: one row per run, one per case execution, one per verdict, one per distinct
evaluated case."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    """The declarative base of checkweigh's tables."""


class RunRow(Base):
    """A run: its frozen configuration, status and summary."""

    __tablename__ = "runs"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    suite: Mapped[str] = mapped_column(String(200), index=True)
    suite_path: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(20))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    repeat: Mapped[int] = mapped_column(Integer, default=1)
    executions: Mapped[int] = mapped_column(Integer, default=0)
    gates_passed: Mapped[bool | None] = mapped_column(Boolean)
    config: Mapped[dict[str, Any]] = mapped_column(JSON)
    summary: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # the process running it, to tell a dead run from a live one (revision 0002)
    pid: Mapped[int | None] = mapped_column(Integer)
    host: Mapped[str | None] = mapped_column(String(255))
    process_start: Mapped[str | None] = mapped_column(String(40))
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    abandoned: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())


class ResultRow(Base):
    """One execution of one case, with every verdict and rubric score."""

    __tablename__ = "case_results"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    idx: Mapped[int] = mapped_column(Integer)
    case_id: Mapped[str] = mapped_column(String(200))
    repeat: Mapped[int] = mapped_column(Integer)
    errored: Mapped[bool] = mapped_column(Boolean)
    latency_ms: Mapped[float | None] = mapped_column(Float)
    record: Mapped[dict[str, Any]] = mapped_column(JSON)
    # the judge calls behind the verdicts (revision 0003); None without any
    exchanges: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON)


class CaseBodyRow(Base):
    """The case an execution evaluated, as JSON: its input, trace, final state, ground truth
    and metadata (revision 0003). A case read from a file and evaluated unchanged is stored
    once for all its repeats (``repeat`` -1); a case an agent ran is stored per execution."""

    __tablename__ = "case_bodies"
    __table_args__ = (UniqueConstraint("run_id", "idx", "repeat"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    idx: Mapped[int] = mapped_column(Integer)
    repeat: Mapped[int] = mapped_column(Integer)
    body: Mapped[bytes] = mapped_column(LargeBinary)


class VerdictRow(Base):
    """A verdict that did not pass (failed, not applicable or errored), so that "the cases
    where check X failed" is an index range, not a scan of every record (revision 0003). A
    passed verdict has no row: most verdicts pass, and a row each would cost more to write
    than scoring the case. The primary key is the index (SQLite keeps the rows in it)."""

    __tablename__ = "verdicts_not_passed"
    __table_args__ = ({"sqlite_with_rowid": False},)

    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    check: Mapped[str] = mapped_column(String, primary_key=True)
    state: Mapped[str] = mapped_column(String(16), primary_key=True)
    idx: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    repeat: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)


class LabelRow(Base):
    """A person's yes/no on one check of one case (revision 0004), with the fingerprints of
    the criterion and of the evidence it was made on (see :class:`checkweigh.core.Label`).
    Not tied to a run by a foreign key: a label outlives the run it was made in and follows
    the same evidence into later runs."""

    __tablename__ = "labels"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    check: Mapped[str] = mapped_column(String(200), index=True)
    case_id: Mapped[str] = mapped_column(String(200))
    label: Mapped[bool] = mapped_column(Boolean)
    note: Mapped[str] = mapped_column(Text, default="")
    reviewer: Mapped[str] = mapped_column(String(200), default="")
    criterion: Mapped[str | None] = mapped_column(String(64))
    evidence: Mapped[str | None] = mapped_column(String(64))
    run_id: Mapped[str | None] = mapped_column(String(40))
    repeat: Mapped[int | None] = mapped_column(Integer)
    judge: Mapped[str | None] = mapped_column(String(200))
    verdict: Mapped[str | None] = mapped_column(String(3))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    source: Mapped[str] = mapped_column(String(8))


class JudgeBatchRow(Base):
    """A provider batch a run submitted its judge calls in (revision 0005): stored before the
    run polls it, so that an interrupted run resumes it (``checkweigh run --resume``) and
    never submits an item twice."""

    __tablename__ = "judge_batches"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    judge: Mapped[str] = mapped_column(String(200))
    batch_id: Mapped[str] = mapped_column(String(200))
    custom_ids: Mapped[list[str]] = mapped_column(JSON)
    submitted_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class LiveTraceRow(Base):
    """A trace received over OTLP (revision 0006): when its spans came, whether its root span
    did, and where it is in the work queue (``open``, ``claimed`` by a server process until
    ``lease_until``, ``done``). Its ``seq`` is the index its results are stored at."""

    __tablename__ = "live_traces"

    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    trace_id: Mapped[str] = mapped_column(String(32), unique=True)
    first_seen: Mapped[float] = mapped_column(Float)
    """When its first span arrived (seconds since the epoch)."""
    last_seen: Mapped[float] = mapped_column(Float, index=True)
    spans: Mapped[int] = mapped_column(Integer, default=0)
    rooted: Mapped[bool] = mapped_column(Boolean, default=False)
    state: Mapped[str] = mapped_column(String(8), index=True)
    owner: Mapped[str | None] = mapped_column(String(80))
    lease_until: Mapped[float | None] = mapped_column(Float)
    late: Mapped[int] = mapped_column(Integer, default=0)
    """Spans that came after the trace was scored (counted, not scored)."""
    outcome: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    """What became of it: the case it made (or why none) and each monitor's window run."""


class LiveChunkRow(Base):
    """The spans (and GenAI log records) of one trace from one export request, as an OTLP/JSON
    export request (revision 0006): stored before the request is acknowledged."""

    __tablename__ = "live_chunks"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    trace_id: Mapped[str] = mapped_column(String(32), index=True)
    received_at: Mapped[float] = mapped_column(Float)
    body: Mapped[bytes] = mapped_column(LargeBinary)


class LiveWindowRow(Base):
    """One time window of one monitor (revision 0006): the run its results are stored in and
    what the window's sampling did, shared by every server process."""

    __tablename__ = "live_windows"

    monitor: Mapped[str] = mapped_column(String(200), primary_key=True)
    start: Mapped[float] = mapped_column(Float, primary_key=True)
    end: Mapped[float] = mapped_column(Float)
    run_id: Mapped[str] = mapped_column(String(40))
    traces: Mapped[int] = mapped_column(Integer, default=0)
    judged: Mapped[int] = mapped_column(Integer, default=0)
    skipped_rate: Mapped[int] = mapped_column(Integer, default=0)
    """Traces whose judge checks the sampling rate left out."""
    skipped_budget: Mapped[int] = mapped_column(Integer, default=0)
    """Traces whose judge checks were left out because the hour's judge budget was spent."""
    judge_calls: Mapped[int] = mapped_column(Integer, default=0)
    judge_usd: Mapped[float] = mapped_column(Float, default=0.0)
    closed: Mapped[bool] = mapped_column(Boolean, default=False)
    alerts: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON)
    pruned: Mapped[bool] = mapped_column(Boolean, default=False)
    """Whether retention removed its case bodies (its results and summary stay)."""


class LiveBudgetRow(Base):
    """A monitor's judge spend in one clock hour (revision 0006), reserved before a trace is
    judged, so that several server processes share one budget."""

    __tablename__ = "live_budget"

    monitor: Mapped[str] = mapped_column(String(200), primary_key=True)
    hour: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    calls: Mapped[int] = mapped_column(Integer, default=0)
    usd: Mapped[float] = mapped_column(Float, default=0.0)
