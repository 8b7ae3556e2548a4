"""Teams under /api/v1/teams: membership, invitations, assignments, team decks, dashboard.

Thin: each view parses the request, calls flashcards.teams and commits. A team the caller is
not in answers 404 for every route; a member without the role answers 403.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from flask import Response, jsonify, request
from sqlalchemy.exc import IntegrityError

from ..decks.sync import SyncReport
from ..errors import InvalidInput, NotFound
from ..models import TeamInvitation
from ..names import looks_like_another
from ..request_db import db, write_transaction, writes
from ..storage.retry import retrying
from ..storage.schema import MAX_ID, utcnow
from ..teams import assignments, invitations, membership, pacing
from . import bp
from .auth import current_user_id
from .errors import json_body, reject_unknown, string_field

MAX_UPLOAD = 2_000_000  # characters of an uploaded quiz or CSV


def checked_id(value: int, what: str) -> int:
    # Larger ids exist nowhere, and PostgreSQL would reject them as out of range.
    if value > MAX_ID:
        raise NotFound(f"no {what} {value}")
    return value


def int_field(body: dict[str, Any], name: str, low: int, high: int) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise InvalidInput(f"{name} must be an integer from {low} to {high}", field=name)
    return value


def _team_json(t: membership.TeamView) -> dict[str, Any]:
    return {"id": t.id, "name": t.name, "role": t.role, "created_at": t.created_at.isoformat()}


def _invitation_json(inv: TeamInvitation, token: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": inv.id,
        "label": inv.label,
        "created_at": inv.created_at.isoformat(),
        "expires_at": inv.expires_at.isoformat(),
        "max_uses": inv.max_uses,
        "uses": inv.uses,
        "state": invitations.invitation_state(inv, utcnow()),
    }
    if token is not None:
        body["token"] = token
    return body


def report_json(report: SyncReport) -> dict[str, Any]:
    return {
        "deck": report.slug,
        "created": report.created,
        "added": report.added,
        "updated": report.updated,
        "retired": report.retired,
        "restored": report.restored,
    }


# --- teams ---


@bp.get("/teams")
def list_teams() -> Response:
    user_id = current_user_id()
    return jsonify(teams=[_team_json(t) for t in membership.teams_of(db(), user_id)])


@bp.post("/teams")
@writes
def create_team() -> tuple[Response, int]:
    user_id = current_user_id()
    body = json_body()
    reject_unknown(body, {"name"})
    name = string_field(body, "name", max_length=membership.MAX_NAME)
    session = db()
    team = membership.create_team(session, user_id, name, now=utcnow())
    view = membership.get_team(session, team.id, user_id)
    session.commit()
    return jsonify(_team_json(view)), 201


@bp.get("/teams/<int:team_id>")
def get_team(team_id: int) -> Response:
    user_id = current_user_id()
    return jsonify(_team_json(membership.get_team(db(), checked_id(team_id, "team"), user_id)))


@bp.patch("/teams/<int:team_id>")
@writes
def rename_team(team_id: int) -> Response:
    user_id = current_user_id()
    body = json_body()
    reject_unknown(body, {"name"})
    name = string_field(body, "name", max_length=membership.MAX_NAME)
    session = db()
    view = membership.rename_team(session, checked_id(team_id, "team"), user_id, name)
    session.commit()
    return jsonify(_team_json(view))


@bp.delete("/teams/<int:team_id>")
@writes
def delete_team(team_id: int) -> Response:
    user_id = current_user_id()
    session = db()
    membership.delete_team(session, checked_id(team_id, "team"), user_id, now=utcnow())
    session.commit()
    return Response(status=204)


# --- members ---


@bp.get("/teams/<int:team_id>/members")
def list_members(team_id: int) -> Response:
    user_id = current_user_id()
    members = membership.list_members(db(), checked_id(team_id, "team"), user_id)
    return jsonify(
        members=[
            {
                "user_id": m.user_id,
                "email": m.email,
                "display_name": m.display_name,
                # A word mixing scripts (or an invisible character): may imitate another.
                "mixed_script": looks_like_another(m.display_name, m.email),
                "role": m.role,
                "joined_at": m.joined_at.isoformat(),
            }
            for m in members
        ]
    )


@bp.patch("/teams/<int:team_id>/members/<int:member_id>")
@writes
def change_role(team_id: int, member_id: int) -> Response:
    user_id = current_user_id()
    body = json_body()
    reject_unknown(body, {"role"})
    role = string_field(body, "role", max_length=16)
    session = db()
    member = membership.change_role(
        session, checked_id(team_id, "team"), user_id, checked_id(member_id, "member"), role
    )
    session.commit()
    return jsonify(user_id=member.user_id, role=member.role)


@bp.delete("/teams/<int:team_id>/members/<int:member_id>")
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
def list_removed(team_id: int) -> Response:
    user_id = current_user_id()
    removed = membership.list_removed(db(), checked_id(team_id, "team"), user_id)
    return jsonify(
        removals=[
            {
                "user_id": r.user_id,
                "email": r.email,
                "display_name": r.display_name,
                "removed_at": r.removed_at.isoformat(),
            }
            for r in removed
        ]
    )


@bp.delete("/teams/<int:team_id>/removals/<int:member_id>")
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
@writes
def leave_team(team_id: int) -> Response:
    user_id = current_user_id()
    session = db()
    membership.leave_team(session, checked_id(team_id, "team"), user_id, now=utcnow())
    session.commit()
    return Response(status=204)


@bp.post("/teams/<int:team_id>/transfer")
@writes
def transfer(team_id: int) -> Response:
    user_id = current_user_id()
    body = json_body()
    reject_unknown(body, {"user_id"})
    target = int_field(body, "user_id", 1, MAX_ID)
    if target is None:
        raise InvalidInput("user_id is required", field="user_id")
    session = db()
    member = membership.transfer_ownership(session, checked_id(team_id, "team"), user_id, target)
    session.commit()
    return jsonify(user_id=member.user_id, role=member.role)


# --- invitations ---


@bp.get("/teams/<int:team_id>/invitations")
def list_invitations(team_id: int) -> Response:
    user_id = current_user_id()
    found = invitations.list_invitations(db(), checked_id(team_id, "team"), user_id)
    return jsonify(invitations=[_invitation_json(i) for i in found])


@bp.post("/teams/<int:team_id>/invitations")
@writes
def create_invitation(team_id: int) -> tuple[Response, int]:
    user_id = current_user_id()
    body = json_body() if request.get_data() else {}
    reject_unknown(body, {"expires_in_hours", "max_uses", "label"})
    hours = int_field(body, "expires_in_hours", 1, 90 * 24)
    max_uses = int_field(body, "max_uses", 1, invitations.MAX_USES)
    label = string_field(body, "label", required=False, max_length=invitations.MAX_LABEL)
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
    return jsonify(_invitation_json(created.invitation, created.token)), 201


@bp.delete("/teams/<int:team_id>/invitations/<int:invitation_id>")
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
@writes
def join_team() -> Response:
    user_id = current_user_id()
    body = json_body()
    reject_unknown(body, {"token"})
    token = string_field(body, "token", max_length=200)
    session = db()

    def work() -> membership.TeamView:
        member = invitations.join(session, user_id, token, now=utcnow())
        return membership.get_team(session, member.team_id, user_id)

    # Two requests joining at once collide on the membership's key; the retry finds it.
    view = retrying(session, work, retry_on=(IntegrityError,), attempts=2)
    return jsonify(_team_json(view))


# --- assignments ---


@bp.get("/teams/<int:team_id>/assignments")
def list_assignments(team_id: int) -> Response:
    user_id = current_user_id()
    now = utcnow()
    team = checked_id(team_id, "team")
    # Today's pace is shown as the study queue will use it (a short write when it changed).
    session = db()
    pacing.keep_pacing_current(session, user_id, now=now, write=write_transaction)
    views = assignments.list_assignments(session, team, user_id, now=now, refresh=False)
    return jsonify(
        assignments=[
            {
                "deck": v.slug,
                "title": v.title,
                "team_deck": v.team_deck,
                "due_date": v.due_date.isoformat() if v.due_date else None,
                "total": v.total,
                "introduced": v.introduced,
                "new_per_day": v.new_per_day,
                "status": v.status,
            }
            for v in views
        ]
    )


@bp.put("/teams/<int:team_id>/assignments/<slug>")
@writes
def assign(team_id: int, slug: str) -> tuple[Response, int]:
    user_id = current_user_id()
    body = json_body() if request.get_data() else {}
    reject_unknown(body, {"due_date"})
    due = None
    if body.get("due_date") is not None:
        raw = body["due_date"]
        try:
            due = date.fromisoformat(raw) if isinstance(raw, str) and len(raw) == 10 else None
        except ValueError:
            due = None
        if due is None:
            raise InvalidInput("due_date must be a date like 2026-04-30, or null", field="due_date")
    session = db()
    assignment, created = retrying(
        session,
        lambda: assignments.assign(
            session, checked_id(team_id, "team"), user_id, slug, due, now=utcnow()
        ),
        retry_on=(IntegrityError,),  # a concurrent assignment or subscription of the same deck
        attempts=2,
    )
    return jsonify(
        deck=slug, due_date=assignment.due_date.isoformat() if assignment.due_date else None
    ), (201 if created else 200)


@bp.delete("/teams/<int:team_id>/assignments/<slug>")
@writes
def unassign(team_id: int, slug: str) -> Response:
    user_id = current_user_id()
    session = db()
    assignments.unassign(session, checked_id(team_id, "team"), user_id, slug, now=utcnow())
    session.commit()
    return Response(status=204)
