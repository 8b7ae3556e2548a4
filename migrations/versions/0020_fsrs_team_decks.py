"""FSRS parameters of team decks: deck_fsrs_parameters in force, and sets fitted per deck

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-02 14:10:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "deck_fsrs_parameters",
        sa.Column("deck_id", sa.Integer(), nullable=False),
        sa.Column("parameters", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["deck_id"],
            ["decks.id"],
            name=op.f("fk_deck_fsrs_parameters_deck_id_decks"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("deck_id", name=op.f("pk_deck_fsrs_parameters")),
    )
    # Every set kept so far is a person's: the check holds for them as they are.
    with op.batch_alter_table("fsrs_parameter_sets", schema=None) as batch_op:
        batch_op.add_column(sa.Column("deck_id", sa.Integer(), nullable=True))
        batch_op.alter_column("user_id", existing_type=sa.Integer(), nullable=True)
        batch_op.create_index(
            batch_op.f("ix_fsrs_parameter_sets_deck_id"), ["deck_id"], unique=False
        )
        batch_op.create_foreign_key(
            batch_op.f("fk_fsrs_parameter_sets_deck_id_decks"),
            "decks",
            ["deck_id"],
            ["id"],
            ondelete="CASCADE",
        )
        batch_op.create_check_constraint(
            batch_op.f("ck_fsrs_parameter_sets_one_owner"),
            "(user_id IS NULL) <> (deck_id IS NULL)",
        )


def downgrade() -> None:
    # A team deck's sets have no person to belong to: they go with the column.
    op.execute("DELETE FROM fsrs_parameter_sets WHERE user_id IS NULL")
    with op.batch_alter_table("fsrs_parameter_sets", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("ck_fsrs_parameter_sets_one_owner"), type_="check")
        batch_op.drop_constraint(
            batch_op.f("fk_fsrs_parameter_sets_deck_id_decks"), type_="foreignkey"
        )
        batch_op.drop_index(batch_op.f("ix_fsrs_parameter_sets_deck_id"))
        batch_op.alter_column("user_id", existing_type=sa.Integer(), nullable=False)
        batch_op.drop_column("deck_id")
    op.drop_table("deck_fsrs_parameters")
