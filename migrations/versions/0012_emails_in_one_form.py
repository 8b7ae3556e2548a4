"""stored emails in the form they are now looked up by: NFKC with case folded

Emails used to be stored lowered; sign-in and sign-up now fold them (NFKC + casefold), so an
address whose folded form differs from its lowered one ("straße" and "strasse", fullwidth
letters) would no longer be found, and could be signed up a second time. ASCII addresses,
nearly all of them, are the same either way and are not touched. An address whose folded
form another account already has keeps its spelling (both accounts stay as they were). One
with an invisible or direction-changing character is left too: stripping it could make it
the address it imitates; such accounts are flagged in their teams' member lists.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-01 20:40:00.000000
"""

import unicodedata
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# As the table was at this revision, not as the models say it is later.
_USERS = sa.table("users", sa.column("id", sa.Integer), sa.column("email", sa.String))


def _fold(email: str) -> str:
    # accounts.normalise_email's folding, copied: a migration must not change with the app.
    nfkc = unicodedata.normalize("NFKC", email.strip())
    return unicodedata.normalize("NFKC", nfkc.casefold()).strip()


def upgrade() -> None:
    conn = op.get_bind()
    rows = conn.execute(sa.select(_USERS.c.id, _USERS.c.email)).all()
    taken = {email for _id, email in rows}
    for user_id, email in rows:
        if email.isascii():
            continue
        folded = _fold(email)
        if folded == email or folded in taken:
            continue
        conn.execute(_USERS.update().where(_USERS.c.id == user_id).values(email=folded))
        taken.discard(email)
        taken.add(folded)


def downgrade() -> None:
    # Nothing to undo: a folded address is already lowered, so the older code finds it.
    pass
