"""queue covering indexes

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30 02:40:00.000000
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Plain CREATE/DROP INDEX, not batch mode: batch mode would rebuild the tables on SQLite.
    op.create_index(
        "ix_cards_deck_retired_position", "cards", ["deck_id", "retired_at", "position"]
    )
    op.drop_index("ix_cards_deck_position", table_name="cards")
    op.create_index(
        "ix_review_states_user_deck_due_state",
        "review_states",
        ["user_id", "deck_id", "due", "state"],
    )
    op.drop_index("ix_review_states_user_deck_due", table_name="review_states")


def downgrade() -> None:
    op.create_index("ix_review_states_user_deck_due", "review_states", ["user_id", "deck_id", "due"])
    op.drop_index("ix_review_states_user_deck_due_state", table_name="review_states")
    op.create_index("ix_cards_deck_position", "cards", ["deck_id", "position"])
    op.drop_index("ix_cards_deck_retired_position", table_name="cards")
