"""anki_kept_objects: what a device made that the service keeps as Anki sent it

Revision ID: 0029
Revises: 0028
Create Date: 2026-12-05 18:45:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import flashcards.storage.schema

revision: str = "0029"
down_revision: str | None = "0028"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "anki_kept_objects",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.SmallInteger(), nullable=False),
        sa.Column("oid", sa.BigInteger(), nullable=False),
        sa.Column("usn", sa.Integer(), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column(
            "updated_at", flashcards.storage.schema.UTCDateTime(timezone=True), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_anki_kept_objects_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("user_id", "kind", "oid", name=op.f("pk_anki_kept_objects")),
    )


def downgrade() -> None:
    op.drop_table("anki_kept_objects")
