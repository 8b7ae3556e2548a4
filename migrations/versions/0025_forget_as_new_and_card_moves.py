"""review_states.new_position: a forgotten card is new again (state 0) at a place in its
deck's new cards; card_actions.card_before: the deck, key and texts a moved card had, for undo

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-05 07:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Plain ADD COLUMN and CREATE INDEX, not batch mode: batch mode would rebuild these
    # (large) tables on SQLite.
    op.add_column("review_states", sa.Column("new_position", sa.Integer(), nullable=True))
    op.create_index(
        "ix_review_states_forgotten",
        "review_states",
        ["user_id", "deck_id", "new_position"],
        sqlite_where=sa.text("new_position IS NOT NULL"),
        postgresql_where=sa.text("new_position IS NOT NULL"),
    )
    op.add_column("card_actions", sa.Column("card_before", sa.JSON(), nullable=True))


def downgrade() -> None:
    # A forgotten card has no older form than new, which is no state at all; its history
    # (the review log) hangs on its state, so it keeps a learning state due at once.
    op.execute("UPDATE review_states SET state = 1, step = 0 WHERE state = 0")
    # Likewise the answers given to forgotten cards: from a first learning step, as before.
    op.execute("UPDATE review_logs SET state_before = 1, step_before = 0 WHERE state_before = 0")
    op.drop_index("ix_review_states_forgotten", table_name="review_states")
    # Plain DROP COLUMN (SQLite has it since 3.35): batch mode would copy review_states into
    # a new table and drop the old one, and its logs with it (ON DELETE CASCADE).
    op.drop_column("card_actions", "card_before")
    op.drop_column("review_states", "new_position")
