"""a member removed by a lead is recorded, so that no invitation link lets them back in
until a lead allows it

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-01 20:20:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import flashcards.storage.schema

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "team_removals",
        sa.Column("team_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("removed_at", flashcards.storage.schema.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["team_id"],
            ["teams.id"],
            name=op.f("fk_team_removals_team_id_teams"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_team_removals_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("team_id", "user_id", name=op.f("pk_team_removals")),
    )
    with op.batch_alter_table("team_removals", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_team_removals_user_id"), ["user_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("team_removals", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_team_removals_user_id"))
    op.drop_table("team_removals")
