"""What a reader needs beside a verdict: the evaluated case, the judge calls behind the
verdicts, and the verdicts that did not pass indexed by run, check and state. Existing results
get their verdict rows from their records; their cases were never stored.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BATCH = 2000


def upgrade() -> None:
    op.add_column("case_results", sa.Column("exchanges", sa.JSON(), nullable=True))
    op.create_table(
        "case_bodies",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column(
            "run_id",
            sa.String(length=40),
            sa.ForeignKey("runs.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("idx", sa.Integer(), nullable=False),
        sa.Column("repeat", sa.Integer(), nullable=False),
        sa.Column("body", sa.LargeBinary(), nullable=False),
        sa.UniqueConstraint("run_id", "idx", "repeat"),
    )
    verdicts = op.create_table(
        "verdicts_not_passed",
        sa.Column("run_id", sa.String(length=40), sa.ForeignKey("runs.id", ondelete="CASCADE")),
        sa.Column("check", sa.String()),
        sa.Column("state", sa.String(length=16)),
        sa.Column("idx", sa.Integer(), autoincrement=False),
        sa.Column("repeat", sa.Integer(), autoincrement=False),
        sa.PrimaryKeyConstraint("run_id", "check", "state", "idx", "repeat"),
        sqlite_with_rowid=False,
    )
    assert verdicts is not None
    _backfill(verdicts)


def _backfill(verdicts: sa.Table) -> None:
    """A row for every verdict that did not pass, of every result already stored."""
    conn = op.get_bind()
    results = sa.table(
        "case_results",
        sa.column("id", sa.Integer()),
        sa.column("run_id", sa.String()),
        sa.column("idx", sa.Integer()),
        sa.column("repeat", sa.Integer()),
        sa.column("record", sa.JSON()),
    )
    cols = (results.c.id, results.c.run_id, results.c.idx, results.c.repeat, results.c.record)
    last = -1
    while True:  # a page of results at a time: memory stays flat on a large database
        stmt = sa.select(*cols).where(results.c.id > last).order_by(results.c.id).limit(_BATCH)
        page = conn.execute(stmt).all()
        if not page:
            return
        rows = [
            {"run_id": run_id, "check": check, "state": v["state"], "idx": idx, "repeat": repeat}
            for _, run_id, idx, repeat, record in page
            for check, v in (record or {}).get("verdicts", {}).items()
            if v["state"] != "passed"
        ]
        if rows:
            conn.execute(verdicts.insert(), rows)
        last = page[-1][0]


def downgrade() -> None:
    op.drop_table("verdicts_not_passed")
    op.drop_table("case_bodies")
    with op.batch_alter_table("case_results") as batch:
        batch.drop_column("exchanges")
