"""Teams under /api/v1/teams: membership, invitations, assignments, team decks, dashboard.

Thin: each view parses the request, calls flashcards.teams and commits. A team the caller is
not in answers 404 for every route; a member without the role answers 403.
"""

from __future__ import annotations

from datetime import timedelta

from flask import Response
from sqlalchemy.exc import IntegrityError

from ..errors import NotFound
from ..http.request_db import db, write_transaction, writes
from ..people.names import looks_like_another
from ..storage.models import TeamInvitation as InvitationRow
from ..storage.retry import retrying
from ..storage.schema import MAX_ID, utcnow
from ..teams import assignments, invitations, membership, pacing
from . import bp
from .auth import current_user_id
from .bodies import parse_body
from .models import reply
from .models_teams import (
    Assigned,
    AssignRequest,
    InvitationRequest,
    JoinRequest,
    MemberRole,
    RoleChange,
    Team,
    TeamAssignment,
    TeamAssignmentList,
    TeamInvitation,
    TeamInvitationList,
    TeamList,
    TeamMember,
    TeamMemberList,
    TeamName,
    TeamRemoval,
    TeamRemovalList,
    Transfer,
)
from .openapi import Answer, documented

TAGS = ("teams",)


def checked_id(value: int, what: str) -> int:
    # Larger ids exist nowhere, and PostgreSQL would reject them as out of range.
    if value > MAX_ID:
        raise NotFound(f"no {what} {value}")
    return value


def _team(t: membership.TeamView) -> Team:
    return Team(id=t.id, name=t.name, role=t.role, created_at=t.created_at)  # type: ignore[arg-type]


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


def _done(description: str) -> dict[int, Answer]:
    return {204: Answer(description)}


# --- teams ---


@bp.get("/teams")
@documented("listTeams", "The caller's teams.", {200: Answer("Teams.", TeamList)}, tags=TAGS)
def list_teams() -> Response:
    user_id = current_user_id()
    return reply(TeamList(teams=[_team(t) for t in membership.teams_of(db(), user_id)]))


@bp.post("/teams")
@documented(
    "createTeam",
    "Create a team; the caller owns it.",
    {201: Answer("The new team.", Team)},
    body=TeamName,
    tags=TAGS,
)
@writes
def create_team() -> Response:
    user_id = current_user_id()
    name = parse_body(TeamName).name
    session = db()
    team = membership.create_team(session, user_id, name, now=utcnow())
    view = membership.get_team(session, team.id, user_id)
    session.commit()
    return reply(_team(view), 201)


@bp.get("/teams/<int:team_id>")
@documented("getTeam", "A team the caller is in.", {200: Answer("The team.", Team)}, tags=TAGS)
def get_team(team_id: int) -> Response:
    user_id = current_user_id()
    return reply(_team(membership.get_team(db(), checked_id(team_id, "team"), user_id)))


@bp.patch("/teams/<int:team_id>")
@documented(
    "renameTeam",
    "Rename (owner, manager).",
    {200: Answer("The renamed team.", Team)},
    403,
    body=TeamName,
    tags=TAGS,
)
@writes
def rename_team(team_id: int) -> Response:
    user_id = current_user_id()
    name = parse_body(TeamName).name
    session = db()
    view = membership.rename_team(session, checked_id(team_id, "team"), user_id, name)
    session.commit()
    return reply(_team(view))


@bp.delete("/teams/<int:team_id>")
@documented(
    "deleteTeam",
    "Delete the team (owner); shipped-deck history stays.",
    _done("Deleted."),
    403,
    tags=TAGS,
)
@writes
def delete_team(team_id: int) -> Response:
    user_id = current_user_id()
    session = db()
    membership.delete_team(session, checked_id(team_id, "team"), user_id, now=utcnow())
    session.commit()
    return Response(status=204)


# --- members ---


@bp.get("/teams/<int:team_id>/members")
@documented(
    "listTeamMembers",
    "Members (owner, manager).",
    {200: Answer("Members.", TeamMemberList)},
    403,
    tags=TAGS,
)
def list_members(team_id: int) -> Response:
    user_id = current_user_id()
    members = membership.list_members(db(), checked_id(team_id, "team"), user_id)
    return reply(
        TeamMemberList(
            members=[
                TeamMember(
                    user_id=m.user_id,
                    email=m.email,
                    display_name=m.display_name,
                    mixed_script=looks_like_another(m.display_name, m.email),
                    role=m.role,  # type: ignore[arg-type]
                    joined_at=m.joined_at,
                )
                for m in members
            ]
        )
    )


@bp.patch("/teams/<int:team_id>/members/<int:member_id>")
@documented(
    "changeTeamRole",
    "Make a member a manager or back (owner).",
    {200: Answer("The member's new role.", MemberRole)},
    403,
    409,
    body=RoleChange,
    tags=TAGS,
)
@writes
def change_role(team_id: int, member_id: int) -> Response:
    user_id = current_user_id()
    role = parse_body(RoleChange).role
    session = db()
    member = membership.change_role(
        session, checked_id(team_id, "team"), user_id, checked_id(member_id, "member"), role
    )
    session.commit()
    return reply(MemberRole(user_id=member.user_id, role=member.role))  # type: ignore[arg-type]


