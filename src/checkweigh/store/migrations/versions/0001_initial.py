"""The initial tables: runs and case_results, as ``Base.metadata.create_all`` made them before
there were migrations (such databases are stamped at this revision, not created again).

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("suite", sa.String(length=200), nullable=False),
        sa.Column("suite_path", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("repeat", sa.Integer(), nullable=False),
        sa.Column("executions", sa.Integer(), nullable=False),
        sa.Column("gates_passed", sa.Boolean(), nullable=True),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("summary", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_runs_created_at"), "runs", ["created_at"], unique=False)
    op.create_index(op.f("ix_runs_suite"), "runs", ["suite"], unique=False)
    op.create_table(
        "case_results",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.String(length=40), nullable=False),
        sa.Column("idx", sa.Integer(), nullable=False),
        sa.Column("case_id", sa.String(length=200), nullable=False),
        sa.Column("repeat", sa.Integer(), nullable=False),
        sa.Column("errored", sa.Boolean(), nullable=False),
        sa.Column("latency_ms", sa.Float(), nullable=True),
        sa.Column("record", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_case_results_run_id"), "case_results", ["run_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_case_results_run_id"), table_name="case_results")
    op.drop_table("case_results")
    op.drop_index(op.f("ix_runs_suite"), table_name="runs")
    op.drop_index(op.f("ix_runs_created_at"), table_name="runs")
    op.drop_table("runs")
