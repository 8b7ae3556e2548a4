"""Team deck assignments under /api/v1/teams: which decks a team studies, and by when."""

from __future__ import annotations

from flask import Response
from sqlalchemy.exc import IntegrityError

from ..http.request_db import db, write_transaction, writes
from ..storage.retry import retrying
from ..storage.schema import utcnow
from ..teams import assignments, pacing
from . import bp
from .auth import current_user_id
from .bodies import parse_body
from .models import reply
from .models_teams import (
    Assigned,
    AssignRequest,
    TeamAssignment,
    TeamAssignmentList,
)
from .openapi import Answer, documented
from .teams import TAGS, checked_id, done


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
@documented("unassignTeamDeck", "End an assignment.", done("Unassigned."), 403, tags=TAGS)
@writes
def unassign(team_id: int, slug: str) -> Response:
    user_id = current_user_id()
    session = db()
    assignments.unassign(session, checked_id(team_id, "team"), user_id, slug, now=utcnow())
    session.commit()
    return Response(status=204)
