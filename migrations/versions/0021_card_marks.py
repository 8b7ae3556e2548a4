"""card_marks and card_actions: a person's suspended, buried, flagged and leech cards and the
undo of each action; cards.note_key for siblings; study_options: burying and leech settings

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-02 14:00:00.000000
"""

import re
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import flashcards.storage.schema

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_CLOZE_KEY = re.compile(r"^(anki-\d+)-c\d+$")


def upgrade() -> None:
    op.create_table(
        "card_marks",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("card_id", sa.Integer(), nullable=False),
        sa.Column("deck_id", sa.Integer(), nullable=False),
        sa.Column("suspended", sa.Boolean(), server_default=sa.text("false"), nullable=False),
        sa.Column("buried_until", sa.Date(), nullable=True),
        sa.Column("flag", sa.SmallInteger(), server_default=sa.text("0"), nullable=False),
        sa.Column("leech", sa.Boolean(), server_default=sa.text("false"), nullable=False),
        sa.Column("tags", sa.JSON(), server_default=sa.text("'[]'"), nullable=False),
        sa.CheckConstraint("flag BETWEEN 0 AND 7", name=op.f("ck_card_marks_flag")),
        sa.ForeignKeyConstraint(
            ["card_id"], ["cards.id"], name=op.f("fk_card_marks_card_id_cards"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["deck_id"], ["decks.id"], name=op.f("fk_card_marks_deck_id_decks"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_card_marks_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("user_id", "card_id", name=op.f("pk_card_marks")),
    )
    with op.batch_alter_table("card_marks", schema=None) as batch_op:
        batch_op.create_index("ix_card_marks_user_deck", ["user_id", "deck_id"], unique=False)

    op.create_table(
        "card_actions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("action_id", sa.String(length=36), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("card_id", sa.Integer(), nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("acted_at", flashcards.storage.schema.UTCDateTime(timezone=True), nullable=False),
        sa.Column("review_id", sa.String(length=36), nullable=True),
        sa.Column("marks_before", sa.JSON(), nullable=True),
        sa.Column("state_before", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(
            ["card_id"],
            ["cards.id"],
            name=op.f("fk_card_actions_card_id_cards"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_card_actions_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_card_actions")),
    )
    with op.batch_alter_table("card_actions", schema=None) as batch_op:
        batch_op.create_index("ix_card_actions_user_acted", ["user_id", "acted_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_card_actions_review_id"), ["review_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_card_actions_action_id"), ["action_id"], unique=False)

    with op.batch_alter_table("cards", schema=None) as batch_op:
        batch_op.add_column(sa.Column("note_key", sa.String(length=100), nullable=True))
        batch_op.create_index("ix_cards_deck_note", ["deck_id", "note_key"], unique=False)
    # Cards imported from a Cloze note before the note was recorded are keyed
    # anki-<note id>-c<number>: their note is known.
    cards = sa.table("cards", sa.column("id", sa.Integer), sa.column("key", sa.String),
                     sa.column("note_key", sa.String))  # fmt: skip
    bind = op.get_bind()
    for card_id, key in bind.execute(
        sa.select(cards.c.id, cards.c.key).where(cards.c.key.like("anki-%-c%"))
    ):
        match = _CLOZE_KEY.match(key)
        if match:
            bind.execute(
                cards.update().where(cards.c.id == card_id).values(note_key=match.group(1))
            )
    op.create_table(
        "study_options",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("bury_new", sa.Boolean(), nullable=False),
        sa.Column("bury_reviews", sa.Boolean(), nullable=False),
        sa.Column("bury_interday", sa.Boolean(), nullable=False),
        sa.Column("leech_threshold", sa.Integer(), nullable=False),
        sa.Column("leech_suspend", sa.Boolean(), nullable=False),
        sa.CheckConstraint("leech_threshold >= 1", name=op.f("ck_study_options_leech_threshold")),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_study_options_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_study_options")),
    )


def downgrade() -> None:
    op.drop_table("study_options")
    # Not rebuilt: on SQLite, dropping the old cards table would take every state and log
    # with it (their references cascade); SQLite 3.35 drops a column in place.
    with op.batch_alter_table("cards", schema=None, recreate="never") as batch_op:
        batch_op.drop_index("ix_cards_deck_note")
        batch_op.drop_column("note_key")
    with op.batch_alter_table("card_actions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_card_actions_action_id"))
        batch_op.drop_index(batch_op.f("ix_card_actions_review_id"))
        batch_op.drop_index("ix_card_actions_user_acted")
    op.drop_table("card_actions")
    with op.batch_alter_table("card_marks", schema=None) as batch_op:
        batch_op.drop_index("ix_card_marks_user_deck")
    op.drop_table("card_marks")
