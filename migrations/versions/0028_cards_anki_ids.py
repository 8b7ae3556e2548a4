"""cards.anki_note_id and anki_card_id: the ids of the note a device added a card as

Revision ID: 0028
Revises: 0027
Create Date: 2026-12-05 18:50:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0028"
down_revision: str | None = "0027"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Plain ADD COLUMN and CREATE INDEX: no table copy on SQLite for its largest table.
    op.add_column("cards", sa.Column("anki_note_id", sa.BigInteger(), nullable=True))
    op.add_column("cards", sa.Column("anki_card_id", sa.BigInteger(), nullable=True))
    op.create_index("ix_cards_anki_note_id", "cards", ["anki_note_id"], unique=True)
    op.create_index("ix_cards_anki_card_id", "cards", ["anki_card_id"], unique=True)


def downgrade() -> None:
    op.drop_index("ix_cards_anki_card_id", table_name="cards")
    op.drop_index("ix_cards_anki_note_id", table_name="cards")
    # SQLite's own DROP COLUMN: a batch copy of `cards` would cascade into its children.
    op.drop_column("cards", "anki_card_id")
    op.drop_column("cards", "anki_note_id")
