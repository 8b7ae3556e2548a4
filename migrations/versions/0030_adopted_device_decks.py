"""decks.anki_deck_id, cards.anki_ord, anki_collections.crt: a device's decks on the web

Revision ID: 0030
Revises: 0029
Create Date: 2026-12-06 05:45:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0030"
down_revision: str | None = "0029"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("decks", sa.Column("anki_deck_id", sa.BigInteger(), nullable=True))
    op.create_index(
        "ix_decks_owner_anki_deck", "decks", ["owner_user_id", "anki_deck_id"], unique=True
    )
    op.add_column("cards", sa.Column("anki_ord", sa.Integer(), nullable=True))
    op.add_column("anki_collections", sa.Column("crt", sa.BigInteger(), nullable=True))
    # The cards of one note (Basic and reversed, Cloze) share its id; two people who took
    # the same shared deck into Anki have the same card ids: neither id is unique any more.
    op.drop_index("ix_cards_anki_note_id", table_name="cards")
    op.drop_index("ix_cards_anki_card_id", table_name="cards")
    op.create_index("ix_cards_anki_note_id", "cards", ["anki_note_id"])
    op.create_index("ix_cards_anki_card_id", "cards", ["anki_card_id"])


def downgrade() -> None:
    op.drop_index("ix_cards_anki_card_id", table_name="cards")
    op.drop_index("ix_cards_anki_note_id", table_name="cards")
    op.create_index("ix_cards_anki_note_id", "cards", ["anki_note_id"], unique=True)
    op.create_index("ix_cards_anki_card_id", "cards", ["anki_card_id"], unique=True)
    op.drop_column("anki_collections", "crt")
    op.drop_column("cards", "anki_ord")
    op.drop_index("ix_decks_owner_anki_deck", table_name="decks")
    op.drop_column("decks", "anki_deck_id")
