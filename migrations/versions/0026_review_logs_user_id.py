"""review_logs (user_id, id): a person's newest answer, and their answers after one, by index

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-05 07:25:00.000000
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0026"
down_revision: str | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Plain CREATE INDEX, not batch mode: batch mode would rebuild the table on SQLite.
    op.create_index("ix_review_logs_user_id", "review_logs", ["user_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_review_logs_user_id", table_name="review_logs")
