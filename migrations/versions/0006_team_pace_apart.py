"""a team's pace is kept apart from the person's own new-cards override

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30 08:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Until now pacing wrote its allowance over the subscription's own override, so on a deck a
# team of the person assigns with a due date the value there is the pace: it moves.
_PACED = """
    EXISTS (
        SELECT 1 FROM team_assignments a
        JOIN team_members m ON m.team_id = a.team_id
        WHERE m.user_id = subscriptions.user_id AND a.deck_id = subscriptions.deck_id
            AND a.due_date IS NOT NULL
    )
"""


def upgrade() -> None:
    with op.batch_alter_table("subscriptions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("paced_new_per_day", sa.Integer(), nullable=True))
    op.execute(
        "UPDATE subscriptions SET paced_new_per_day = new_per_day, new_per_day = NULL"
        f" WHERE new_per_day IS NOT NULL AND {_PACED}"
    )


def downgrade() -> None:
    # One column again: the pace, where there is one, as the earlier code stored it.
    op.execute(
        "UPDATE subscriptions SET new_per_day = paced_new_per_day"
        " WHERE paced_new_per_day IS NOT NULL"
    )
    with op.batch_alter_table("subscriptions", schema=None) as batch_op:
        batch_op.drop_column("paced_new_per_day")
