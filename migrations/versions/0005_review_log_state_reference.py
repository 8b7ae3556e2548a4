"""review logs reference their card's state

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30 05:40:00.000000
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Every answer writes its state, and undoing a first answer deletes its log before the
    # state, so no log is without one; a database where that fails stops here unchanged.
    with op.batch_alter_table("review_logs", schema=None) as batch_op:
        batch_op.drop_constraint("fk_review_logs_user_id_users", type_="foreignkey")
        batch_op.drop_constraint("fk_review_logs_card_id_cards", type_="foreignkey")
        batch_op.drop_constraint("fk_review_logs_deck_id_decks", type_="foreignkey")
        batch_op.create_foreign_key(
            batch_op.f("fk_review_logs_user_id_review_states"),
            "review_states",
            ["user_id", "card_id"],
            ["user_id", "card_id"],
            ondelete="CASCADE",
        )


def downgrade() -> None:
    with op.batch_alter_table("review_logs", schema=None) as batch_op:
        batch_op.drop_constraint(
            batch_op.f("fk_review_logs_user_id_review_states"), type_="foreignkey"
        )
        batch_op.create_foreign_key(
            batch_op.f("fk_review_logs_user_id_users"),
            "users",
            ["user_id"],
            ["id"],
            ondelete="CASCADE",
        )
        batch_op.create_foreign_key(
            batch_op.f("fk_review_logs_card_id_cards"),
            "cards",
            ["card_id"],
            ["id"],
            ondelete="CASCADE",
        )
        batch_op.create_foreign_key(
            batch_op.f("fk_review_logs_deck_id_decks"),
            "decks",
            ["deck_id"],
            ["id"],
            ondelete="CASCADE",
        )
