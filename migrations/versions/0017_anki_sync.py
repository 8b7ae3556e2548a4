"""anki_devices, anki_collections, anki_sync_sessions, anki_sync_objects, anki_collection_files:
Anki clients syncing

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-02 14:10:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from flashcards.storage.schema import UTCDateTime

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "anki_devices",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column("client_version", sa.String(length=200), nullable=False),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("last_sync_at", UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_anki_devices_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_anki_devices")),
        sa.UniqueConstraint("key_hash", name=op.f("uq_anki_devices_key_hash")),
    )
    with op.batch_alter_table("anki_devices", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_anki_devices_user_id"), ["user_id"], unique=False)

    op.create_table(
        "anki_collections",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("scm", sa.BigInteger(), nullable=False),
        sa.Column("usn", sa.Integer(), nullable=False),
        sa.Column("mod", sa.BigInteger(), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("log_marks", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_anki_collections_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_anki_collections")),
    )

    op.create_table(
        "anki_sync_sessions",
        sa.Column("device_id", sa.Integer(), nullable=False),
        sa.Column("session_key", sa.String(length=200), nullable=False),
        sa.Column("started_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("state", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["device_id"],
            ["anki_devices.id"],
            name=op.f("fk_anki_sync_sessions_device_id_anki_devices"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("device_id", name=op.f("pk_anki_sync_sessions")),
    )

    op.create_table(
        "anki_sync_objects",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.SmallInteger(), nullable=False),
        sa.Column("oid", sa.BigInteger(), nullable=False),
        sa.Column("usn", sa.Integer(), nullable=False),
        sa.Column("digest", sa.String(length=40), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_anki_sync_objects_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("user_id", "kind", "oid", name=op.f("pk_anki_sync_objects")),
    )

    op.create_table(
        "anki_collection_files",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("usn", sa.Integer(), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_anki_collection_files_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_anki_collection_files")),
    )


def downgrade() -> None:
    op.drop_table("anki_collection_files")
    op.drop_table("anki_sync_objects")
    op.drop_table("anki_sync_sessions")
    op.drop_table("anki_collections")
    with op.batch_alter_table("anki_devices", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_anki_devices_user_id"))
    op.drop_table("anki_devices")
