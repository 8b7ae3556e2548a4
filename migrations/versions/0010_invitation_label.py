"""an invitation link has an optional label, so that a lead can tell links apart

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-30 17:10:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("team_invitations", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("label", sa.String(length=100), server_default="", nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("team_invitations", schema=None) as batch_op:
        batch_op.drop_column("label")
