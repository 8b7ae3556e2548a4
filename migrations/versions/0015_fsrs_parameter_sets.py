"""fsrs_parameter_sets: each fit of a person's FSRS parameters with its scores

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-02 11:50:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import flashcards.storage.schema

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "fsrs_parameter_sets",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("parameters", sa.JSON(), nullable=False),
        sa.Column("created_at", flashcards.storage.schema.UTCDateTime(timezone=True), nullable=False),
        sa.Column("answers", sa.Integer(), nullable=False),
        sa.Column("cards", sa.Integer(), nullable=False),
        sa.Column("log_loss", sa.Float(), nullable=False),
        sa.Column("rmse_bins", sa.Float(), nullable=False),
        sa.Column("previous_log_loss", sa.Float(), nullable=False),
        sa.Column("previous_rmse_bins", sa.Float(), nullable=False),
        sa.Column("default_log_loss", sa.Float(), nullable=False),
        sa.Column("default_rmse_bins", sa.Float(), nullable=False),
        sa.Column("adopted", sa.Boolean(), nullable=False),
        sa.Column("reverted_at", flashcards.storage.schema.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_fsrs_parameter_sets_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_fsrs_parameter_sets")),
    )
    with op.batch_alter_table("fsrs_parameter_sets", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_fsrs_parameter_sets_user_id"), ["user_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("fsrs_parameter_sets", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_fsrs_parameter_sets_user_id"))
    op.drop_table("fsrs_parameter_sets")
