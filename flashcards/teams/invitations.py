"""Invitation links: a random token (only its SHA-256 is stored), an expiry, an optional
maximum number of uses; revocable. Joining through one makes the person a plain member and
subscribes them to every deck the team has assigned; someone a lead removed is refused until
a lead lets them back (`membership.allow_back`)."""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from ..errors import (
    InvalidInput,
    InvalidLabel,
    InvitationNotUsable,
    NotFound,
    NotPermitted,
)
from ..people.token_hashes import token_hash
from ..srs.settings import CONTROL_CHARS
from ..storage.models import TeamInvitation, TeamMember, TeamRemoval
from .assignments import subscribe_to_team_assignments
from .roles import LEADS, MEMBER, membership

DEFAULT_LIFETIME = timedelta(days=7)
TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{1,200}$")  # what token_urlsafe makes
MAX_LIFETIME = timedelta(days=90)
MAX_USES = 10_000
MAX_LABEL = 100
# Embeddings, overrides and isolates: they reorder the text around them.
BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")


class RemovedFromTeam(NotPermitted):
    """A lead removed this person; no link lets them back in until a lead allows it."""

    def __init__(self, team_id: int) -> None:
        super().__init__(
            "you were removed from this team; ask a team lead to let you back in", field="token"
        )
        self.team_id = team_id


@dataclass(frozen=True)
class NewInvitation:
    invitation: TeamInvitation
    token: str  # shown once; only its hash is kept


def create_invitation(
    session: Session,
    team_id: int,
    actor_id: int,
    *,
    now: datetime,
    lifetime: timedelta = DEFAULT_LIFETIME,
    max_uses: int | None = None,
    label: str = "",
) -> NewInvitation:
    membership(session, team_id, actor_id, *LEADS)
    label = _check_label(label)
    if not timedelta(minutes=5) <= lifetime <= MAX_LIFETIME:
        raise InvalidInput("an invitation lasts from 5 minutes to 90 days", field="expires_in")
    if max_uses is not None and not 1 <= max_uses <= MAX_USES:
        raise InvalidInput(f"max_uses must be from 1 to {MAX_USES}", field="max_uses")
    token = secrets.token_urlsafe(24)
    invitation = TeamInvitation(
        team_id=team_id,
        token_hash=token_hash(token),
        created_by=actor_id,
        created_at=now,
        expires_at=now + lifetime,
        max_uses=max_uses,
        uses=0,
        label=label,
    )
    session.add(invitation)
    session.flush()
    return NewInvitation(invitation, token)


def _check_label(label: object) -> str:
    if not isinstance(label, str):
        raise InvalidLabel("label must be a string", field="label")
    label = " ".join(label.split())  # one line in the list of links
    if len(label) > MAX_LABEL:
        raise InvalidLabel(f"label may have at most {MAX_LABEL} characters", field="label")
    if CONTROL_CHARS.search(label) or BIDI_CONTROLS.search(label):
        # A right-to-left override would make the rest of the leads' list read backwards.
        raise InvalidLabel("label may not contain control characters", field="label")
    return label


def list_invitations(session: Session, team_id: int, actor_id: int) -> list[TeamInvitation]:
    membership(session, team_id, actor_id, *LEADS)
    return list(
        session.scalars(
            select(TeamInvitation)
            .where(TeamInvitation.team_id == team_id)
            .order_by(TeamInvitation.created_at.desc(), TeamInvitation.id.desc())
        )
    )


def revoke_invitation(
    session: Session, team_id: int, actor_id: int, invitation_id: int, *, now: datetime
) -> TeamInvitation:
    membership(session, team_id, actor_id, *LEADS)
    invitation = session.get(TeamInvitation, invitation_id)
    if invitation is None or invitation.team_id != team_id:
        raise NotFound(f"no invitation {invitation_id}")
    if invitation.revoked_at is None:
        invitation.revoked_at = now
        session.flush()
    return invitation


def invitation_state(invitation: TeamInvitation, now: datetime) -> str:
    if invitation.revoked_at is not None:
        return "revoked"
    if invitation.expires_at <= now:
        return "expired"
    if invitation.max_uses is not None and invitation.uses >= invitation.max_uses:
        return "used_up"
    return "active"


def join(session: Session, user_id: int, token: str, *, now: datetime) -> TeamMember:
    """Join through a link; someone already in the team stays as they are (no use counted)."""
    if not TOKEN_RE.match(token):
        raise InvitationNotUsable("no such invitation", field="token")
    invitation = session.scalar(
        select(TeamInvitation).where(TeamInvitation.token_hash == token_hash(token))
    )
    if invitation is None:
        raise InvitationNotUsable("no such invitation", field="token")
    existing = session.get(TeamMember, (invitation.team_id, user_id))
    if existing is not None:
        return existing
    if session.get(TeamRemoval, (invitation.team_id, user_id)) is not None:
        raise RemovedFromTeam(invitation.team_id)
    state = invitation_state(invitation, now)
    if state != "active":
        raise InvitationNotUsable(f"this invitation is {state.replace('_', ' ')}", field="token")
    # Counted with a guarded UPDATE so that two people racing for the last use cannot both win.
    used = session.execute(
        update(TeamInvitation)
        .where(
            TeamInvitation.id == invitation.id,
            or_(
                TeamInvitation.max_uses.is_(None),
                TeamInvitation.uses < TeamInvitation.max_uses,
            ),
        )
        .values(uses=TeamInvitation.uses + 1)
        .execution_options(synchronize_session=False)
    )
    if not getattr(used, "rowcount", 0):
        raise InvitationNotUsable("this invitation is used up", field="token")
    member = TeamMember(team_id=invitation.team_id, user_id=user_id, role=MEMBER, joined_at=now)
    session.add(member)
    session.flush()
    subscribe_to_team_assignments(session, invitation.team_id, user_id, now=now)
    return member
