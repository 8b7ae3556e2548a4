"""card tags

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29 23:39:21.105731
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # A plain ADD COLUMN, not batch mode: batch mode rebuilds `cards` on SQLite, and dropping
    # the old table with foreign keys on would cascade into every card text and review state.
    op.add_column(
        "cards", sa.Column("tags", sa.JSON(), nullable=False, server_default=sa.text("'[]'"))
    )


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("ALTER TABLE cards DROP COLUMN tags")
    else:
        op.drop_column("cards", "tags")
