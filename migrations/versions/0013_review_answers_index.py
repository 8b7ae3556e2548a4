"""the queue counts a day's review answers from a partial index of its own

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-01 20:45:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Plain CREATE INDEX, not batch mode: batch mode would rebuild the table on SQLite.
    op.create_index(
        "ix_review_logs_review_answers",
        "review_logs",
        ["user_id", "deck_id", "reviewed_at", "state_before"],
        sqlite_where=sa.text("state_before = 2"),
        postgresql_where=sa.text("state_before = 2"),
    )


def downgrade() -> None:
    op.drop_index("ix_review_logs_review_answers", table_name="review_logs")
