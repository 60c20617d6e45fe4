"""Who runs a run: the process (pid, host, start time) and a heartbeat, so that a run whose
process died (kill -9, a crash) can be told from one still running and marked abandoned.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # plain ADD COLUMNs: SQLite does them in place, without batch mode's table copy
    op.add_column("runs", sa.Column("pid", sa.Integer(), nullable=True))
    op.add_column("runs", sa.Column("host", sa.String(length=255), nullable=True))
    op.add_column("runs", sa.Column("process_start", sa.String(length=40), nullable=True))
    op.add_column("runs", sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column(
        "runs", sa.Column("abandoned", sa.Boolean(), nullable=False, server_default=sa.false())
    )


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("abandoned")
        batch.drop_column("heartbeat_at")
        batch.drop_column("process_start")
        batch.drop_column("host")
        batch.drop_column("pid")
