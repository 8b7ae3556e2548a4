"""JSON API for a team's private decks: upload, read, edit and retire cards, delete."""

from __future__ import annotations

from typing import Any

from flask import Response, jsonify
from sqlalchemy.exc import IntegrityError

from ..request_db import db, writes
from ..storage.retry import retrying
from ..storage.schema import utcnow
from ..teams import team_decks
from . import bp
from .auth import current_user_id
from .errors import json_body, reject_unknown, string_field
from .teams import MAX_UPLOAD, checked_id, report_json

# --- team decks ---


def _upload_fields(body: dict[str, Any]) -> tuple[str, str, str, str | None]:
    reject_unknown(body, {"format", "content", "locale", "title"})
    fmt = string_field(body, "format", max_length=10)
    content = string_field(body, "content", max_length=MAX_UPLOAD)
    locale = string_field(body, "locale", max_length=16)
    title = string_field(body, "title", required=False, max_length=200) or None
    return fmt, content, locale, title


@bp.get("/teams/<int:team_id>/decks")
def list_team_decks(team_id: int) -> Response:
    user_id = current_user_id()
    decks = team_decks.list_team_decks(db(), checked_id(team_id, "team"), user_id)
    return jsonify(
        decks=[
            {
                "slug": d.slug,
                "title": d.title,
                "default_locale": d.default_locale,
                "locales": d.locales,
                "card_count": d.card_count,
            }
            for d in decks
        ]
    )


@bp.post("/teams/<int:team_id>/decks")
@writes
def create_team_deck(team_id: int) -> tuple[Response, int]:
    user_id = current_user_id()
    fmt, content, locale, title = _upload_fields(json_body())
    session = db()
    _deck, report = retrying(
        session,
        lambda: team_decks.create_team_deck(
            session,
            checked_id(team_id, "team"),
            user_id,
            fmt=fmt,
            content=content,
            locale=locale,
            title=title,
            now=utcnow(),
        ),
        retry_on=(IntegrityError,),  # two uploads with the same title took the same slug
        attempts=3,
    )
    return jsonify(report_json(report)), 201


@bp.get("/teams/<int:team_id>/decks/<slug>")
def get_team_deck(team_id: int, slug: str) -> Response:
    user_id = current_user_id()
    source = team_decks.deck_cards(db(), checked_id(team_id, "team"), user_id, slug)
    return jsonify(
        slug=source.slug,
        default_locale=source.default_locale,
        locales={
            loc.locale: {
                "title": loc.title,
                "description": loc.description,
                "cards": [
                    {
                        "key": c.key,
                        "front": c.question,
                        "back": c.answer,
                        "explanation": c.explanation,
                    }
                    for c in loc.cards
                ],
            }
            for loc in source.locales.values()
        },
    )


@bp.delete("/teams/<int:team_id>/decks/<slug>")
@writes
def delete_team_deck(team_id: int, slug: str) -> Response:
    user_id = current_user_id()
    session = db()
    team_decks.delete_team_deck(session, checked_id(team_id, "team"), user_id, slug)
    session.commit()
    return Response(status=204)


@bp.put("/teams/<int:team_id>/decks/<slug>/source")
@writes
def upload_team_deck_locale(team_id: int, slug: str) -> Response:
    user_id = current_user_id()
    fmt, content, locale, title = _upload_fields(json_body())
    session = db()
    report = team_decks.upload_locale(
        session,
        checked_id(team_id, "team"),
        user_id,
        slug,
        fmt=fmt,
        content=content,
        locale=locale,
        title=title,
        now=utcnow(),
    )
    session.commit()
    return jsonify(report_json(report))


@bp.put("/teams/<int:team_id>/decks/<slug>/cards/<key>")
@writes
def set_team_card(team_id: int, slug: str, key: str) -> Response:
    user_id = current_user_id()
    body = json_body()
    reject_unknown(body, {"locale", "front", "back", "explanation"})
    locale = string_field(body, "locale", max_length=16)
    front = string_field(body, "front", max_length=20_000)
    back = string_field(body, "back", max_length=20_000)
    explanation = string_field(body, "explanation", required=False, max_length=20_000)
    session = db()
    report = team_decks.set_card(
        session,
        checked_id(team_id, "team"),
        user_id,
        slug,
        key,
        locale=locale,
        question=front,
        answer=back,
        explanation=explanation,
        now=utcnow(),
    )
    session.commit()
    return jsonify(report_json(report))


@bp.delete("/teams/<int:team_id>/decks/<slug>/cards/<key>")
@writes
def retire_team_card(team_id: int, slug: str, key: str) -> Response:
    user_id = current_user_id()
    session = db()
    team_decks.retire_card(session, checked_id(team_id, "team"), user_id, slug, key, now=utcnow())
    session.commit()
    return Response(status=204)
