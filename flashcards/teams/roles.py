"""Roles and the membership check every team operation starts with.

Someone outside a team learns nothing about it: every lookup answers 404. A member who may
see the team but not do the thing gets 403.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..decks.deckfile import SLUG_RE
from ..errors import InvalidInput, NotFound, RoleRequired
from ..storage.models import Deck, TeamMember

OWNER = "owner"
MANAGER = "manager"
MEMBER = "member"
ROLES = (OWNER, MANAGER, MEMBER)
LEADS = (OWNER, MANAGER)


def membership(session: Session, team_id: int, user_id: int, *roles: str) -> TeamMember:
    """The caller's membership; NotFound outside the team, RoleRequired without one of `roles`."""
    member = session.get(TeamMember, (team_id, user_id))
    if member is None:
        raise NotFound(f"no team {team_id}")
    if roles and member.role not in roles:
        raise RoleRequired(f"only a team's {' or '.join(roles)} may do this")
    return member


def member_of(session: Session, team_id: int, user_id: int) -> TeamMember:
    """Another user's membership of a team the caller may see; NotFound if they are not in it."""
    member = session.get(TeamMember, (team_id, user_id))
    if member is None:
        raise NotFound(f"no member {user_id} in team {team_id}")
    return member


def member_ids(session: Session, team_id: int) -> list[int]:
    return list(
        session.scalars(
            select(TeamMember.user_id)
            .where(TeamMember.team_id == team_id)
            .order_by(TeamMember.user_id)
        )
    )


def check_slug(slug: str) -> str:
    """A slug from a URL: one that cannot be a deck's is not looked up (nor echoed back, as
    it may hold NUL or unpaired surrogates that the database or JSON cannot carry)."""
    if not SLUG_RE.match(slug):
        raise NotFound("no such deck")
    return slug


def team_deck(session: Session, team_id: int, slug: str) -> Deck:
    """A deck owned by the team (not any other deck, whoever can see it)."""
    check_slug(slug)
    deck = session.scalar(select(Deck).where(Deck.slug == slug, Deck.owner_team_id == team_id))
    if deck is None:
        raise NotFound(f"no team deck '{slug}'")
    return deck


def clean_text(value: str, *, field: str, max_length: int) -> str:
    """A one-line name or title: white space folded, not empty, not too long."""
    value = " ".join(value.split())
    if not value:
        raise InvalidInput(f"{field} must not be empty", field=field)
    if len(value) > max_length:
        raise InvalidInput(f"{field} may have at most {max_length} characters", field=field)
    return value
