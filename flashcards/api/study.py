"""Study endpoints: decks and subscriptions, the next card, answers, undo, one card."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from flask import Response, jsonify, request
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from .. import own_decks, queue, state_rows, study, subscriptions
from ..access import visible_decks
from ..errors import Conflict, FlashcardsError, InvalidInput, NotFound
from ..models import Card, CardText, Deck, Subscription, User
from ..request_db import db, direct, writes
from ..request_policies import refresh_pacing
from ..scheduling import CardState, fuzz_seed, preview
from ..settings import json_int
from ..storage.retry import retrying, with_retries
from ..storage.schema import MAX_ID, utcnow
from . import bp
from .auth import bearer_token_hash, current_caller, current_user_id
from .errors import json_body, reject_unknown

MAX_DURATION_MS = 24 * 3600 * 1000


def state_json(state: CardState | None) -> dict[str, Any] | None:
    if state is None:
        return None
    return {
        "state": state.state.name.lower(),
        "step": state.step,
        "stability": state.stability,
        "difficulty": state.difficulty,
        "due": state.due.isoformat(),
        "last_review": state.last_review.isoformat() if state.last_review else None,
        "reps": state.reps,
        "lapses": state.lapses,
    }


@bp.get("/decks")
def list_decks() -> Response:
    user_id = current_user_id()
    ui_locale = db().scalar(select(User.locale).where(User.id == user_id)) or "en"
    return jsonify(
        decks=[
            {
                "slug": d.slug,
                "title": d.title,
                "description": d.description,
                "locales": d.locales,
                "default_locale": d.default_locale,
                "card_count": d.card_count,
                "subscription": {"locale": d.subscribed_locale} if d.subscribed_locale else None,
            }
            for d in subscriptions.deck_summaries(db(), user_id, ui_locale)
        ]
    )


@bp.put("/decks/<slug>/subscription")
@writes
def subscribe(slug: str) -> Response:
    user_id = current_user_id()
    body = json_body() if request.get_data() else {}
    reject_unknown(body, {"locale"})
    locale = body.get("locale")
    if locale is not None and not isinstance(locale, str):
        raise InvalidInput("locale must be a string such as 'es'", field="locale")
    session = db()
    deck = subscriptions.find_visible_deck(session, user_id, slug)
    sub = subscriptions.subscribe(session, user_id, deck, locale, now=utcnow())
    session.commit()
    return jsonify(deck=slug, locale=sub.locale)


@bp.delete("/decks/<slug>/subscription")
@writes
def unsubscribe(slug: str) -> Response:
    user_id = current_user_id()
    session = db()
    deck = subscriptions.find_visible_deck(session, user_id, slug)
    if not subscriptions.unsubscribe(session, user_id, deck):
        raise NotFound(f"you are not subscribed to '{slug}'")
    session.commit()
    return Response(status=204)


@bp.delete("/decks/<slug>")
@writes
def delete_deck(slug: str) -> Response:
    user_id = current_user_id()
    session = db()
    own_decks.delete_own_deck(session, user_id, slug)
    session.commit()
    return Response(status=204)


@bp.get("/study/next")
def next_card() -> Response:
    caller = current_caller()
    user_id = caller.user_id
    deck_id = None
    if "deck" in request.args:
        deck_id = subscriptions.find_visible_deck(db(), user_id, request.args["deck"]).id
        if db().get(Subscription, (user_id, deck_id)) is None:
            # Not "nothing due" (204): this deck has no queue of theirs at all.
            raise Conflict("subscribe to this deck before studying it", field="deck")
    now = utcnow()
    if caller.paced:
        refresh_pacing(user_id, now)
    # Statement by statement, with no snapshot across them: an answer landing in between
    # shows up in the next request, as it would had it come a moment later.
    card, counts = queue.next_card(direct(), user_id, now=now, deck_id=deck_id, clock=caller.clock)
    if card is None:
        return Response(status=204)
    seed = fuzz_seed(user_id, card.card_id, card.state.reps if card.state else 0)
    outcomes = preview(card.config, card.state, now, seed=seed, clock=caller.clock)
    return jsonify(
        card={
            "id": card.card_id,
            "deck": card.deck_slug,
            "key": card.key,
            "locale": card.locale,
            "front": card.question,
            "back": card.answer,
            "explanation": card.explanation,
            "kind": card.kind,
        },
        intervals={
            rating.name.lower(): max(0, round((outcome.due - now).total_seconds()))
            for rating, outcome in outcomes.items()
        },
        counts={"new": counts.new, "learning": counts.learning, "review": counts.review},
    )


def _parse_review_id(raw: object) -> str:
    if isinstance(raw, str):
        try:
            return str(uuid.UUID(raw))
        except ValueError:
            pass
    raise InvalidInput("review_id must be a UUID chosen by the client", field="review_id")


def _parse_review(body: dict[str, Any]) -> tuple[int, Any, str, datetime | None, int | None]:
    reject_unknown(body, {"card_id", "rating", "review_id", "duration_ms", "reviewed_at"})
    card_id = json_int(body.get("card_id"))
    if card_id is None or not 1 <= card_id <= MAX_ID:
        raise InvalidInput(f"card_id must be an integer from 1 to {MAX_ID}", field="card_id")
    if "rating" not in body:
        raise InvalidInput("rating is required", field="rating")
    rating = study.parse_rating(body["rating"])
    review_id = _parse_review_id(body.get("review_id"))
    sent_duration = body.get("duration_ms")
    duration = None if sent_duration is None else json_int(sent_duration)
    if sent_duration is not None and (duration is None or not 0 <= duration <= MAX_DURATION_MS):
        raise InvalidInput(
            f"duration_ms must be an integer from 0 to {MAX_DURATION_MS}", field="duration_ms"
        )
    reviewed_at = None
    if body.get("reviewed_at") is not None:
        reviewed_at = _parse_time(body["reviewed_at"], "reviewed_at")
    return card_id, rating, review_id, reviewed_at, duration


def _parse_time(value: object, field: str) -> datetime:
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
            # Storing converts to UTC; "0001-01-01T00:00+14:00" has no UTC value (OverflowError).
            if parsed.tzinfo is not None:
                return parsed.astimezone(UTC)
        except (ValueError, OverflowError):
            pass
    raise InvalidInput(f"{field} must be an ISO 8601 time with a UTC offset", field=field)


@bp.post("/reviews")
def post_review() -> tuple[Response, int]:
    token_hash = bearer_token_hash()  # its owner is found by the answer's own read
    try:
        card_id, rating, review_id, reviewed_at, duration = _parse_review(json_body())
    except FlashcardsError:
        current_user_id()  # a bad token is said first, as on every other endpoint
        raise
    connection = direct()

    def attempt() -> study.AnswerResult:
        prepared = study.prepare_answer(
            connection, token_hash, card_id, rating, review_id,
            now=utcnow(), reviewed_at=reviewed_at, duration_ms=duration,
        )  # fmt: skip
        if isinstance(prepared, study.AnswerResult):
            return prepared
        return study.store_answer(connection, prepared)

    # A racing first answer of the card, or a resend of this review id, hits a unique key.
    result = with_retries(attempt, retry_on=(IntegrityError,))
    body = jsonify(
        review_id=result.review_id, card_id=result.card_id, state=state_json(result.state)
    )
    return body, 201 if result.created else 200


@bp.post("/reviews/undo")
@writes
def undo_review() -> Response:
    user_id = current_user_id()
    body = json_body() if request.get_data() else {}
    reject_unknown(body, {"review_id"})
    review_id = None if body.get("review_id") is None else _parse_review_id(body["review_id"])
    session = db()
    result = retrying(
        session,
        lambda: study.undo(session, user_id, now=utcnow(), review_id=review_id),
    )
    return jsonify(
        review_id=result.review_id, card_id=result.card_id, state=state_json(result.state)
    )


@bp.get("/cards/<int:card_id>")
def get_card(card_id: int) -> Response:
    user_id = current_user_id()
    if card_id > MAX_ID:
        raise NotFound(f"no card {card_id}")
    session = db()
    row = session.execute(
        select(
            Card.id, Card.key, Card.retired_at, Deck.slug, Deck.default_locale, Subscription.locale
        )
        .join(Deck, Deck.id == Card.deck_id)
        .outerjoin(
            Subscription,
            (Subscription.deck_id == Deck.id) & (Subscription.user_id == user_id),
        )
        .where(Card.id == card_id, visible_decks(user_id))
    ).first()
    if row is None:
        raise NotFound(f"no card {card_id}")
    texts = {
        t.locale: {"front": t.question, "back": t.answer, "explanation": t.explanation}
        for t in session.scalars(select(CardText).where(CardText.card_id == card_id))
    }
    locale = row.locale if row.locale in texts else row.default_locale
    return jsonify(
        card={
            "id": row.id,
            "deck": row.slug,
            "key": row.key,
            "locale": locale,
            "retired": row.retired_at is not None,
            **texts.get(locale, {"front": "", "back": "", "explanation": ""}),
            "translations": texts,
        },
        state=state_json(state_rows.card_state(session, user_id, card_id)),
    )
