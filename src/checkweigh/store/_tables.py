"""The tables: one row per run, one row per case execution."""

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
    String,
    Text,
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
