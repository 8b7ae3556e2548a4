"""subscriptions.extended_on, extra_new, extra_reviews: custom study's extended limits

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-05 07:20:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # These modes no longer make sessions (they extend the deck's limits): a session of them
    # was for its day only, and studied what the deck's queue now shows.
    op.execute("DELETE FROM custom_study_sessions WHERE mode IN ('extra_new', 'extra_review')")
    with op.batch_alter_table("subscriptions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("extended_on", sa.Date(), nullable=True))
        batch_op.add_column(
            sa.Column("extra_new", sa.Integer(), server_default="0", nullable=False)
        )
        batch_op.add_column(
            sa.Column("extra_reviews", sa.Integer(), server_default="0", nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("subscriptions", schema=None) as batch_op:
        batch_op.drop_column("extra_reviews")
        batch_op.drop_column("extra_new")
        batch_op.drop_column("extended_on")
