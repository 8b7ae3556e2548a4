"""password_resets: one-time password reset links, stored hashed

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-02 14:10:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import flashcards.storage.schema

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "password_resets",
        sa.Column("id_hash", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("password_stamp", sa.String(length=64), nullable=False),
        sa.Column("created_at", flashcards.storage.schema.UTCDateTime(timezone=True), nullable=False),
        sa.Column("expires_at", flashcards.storage.schema.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_password_resets_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id_hash", name=op.f("pk_password_resets")),
    )
    with op.batch_alter_table("password_resets", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_password_resets_expires_at"), ["expires_at"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_password_resets_user_id"), ["user_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("password_resets", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_password_resets_user_id"))
        batch_op.drop_index(batch_op.f("ix_password_resets_expires_at"))
    op.drop_table("password_resets")