@bp.delete("/teams/<int:team_id>/members/<int:member_id>")
@documented(
    "removeTeamMember",
    "Remove a member; their history stays.",
    _done("Removed."),
    403,
    409,
    tags=TAGS,
)
@writes
def remove_member(team_id: int, member_id: int) -> Response:
    user_id = current_user_id()
    session = db()
    membership.remove_member(
        session, checked_id(team_id, "team"), user_id, checked_id(member_id, "member"), now=utcnow()
    )
    session.commit()
    return Response(status=204)


@bp.get("/teams/<int:team_id>/removals")
@documented(
    "listTeamRemovals",
    "People removed and not let back yet (owner, manager).",
    {200: Answer("Removals.", TeamRemovalList)},
    403,
    tags=TAGS,
)
def list_removed(team_id: int) -> Response:
    user_id = current_user_id()
    removed = membership.list_removed(db(), checked_id(team_id, "team"), user_id)
    return reply(
        TeamRemovalList(
            removals=[
                TeamRemoval(
                    user_id=r.user_id,
                    email=r.email,
                    display_name=r.display_name,
                    removed_at=r.removed_at,
                )
                for r in removed
            ]
        )
    )


@bp.delete("/teams/<int:team_id>/removals/<int:member_id>")
@documented(
    "allowBackToTeam",
    "Let someone removed join again with a link (owner, manager).",
    _done("Allowed back."),
    403,
    tags=TAGS,
)
@writes
def allow_back(team_id: int, member_id: int) -> Response:
    user_id = current_user_id()
    session = db()
    membership.allow_back(
        session, checked_id(team_id, "team"), user_id, checked_id(member_id, "member")
    )
    session.commit()
    return Response(status=204)


@bp.delete("/teams/<int:team_id>/membership")
@documented("leaveTeam", "Leave the team (not the owner).", _done("Left."), 409, tags=TAGS)
@writes
def leave_team(team_id: int) -> Response:
    user_id = current_user_id()
    session = db()
    membership.leave_team(session, checked_id(team_id, "team"), user_id, now=utcnow())
    session.commit()
    return Response(status=204)


@bp.post("/teams/<int:team_id>/transfer")
@documented(
    "transferTeam",
    "Hand ownership to a member (owner).",
    {200: Answer("The new owner.", MemberRole)},
    403,
    409,
    body=Transfer,
    tags=TAGS,
)
@writes
def transfer(team_id: int) -> Response:
    user_id = current_user_id()
    target = parse_body(Transfer).user_id
    session = db()
    member = membership.transfer_ownership(session, checked_id(team_id, "team"), user_id, target)
    session.commit()
    return reply(MemberRole(user_id=member.user_id, role=member.role))  # type: ignore[arg-type]


# --- invitations ---


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
@documented("revokeTeamInvitation", "Revoke a link.", _done("Revoked."), 403, tags=TAGS)
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
    return reply(_team(view))


# --- assignments ---


@bp.get("/teams/<int:team_id>/assignments")
@documented(
    "listTeamAssignments",
    "Assigned decks with the caller's own progress.",
    {200: Answer("Assignments.", TeamAssignmentList)},
    tags=TAGS,
)
def list_assignments(team_id: int) -> Response:
    user_id = current_user_id()
    now = utcnow()
    team = checked_id(team_id, "team")
    # Today's pace is shown as the study queue will use it (a short write when it changed).
    session = db()
    pacing.keep_pacing_current(session, user_id, now=now, write=write_transaction)
    views = assignments.list_assignments(session, team, user_id, now=now, refresh=False)
    return reply(
        TeamAssignmentList(
            assignments=[
                TeamAssignment(
                    deck=v.slug,
                    title=v.title,
                    team_deck=v.team_deck,
                    due_date=v.due_date,
                    total=v.total,
                    introduced=v.introduced,
                    new_per_day=v.new_per_day,
                    status=v.status,  # type: ignore[arg-type]
                )
                for v in views
            ]
        )
    )


@bp.put("/teams/<int:team_id>/assignments/<slug>")
@documented(
    "assignTeamDeck",
    "Assign a deck (owner, manager); members are subscribed.",
    {
        200: Answer("The assignment, changed.", Assigned),
        201: Answer("Assigned for the first time.", Assigned),
    },
    403,
    body=AssignRequest,
    body_required=False,
    tags=TAGS,
)
@writes
def assign(team_id: int, slug: str) -> Response:
    user_id = current_user_id()
    due = parse_body(AssignRequest, optional=True).due_date
    session = db()
    assignment, created = retrying(
        session,
        lambda: assignments.assign(
            session, checked_id(team_id, "team"), user_id, slug, due, now=utcnow()
        ),
        retry_on=(IntegrityError,),  # a concurrent assignment or subscription of the same deck
        attempts=2,
    )
    return reply(Assigned(deck=slug, due_date=assignment.due_date), 201 if created else 200)


@bp.delete("/teams/<int:team_id>/assignments/<slug>")
@documented("unassignTeamDeck", "End an assignment.", _done("Unassigned."), 403, tags=TAGS)
@writes
def unassign(team_id: int, slug: str) -> Response:
    user_id = current_user_id()
    session = db()
    assignments.unassign(session, checked_id(team_id, "team"), user_id, slug, now=utcnow())
    session.commit()
    return Response(status=204)
