"""People's labels on checks: the yes/no, who and when, and the fingerprints of the criterion
and of the evidence it was made on, so that a label follows the same case into later runs.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "labels",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("check", sa.String(length=200), nullable=False),
        sa.Column("case_id", sa.String(length=200), nullable=False),
        sa.Column("label", sa.Boolean(), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("reviewer", sa.String(length=200), nullable=False),
        sa.Column("criterion", sa.String(length=64), nullable=True),
        sa.Column("evidence", sa.String(length=64), nullable=True),
        sa.Column("run_id", sa.String(length=40), nullable=True),
        sa.Column("repeat", sa.Integer(), nullable=True),
        sa.Column("judge", sa.String(length=200), nullable=True),
        sa.Column("verdict", sa.String(length=3), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("source", sa.String(length=8), nullable=False),
    )
    op.create_index("ix_labels_check", "labels", ["check"])


def downgrade() -> None:
    op.drop_index("ix_labels_check", table_name="labels")
    op.drop_table("labels")
