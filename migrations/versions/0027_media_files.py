"""media_files and media_blobs: a person's media, synced with Anki's media sync

Revision ID: 0027
Revises: 0026
Create Date: 2026-12-05 12:45:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import flashcards.storage.schema

revision: str = "0027"
down_revision: str | None = "0026"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "media_files",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("sha1", sa.String(length=40), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("usn", sa.Integer(), nullable=False),
        sa.Column("mtime", flashcards.storage.schema.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_media_files_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("user_id", "name", name=op.f("pk_media_files")),
    )
    op.create_index("ix_media_files_user_usn", "media_files", ["user_id", "usn"])
    op.create_table(
        "media_blobs",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("sha1", sa.String(length=40), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_media_blobs_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("user_id", "sha1", name=op.f("pk_media_blobs")),
    )


def downgrade() -> None:
    op.drop_table("media_blobs")
    op.drop_index("ix_media_files_user_usn", table_name="media_files")
    op.drop_table("media_files")
