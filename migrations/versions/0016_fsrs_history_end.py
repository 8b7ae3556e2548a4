"""fsrs_parameter_sets.history_end_log_id: where each fit's history ended, for the automatic trigger

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-02 12:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Left NULL for the sets already kept: which rows their fit read is not known, and the
    # trigger then counts the answers dated after the fit instead.
    with op.batch_alter_table("fsrs_parameter_sets", schema=None) as batch_op:
        batch_op.add_column(sa.Column("history_end_log_id", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("fsrs_parameter_sets", schema=None) as batch_op:
        batch_op.drop_column("history_end_log_id")
