"""The API token's lookups, run on nearly every API request."""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam, exists, select

from ..storage.models import ApiToken, TeamAssignment, TeamMember, User
from .rawsql import Executor, Statement

_USER_ID_FOR_HASH = Statement(select(ApiToken.user_id).where(ApiToken.token_hash == bindparam("h")))
# The same lookup, for the queue: its first reads ride along instead of costing their own.
_CALLER_FOR_HASH = Statement(
    select(
        ApiToken.user_id,
        User.timezone,
        User.day_start_hour,
        exists()
        .where(TeamMember.user_id == ApiToken.user_id)
        .where(TeamAssignment.team_id == TeamMember.team_id)
        .label("paced"),
    )
    .join(User, User.id == ApiToken.user_id)
    .where(ApiToken.token_hash == bindparam("h"))
)


def user_id_for_hash(db: Executor, token_hash: str) -> int | None:
    """The owner of the token stored with this hash, or None."""
    row = db.first(_USER_ID_FOR_HASH, {"h": token_hash})
    return None if row is None else int(row.user_id)


def caller_for_hash(db: Executor, token_hash: str) -> Any:
    """The owner's `user_id`, `timezone`, `day_start_hour`, and whether a team assigned
    them decks (`paced`); None for no such token."""
    return db.first(_CALLER_FOR_HASH, {"h": token_hash})
