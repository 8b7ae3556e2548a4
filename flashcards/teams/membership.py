"""Teams and their members: create, rename, delete; roles, ownership, leaving and removal.

A team always has exactly one owner: the owner cannot leave or be removed, and hands the
role over with `transfer_ownership` (becoming a manager). Managers run the team day to day
and may remove plain members; only the owner changes roles.

Someone removed is recorded (`TeamRemoval`): links are shared and outlive a removal, so
without the record the link they joined with, or any link a group was given, would let them
straight back in. A lead lets them back (`allow_back`); then any working link does. Leaving
of one's own accord is not recorded: whoever left may come back with a link.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from ..errors import (
    AlreadyOwner,
    InvalidInput,
    ManagerRemovesMembersOnly,
    NotFound,
    OwnerCannotLeave,
    OwnerNotRemovable,
    OwnerRoleByTransferOnly,
    RemovingSelf,
)
from ..storage.models import Deck, Subscription, Team, TeamAssignment, TeamMember, TeamRemoval, User
from .pacing import refresh_pacing
from .roles import (
    LEADS,
    MANAGER,
    MEMBER,
    OWNER,
    clean_text,
    member_ids,
    member_of,
    membership,
)

MAX_NAME = 100


def clean_name(name: str) -> str:
    return clean_text(name, field="name", max_length=MAX_NAME)


def create_team(session: Session, user_id: int, name: str, *, now: datetime) -> Team:
    team = Team(name=clean_name(name), created_at=now)
    session.add(team)
    session.flush()
    session.add(TeamMember(team_id=team.id, user_id=user_id, role=OWNER, joined_at=now))
    session.flush()
    return team


@dataclass(frozen=True)
class TeamView:
    id: int
    name: str
    role: str
    created_at: datetime


def teams_of(session: Session, user_id: int) -> list[TeamView]:
    rows = session.execute(
        select(Team, TeamMember.role)
        .join(TeamMember, TeamMember.team_id == Team.id)
        .where(TeamMember.user_id == user_id)
        .order_by(Team.name, Team.id)
    ).all()
    return [TeamView(t.id, t.name, role, t.created_at) for t, role in rows]


def get_team(session: Session, team_id: int, user_id: int) -> TeamView:
    member = membership(session, team_id, user_id)
    team = session.get(Team, team_id)
    assert team is not None  # the membership row references it
    return TeamView(team.id, team.name, member.role, team.created_at)


def rename_team(session: Session, team_id: int, user_id: int, name: str) -> TeamView:
    membership(session, team_id, user_id, *LEADS)
    team = session.get(Team, team_id)
    assert team is not None
    team.name = clean_name(name)
    session.flush()
    return get_team(session, team_id, user_id)


def delete_team(session: Session, team_id: int, user_id: int, *, now: datetime) -> None:
    """Delete the team, its invitations, assignments and own decks (with progress on those).

    Nobody's history of shipped decks is touched: those review states and logs belong to the
    person; they only lose the team's pace.
    """
    membership(session, team_id, user_id, OWNER)
    members = member_ids(session, team_id)
    assigned = list(
        session.scalars(select(TeamAssignment.deck_id).where(TeamAssignment.team_id == team_id))
    )
    session.execute(delete(Deck).where(Deck.owner_team_id == team_id))
    session.execute(delete(Team).where(Team.id == team_id))
    session.flush()
    session.expire_all()
    for member in members:
        refresh_pacing(session, member, now=now, deck_ids=assigned)


@dataclass(frozen=True)
class MemberView:
    user_id: int
    email: str
    display_name: str
    role: str
    joined_at: datetime


def list_members(session: Session, team_id: int, user_id: int) -> list[MemberView]:
    """Owners and managers only: members do not see each other."""
    membership(session, team_id, user_id, *LEADS)
    rows = session.execute(
        select(TeamMember, User.email, User.display_name)
        .join(User, User.id == TeamMember.user_id)
        .where(TeamMember.team_id == team_id)
        .order_by(User.email)
    ).all()
    return [
        MemberView(m.user_id, email, display_name, m.role, m.joined_at)
        for m, email, display_name in rows
    ]


def change_role(
    session: Session, team_id: int, actor_id: int, target_id: int, role: str
) -> TeamMember:
    membership(session, team_id, actor_id, OWNER)
    if role not in (MANAGER, MEMBER):
        raise InvalidInput(
            "role must be 'manager' or 'member' (hand over 'owner' with a transfer)", field="role"
        )
    target = member_of(session, team_id, target_id)
    if target.role == OWNER:
        raise OwnerRoleByTransferOnly(
            "the owner's role changes only by transferring ownership", field="role"
        )
    target.role = role
    session.flush()
    return target


def transfer_ownership(session: Session, team_id: int, actor_id: int, target_id: int) -> TeamMember:
    """The target becomes the owner and the previous owner a manager."""
    actor = membership(session, team_id, actor_id, OWNER)
    target = member_of(session, team_id, target_id)
    if target.user_id == actor.user_id:
        raise AlreadyOwner("you already own this team", field="user_id")
    actor.role = MANAGER
    session.flush()  # first: the database allows one owner per team at any moment
    target.role = OWNER
    session.flush()
    return target


def remove_member(
    session: Session, team_id: int, actor_id: int, target_id: int, *, now: datetime
) -> None:
    actor = membership(session, team_id, actor_id, *LEADS)
    target = member_of(session, team_id, target_id)
    if target.user_id == actor.user_id:
        raise RemovingSelf("to leave a team, use leave")
    if target.role == OWNER:
        raise OwnerNotRemovable("the owner cannot be removed")
    if actor.role == MANAGER and target.role != MEMBER:
        raise ManagerRemovesMembersOnly("a manager may remove plain members only")
    _end_membership(session, team_id, target_id, now=now)
    session.merge(TeamRemoval(team_id=team_id, user_id=target_id, removed_at=now))
    session.flush()


@dataclass(frozen=True)
class RemovedView:
    user_id: int
    email: str
    display_name: str
    removed_at: datetime


def list_removed(session: Session, team_id: int, actor_id: int) -> list[RemovedView]:
    """People removed from the team and not let back yet (owner, manager)."""
    membership(session, team_id, actor_id, *LEADS)
    rows = session.execute(
        select(TeamRemoval, User.email, User.display_name)
        .join(User, User.id == TeamRemoval.user_id)
        .where(TeamRemoval.team_id == team_id)
        .order_by(User.email)
    ).all()
    return [RemovedView(r.user_id, email, name, r.removed_at) for r, email, name in rows]


def allow_back(session: Session, team_id: int, actor_id: int, target_id: int) -> None:
    """A lead lets someone they removed join again, with any link that works."""
    membership(session, team_id, actor_id, *LEADS)
    gone = session.execute(
        delete(TeamRemoval).where(TeamRemoval.team_id == team_id, TeamRemoval.user_id == target_id)
    )
    if not getattr(gone, "rowcount", 0):
        raise NotFound(f"nobody removed from this team has the id {target_id}")
    session.flush()


def leave_team(session: Session, team_id: int, user_id: int, *, now: datetime) -> None:
    member = membership(session, team_id, user_id)
    if member.role == OWNER:
        raise OwnerCannotLeave(
            "the owner cannot leave; transfer ownership first (or delete the team)"
        )
    _end_membership(session, team_id, user_id, now=now)


def _end_membership(session: Session, team_id: int, user_id: int, *, now: datetime) -> None:
    """Access to the team's decks ends now; review history is kept for a later return."""
    session.execute(
        delete(TeamMember).where(TeamMember.team_id == team_id, TeamMember.user_id == user_id)
    )
    team_decks = select(Deck.id).where(Deck.owner_team_id == team_id)
    session.execute(
        delete(Subscription).where(
            Subscription.user_id == user_id, Subscription.deck_id.in_(team_decks)
        )
    )
    session.flush()
    session.expire_all()
    assigned = list(
        session.scalars(select(TeamAssignment.deck_id).where(TeamAssignment.team_id == team_id))
    )
    refresh_pacing(session, user_id, now=now, deck_ids=assigned)
