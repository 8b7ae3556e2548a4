"""users.theme: the colour scheme a person picked (system, light or dark)

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-02 14:05:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_THEMES = "theme IN ('system', 'light', 'dark')"


def upgrade() -> None:
    # Everyone starts on "system": the browser's own light or dark preference.
    if op.get_bind().dialect.name == "sqlite":
        # Not batch mode: rebuilding `users` would DROP it, and with foreign keys on that
        # deletes everything a person has through ON DELETE CASCADE. SQLite adds a column
        # with its own CHECK in place.
        op.execute(
            "ALTER TABLE users ADD COLUMN theme VARCHAR(8) DEFAULT 'system' NOT NULL "
            f"CONSTRAINT ck_users_theme CHECK ({_THEMES})"
        )
    else:
        op.add_column(
            "users",
            sa.Column("theme", sa.String(length=8), server_default="system", nullable=False),
        )
        op.create_check_constraint(op.f("ck_users_theme"), "users", _THEMES)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        # In place too (SQLite 3.35+): the column's own CHECK goes with it.
        op.execute("ALTER TABLE users DROP COLUMN theme")
    else:
        op.drop_constraint(op.f("ck_users_theme"), "users", type_="check")
        op.drop_column("users", "theme")
