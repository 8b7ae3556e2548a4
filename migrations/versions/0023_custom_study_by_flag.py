"""custom_study_sessions.flag: custom study of the cards with a flag

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-02 15:25:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("custom_study_sessions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("flag", sa.SmallInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("custom_study_sessions", schema=None) as batch_op:
        batch_op.drop_column("flag")
