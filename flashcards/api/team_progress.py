"""JSON API for a team lead's dashboard: member progress, CSV export, hardest questions."""

from __future__ import annotations

from flask import Response, request

from ..errors import InvalidInput
from ..http.request_db import db
from ..storage.schema import utcnow
from ..teams import progress
from . import bp
from .auth import current_user_id
from .models import reply
from .models_teams import (
    AssignmentProgress,
    TeamDashboard,
    TeamHardCard,
    TeamHardCards,
    TeamMemberProgress,
)
from .openapi import Answer, Query, documented
from .teams import TAGS, checked_id

MAX_HARDEST = 100

# --- dashboard ---


def _progress(p: progress.MemberProgress) -> TeamMemberProgress:
    return TeamMemberProgress(
        user_id=p.user_id,
        email=p.email,
        display_name=p.display_name,
        role=p.role,  # type: ignore[arg-type]
        introduced=p.introduced,
        total=p.total,
        in_review=p.in_review,
        predicted_recall=p.recall,
        overdue=p.overdue,
        answers_7d=p.answers_7d,
        last_activity=p.last_activity,
        leeches=p.leeches,
        assignments=[
            AssignmentProgress(
                deck=a.slug,
                due_date=a.due_date,
                introduced=a.introduced,
                total=a.total,
                status=a.status,  # type: ignore[arg-type]
            )
            for a in p.assignments
        ],
    )


@bp.get("/teams/<int:team_id>/dashboard")
@documented(
    "teamDashboard",
    "Each member's progress (owner, manager).",
    {200: Answer("Members' progress.", TeamDashboard)},
    403,
    tags=TAGS,
)
def dashboard(team_id: int) -> Response:
    user_id = current_user_id()
    rows = progress.dashboard(db(), checked_id(team_id, "team"), user_id, now=utcnow())
    return reply(TeamDashboard(members=[_progress(r) for r in rows]))


@bp.get("/teams/<int:team_id>/dashboard.csv")
@documented(
    "teamDashboardCsv",
    "The member table as CSV.",
    {200: Answer("The member table.", content={"text/csv": {"schema": {"type": "string"}}})},
    403,
    tags=TAGS,
)
def dashboard_csv(team_id: int) -> Response:
    user_id = current_user_id()
    rows = progress.dashboard(db(), checked_id(team_id, "team"), user_id, now=utcnow())
    return Response(
        progress.members_csv(rows),
        mimetype="text/csv",
        headers={"Content-Disposition": f'attachment; filename="team-{team_id}-members.csv"'},
    )


@bp.get("/teams/<int:team_id>/hardest")
@documented(
    "teamHardestCards",
    "Cards by share of Again answers, then difficulty.",
    {200: Answer("The hardest cards.", TeamHardCards)},
    403,
    422,
    query=(
        Query("limit", {"type": "integer", "minimum": 1, "maximum": MAX_HARDEST, "default": 20}),
        Query("deck", {"type": "string"}, "Only this deck (a slug)."),
        Query(
            "by",
            {"type": "string", "enum": ["again", "leeches"], "default": "again"},
            "leeches: the most leeched cards first, those a leech to nobody left out.",
        ),
    ),
    tags=TAGS,
)
def hardest(team_id: int) -> Response:
    user_id = current_user_id()
    raw = request.args.get("limit", "20")
    # ASCII digits only: str.isdigit() also takes "²", which int() refuses.
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 3) or not 1 <= int(raw) <= MAX_HARDEST:
        raise InvalidInput(f"limit must be an integer from 1 to {MAX_HARDEST}", field="limit")
    by = request.args.get("by", "again")
    if by not in ("again", "leeches"):
        raise InvalidInput("by must be 'again' or 'leeches'", field="by")
    cards = progress.hardest(
        db(), checked_id(team_id, "team"), user_id, limit=int(raw), slug=request.args.get("deck"),
        by_leeches=by == "leeches",
    )  # fmt: skip
    return reply(
        TeamHardCards(
            cards=[
                TeamHardCard(
                    card_id=c.card_id,
                    deck=c.deck,
                    key=c.key,
                    question=c.question,
                    answers=c.answers,
                    again_share=c.again_share,
                    mean_difficulty=c.mean_difficulty,
                    leeches=c.leeches,
                )
                for c in cards
            ]
        )
    )
