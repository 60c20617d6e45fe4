"""Live scoring: traces received over OTLP and their spans, the monitors' windows and their
judge budgets per hour.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "live_traces",
        sa.Column("seq", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("trace_id", sa.String(length=32), nullable=False, unique=True),
        sa.Column("first_seen", sa.Float(), nullable=False),
        sa.Column("last_seen", sa.Float(), nullable=False),
        sa.Column("spans", sa.Integer(), nullable=False),
        sa.Column("rooted", sa.Boolean(), nullable=False),
        sa.Column("state", sa.String(length=8), nullable=False),
        sa.Column("owner", sa.String(length=80), nullable=True),
        sa.Column("lease_until", sa.Float(), nullable=True),
        sa.Column("late", sa.Integer(), nullable=False),
        sa.Column("outcome", sa.JSON(), nullable=True),
    )
    op.create_index("ix_live_traces_last_seen", "live_traces", ["last_seen"])
    op.create_index("ix_live_traces_state", "live_traces", ["state"])
    op.create_table(
        "live_chunks",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("trace_id", sa.String(length=32), nullable=False),
        sa.Column("received_at", sa.Float(), nullable=False),
        sa.Column("body", sa.LargeBinary(), nullable=False),
    )
    op.create_index("ix_live_chunks_trace_id", "live_chunks", ["trace_id"])
    op.create_table(
        "live_windows",
        sa.Column("monitor", sa.String(length=200), primary_key=True),
        sa.Column("start", sa.Float(), primary_key=True),
        sa.Column("end", sa.Float(), nullable=False),
        sa.Column("run_id", sa.String(length=40), nullable=False),
        sa.Column("traces", sa.Integer(), nullable=False),
        sa.Column("judged", sa.Integer(), nullable=False),
        sa.Column("skipped_rate", sa.Integer(), nullable=False),
        sa.Column("skipped_budget", sa.Integer(), nullable=False),
        sa.Column("judge_calls", sa.Integer(), nullable=False),
        sa.Column("judge_usd", sa.Float(), nullable=False),
        sa.Column("closed", sa.Boolean(), nullable=False),
        sa.Column("alerts", sa.JSON(), nullable=True),
        sa.Column("pruned", sa.Boolean(), nullable=False),
    )
    op.create_table(
        "live_budget",
        sa.Column("monitor", sa.String(length=200), primary_key=True),
        sa.Column("hour", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("calls", sa.Integer(), nullable=False),
        sa.Column("usd", sa.Float(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("live_budget")
    op.drop_table("live_windows")
    op.drop_index("ix_live_chunks_trace_id", table_name="live_chunks")
    op.drop_table("live_chunks")
    op.drop_index("ix_live_traces_state", table_name="live_traces")
    op.drop_index("ix_live_traces_last_seen", table_name="live_traces")
    op.drop_table("live_traces")
