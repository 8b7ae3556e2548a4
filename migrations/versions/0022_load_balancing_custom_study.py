"""scheduler_settings.load_balancing and easy_days; custom_study_sessions

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-02 14:20:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import flashcards.storage.schema

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

EVERY_DAY_NORMAL = "[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]"


def upgrade() -> None:
    # Existing people get what new ones get: balancing on, every day Normal.
    with op.batch_alter_table("scheduler_settings", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("load_balancing", sa.Boolean(), server_default=sa.true(), nullable=False)
        )
        batch_op.add_column(
            sa.Column(
                "easy_days", sa.JSON(), server_default=sa.text(f"'{EVERY_DAY_NORMAL}'"), nullable=False
            )
        )
    op.create_table(
        "custom_study_sessions",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("mode", sa.String(length=20), nullable=False),
        sa.Column("deck_id", sa.Integer(), nullable=True),
        sa.Column("days", sa.Integer(), nullable=True),
        sa.Column("amount", sa.Integer(), nullable=True),
        sa.Column("tag", sa.String(length=100), nullable=True),
        sa.Column(
            "started_at", flashcards.storage.schema.UTCDateTime(timezone=True), nullable=False
        ),
        sa.Column("previewed", sa.Integer(), server_default="0", nullable=False),
        sa.ForeignKeyConstraint(
            ["deck_id"],
            ["decks.id"],
            name=op.f("fk_custom_study_sessions_deck_id_decks"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_custom_study_sessions_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_custom_study_sessions")),
    )
    with op.batch_alter_table("custom_study_sessions", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_custom_study_sessions_deck_id"), ["deck_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("custom_study_sessions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_custom_study_sessions_deck_id"))
    op.drop_table("custom_study_sessions")
    with op.batch_alter_table("scheduler_settings", schema=None) as batch_op:
        batch_op.drop_column("easy_days")
        batch_op.drop_column("load_balancing")
