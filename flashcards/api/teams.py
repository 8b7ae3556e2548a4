"""Teams under /api/v1/teams: the teams and their members (invitations, assignments, team
decks and the dashboard have modules of their own).

Thin: each view parses the request, calls flashcards.teams and commits. A team the caller is
not in answers 404 for every route; a member without the role answers 403.
"""

from __future__ import annotations

from flask import Response

from ..errors import NotFound
from ..http.request_db import db, writes
from ..people.names import looks_like_another
from ..storage.schema import MAX_ID, utcnow
from ..teams import membership
from . import bp
from .auth import current_user_id
from .bodies import parse_body
from .models import reply
from .models_teams import (
    MemberRole,
    RoleChange,
    Team,
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


def team_answer(t: membership.TeamView) -> Team:
    return Team(id=t.id, name=t.name, role=t.role, created_at=t.created_at)  # type: ignore[arg-type]


def done(description: str) -> dict[int, Answer]:
    return {204: Answer(description)}


# --- teams ---


@bp.get("/teams")
@documented("listTeams", "The caller's teams.", {200: Answer("Teams.", TeamList)}, tags=TAGS)
def list_teams() -> Response:
    user_id = current_user_id()
    return reply(TeamList(teams=[team_answer(t) for t in membership.teams_of(db(), user_id)]))


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
    return reply(team_answer(view), 201)


@bp.get("/teams/<int:team_id>")
@documented("getTeam", "A team the caller is in.", {200: Answer("The team.", Team)}, tags=TAGS)
def get_team(team_id: int) -> Response:
    user_id = current_user_id()
    return reply(team_answer(membership.get_team(db(), checked_id(team_id, "team"), user_id)))


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
    return reply(team_answer(view))


@bp.delete("/teams/<int:team_id>")
@documented(
    "deleteTeam",
    "Delete the team (owner); shipped-deck history stays.",
    done("Deleted."),
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
    done("Removed."),
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
    done("Allowed back."),
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
@documented("leaveTeam", "Leave the team (not the owner).", done("Left."), 409, tags=TAGS)
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
