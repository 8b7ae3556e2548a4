"""The team assignments that pace a person's new cards: read every time their queue is shown."""

from __future__ import annotations

from datetime import date

from sqlalchemy import bindparam, select

from ..storage.models import TeamAssignment, TeamMember
from .rawsql import Executor, Statement

_ASSIGNED = Statement(
    select(TeamAssignment.deck_id, TeamAssignment.due_date)
    .join(TeamMember, TeamMember.team_id == TeamAssignment.team_id)
    .where(TeamMember.user_id == bindparam("user_id"))
)


def assigned(db: Executor, user_id: int) -> list[tuple[int, date | None]]:
    """(deck, due date) of every assignment of every team the user belongs to."""
    return [(deck_id, due) for deck_id, due in db.all(_ASSIGNED, {"user_id": user_id})]
