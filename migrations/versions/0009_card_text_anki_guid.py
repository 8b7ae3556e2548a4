"""a card text keeps the guid of the Anki note it was imported from, to export it again under it

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-30 13:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("card_texts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("anki_guid", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("card_texts", schema=None) as batch_op:
        batch_op.drop_column("anki_guid")
