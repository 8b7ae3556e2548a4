"""JSON API for a team lead's dashboard: member progress, CSV export, hardest questions."""

from __future__ import annotations

from typing import Any

from flask import Response, jsonify, request

from ..errors import InvalidInput
from ..request_db import db
from ..storage.schema import utcnow
from ..teams import progress
from . import bp
from .auth import current_user_id
from .teams import checked_id

# --- dashboard ---


def _progress_json(p: progress.MemberProgress) -> dict[str, Any]:
    return {
        "user_id": p.user_id,
        "email": p.email,
        "display_name": p.display_name,
        "role": p.role,
        "introduced": p.introduced,
        "total": p.total,
        "in_review": p.in_review,
        "predicted_recall": p.recall,
        "overdue": p.overdue,
        "answers_7d": p.answers_7d,
        "last_activity": p.last_activity.isoformat() if p.last_activity else None,
        "assignments": [
            {
                "deck": a.slug,
                "due_date": a.due_date.isoformat() if a.due_date else None,
                "introduced": a.introduced,
                "total": a.total,
                "status": a.status,
            }
            for a in p.assignments
        ],
    }


@bp.get("/teams/<int:team_id>/dashboard")
def dashboard(team_id: int) -> Response:
    user_id = current_user_id()
    rows = progress.dashboard(db(), checked_id(team_id, "team"), user_id, now=utcnow())
    return jsonify(members=[_progress_json(r) for r in rows])


@bp.get("/teams/<int:team_id>/dashboard.csv")
def dashboard_csv(team_id: int) -> Response:
    user_id = current_user_id()
    rows = progress.dashboard(db(), checked_id(team_id, "team"), user_id, now=utcnow())
    return Response(
        progress.members_csv(rows),
        mimetype="text/csv",
        headers={"Content-Disposition": f'attachment; filename="team-{team_id}-members.csv"'},
    )


@bp.get("/teams/<int:team_id>/hardest")
def hardest(team_id: int) -> Response:
    user_id = current_user_id()
    raw = request.args.get("limit", "20")
    # ASCII digits only: str.isdigit() also takes "²", which int() refuses.
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 3) or not 1 <= int(raw) <= 100:
        raise InvalidInput("limit must be an integer from 1 to 100", field="limit")
    cards = progress.hardest(
        db(), checked_id(team_id, "team"), user_id, limit=int(raw), slug=request.args.get("deck")
    )
    return jsonify(
        cards=[
            {
                "card_id": c.card_id,
                "deck": c.deck,
                "key": c.key,
                "question": c.question,
                "answers": c.answers,
                "again_share": c.again_share,
                "mean_difficulty": c.mean_difficulty,
            }
            for c in cards
        ]
    )
