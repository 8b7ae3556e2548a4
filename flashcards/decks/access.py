"""Who may see what: the one place deck visibility is decided."""

from __future__ import annotations

from sqlalchemy import ColumnElement, and_, or_, select

from ..storage.models import Deck, TeamMember


def visible_decks(user_id: int | ColumnElement[int]) -> ColumnElement[bool]:
    """Shipped decks (no owner), the user's own decks, and decks of the teams they belong to.

    A team deck is visible only while the membership row exists: removing a member (or
    their leaving) ends their access at once, while their review history stays.
    """
    return or_(
        and_(Deck.owner_team_id.is_(None), Deck.owner_user_id.is_(None)),
        Deck.owner_user_id == user_id,
        Deck.owner_team_id.in_(select(TeamMember.team_id).where(TeamMember.user_id == user_id)),
    )
