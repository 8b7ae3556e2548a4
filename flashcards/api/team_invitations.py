"""Team invitation links under /api/v1/teams: made, listed and revoked by leads, used to
join."""

from __future__ import annotations

from datetime import timedelta

from flask import Response
from sqlalchemy.exc import IntegrityError

from ..http.request_db import db, writes
from ..storage.models import TeamInvitation as InvitationRow
from ..storage.retry import retrying
from ..storage.schema import utcnow
from ..teams import invitations, membership
from . import bp
from .auth import current_user_id
from .bodies import parse_body
from .models import reply
from .models_teams import (
    InvitationRequest,
    JoinRequest,
    Team,
    TeamInvitation,
    TeamInvitationList,
)
from .openapi import Answer, documented
from .teams import TAGS, checked_id, done, team_answer


def _invitation(inv: InvitationRow, token: str | None = None) -> TeamInvitation:
    return TeamInvitation(
        id=inv.id,
        label=inv.label,
        created_at=inv.created_at,
        expires_at=inv.expires_at,
        max_uses=inv.max_uses,
        uses=inv.uses,
        state=invitations.invitation_state(inv, utcnow()),  # type: ignore[arg-type]
        token=token,
    )


@bp.get("/teams/<int:team_id>/invitations")
@documented(
    "listTeamInvitations",
    "Invitation links (owner, manager).",
    {200: Answer("Invitations.", TeamInvitationList)},
    403,
    tags=TAGS,
)
def list_invitations(team_id: int) -> Response:
    user_id = current_user_id()
    found = invitations.list_invitations(db(), checked_id(team_id, "team"), user_id)
    return reply(TeamInvitationList(invitations=[_invitation(i) for i in found]))


@bp.post("/teams/<int:team_id>/invitations")
@documented(
    "createTeamInvitation",
    "A new link; its token is shown once.",
    {201: Answer("The new link, with its token.", TeamInvitation)},
    403,
    body=InvitationRequest,
    body_required=False,
    tags=TAGS,
)
@writes
def create_invitation(team_id: int) -> Response:
    user_id = current_user_id()
    body = parse_body(InvitationRequest, optional=True)
    hours, max_uses, label = body.expires_in_hours, body.max_uses, body.label
    session = db()
    created = invitations.create_invitation(
        session,
        checked_id(team_id, "team"),
        user_id,
        now=utcnow(),
        lifetime=timedelta(hours=hours) if hours else invitations.DEFAULT_LIFETIME,
        max_uses=max_uses,
        label=label,
    )
    session.commit()
    return reply(_invitation(created.invitation, created.token), 201)


@bp.delete("/teams/<int:team_id>/invitations/<int:invitation_id>")
@documented("revokeTeamInvitation", "Revoke a link.", done("Revoked."), 403, tags=TAGS)
@writes
def revoke_invitation(team_id: int, invitation_id: int) -> Response:
    user_id = current_user_id()
    session = db()
    invitations.revoke_invitation(
        session,
        checked_id(team_id, "team"),
        user_id,
        checked_id(invitation_id, "invitation"),
        now=utcnow(),
    )
    session.commit()
    return Response(status=204)


@bp.post("/teams/join")
@documented(
    "joinTeam",
    "Join through an invitation token; 403 for someone a lead removed from the team and has "
    "not let back.",
    {200: Answer("The team joined.", Team)},
    403,
    404,
    body=JoinRequest,
    tags=TAGS,
)
@writes
def join_team() -> Response:
    user_id = current_user_id()
    token = parse_body(JoinRequest).token
    session = db()

    def work() -> membership.TeamView:
        member = invitations.join(session, user_id, token, now=utcnow())
        return membership.get_team(session, member.team_id, user_id)

    # Two requests joining at once collide on the membership's key; the retry finds it.
    view = retrying(session, work, retry_on=(IntegrityError,), attempts=2)
    return reply(team_answer(view))
