"""Study endpoints: decks and subscriptions, the next card, answers, undo, one card."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from flask import Response, request
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ..anki_sync import adopted_changes
from ..errors import NotFound, NotSubscribed
from ..hot_sql.rawsql import Executor
from ..http.request_db import db, direct, writes
from ..http.request_policies import pace_before_queue
from ..srs import queue, study, subscriptions
from ..srs.days import Clock
from ..srs.scheduling import CardState, fuzz_seed, preview
from ..srs.workload import workload
from ..storage.models import Subscription, User
from ..storage.retry import retrying, with_retries
from ..storage.schema import utcnow
from . import bp
from .auth import current_caller, current_user_id, token_owner
from .bodies import parse_body
from .models import reply
from .models_study import (
    CardStateBody,
    Counts,
    DeckList,
    DeckSubscription,
    DeckSummary,
    Intervals,
    NextCard,
    NextCardText,
    ReviewRequest,
    ReviewResult,
    SubscriptionRequest,
    UndoRequest,
    UndoResult,
)
from .models_study import Subscription as SubscriptionBody
from .openapi import Answer, Query, documented


def state_body(state: CardState | None) -> CardStateBody | None:
    return None if state is None else CardStateBody.of(state)


@bp.get("/decks")
@documented(
    "listDecks",
    "The decks the caller can see, with their subscription.",
    {200: Answer("Decks by slug.", DeckList)},
)
def list_decks() -> Response:
    user_id = current_user_id()
    ui_locale = db().scalar(select(User.locale).where(User.id == user_id)) or "en"
    return reply(
        DeckList(
            decks=[
                DeckSummary(
                    slug=d.slug,
                    title=d.title,
                    description=d.description,
                    locales=d.locales,
                    default_locale=d.default_locale,
                    card_count=d.card_count,
                    subscription=(
                        DeckSubscription(locale=d.subscribed_locale)
                        if d.subscribed_locale
                        else None
                    ),
                )
                for d in subscriptions.deck_summaries(db(), user_id, ui_locale)
            ]
        )
    )


@bp.put("/decks/<slug>/subscription")
@documented(
    "subscribe",
    "Study a deck, or change the language it is studied in.",
    {200: Answer("The subscription.", SubscriptionBody)},
    body=SubscriptionRequest,
    body_required=False,
)
@writes
def subscribe(slug: str) -> Response:
    user_id = current_user_id()
    body = parse_body(SubscriptionRequest, optional=True)
    session = db()
    deck = subscriptions.find_visible_deck(session, user_id, slug)
    # Two first subscriptions at once (a double click, two tabs) meet at the primary key on
    # PostgreSQL; the retry finds the other's row and changes or keeps it.
    sub = retrying(
        session,
        lambda: subscriptions.subscribe(session, user_id, deck, body.locale, now=utcnow()),
        retry_on=(IntegrityError,),
    )
    return reply(SubscriptionBody(deck=slug, locale=sub.locale))


@bp.delete("/decks/<slug>/subscription")
@documented(
    "unsubscribe", "Stop studying a deck; progress is kept.", {204: Answer("Unsubscribed.")}
)
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
@documented(
    "deleteDeck",
    "Delete a deck the caller imported, with their progress and history on it. Shipped decks "
    "cannot be deleted, nor a team's here (403).",
    {204: Answer("Deleted.")},
    403,
)
@writes
def delete_deck(slug: str) -> Response:
    user_id = current_user_id()
    session = db()
    adopted_changes.delete_own_deck(session, user_id, slug)
    session.commit()
    return Response(status=204)


@bp.get("/study/next")
@documented(
    "nextCard",
    "The next card due, its interval for each rating, and what is left today.",
    {200: Answer("The next card.", NextCard), 204: Answer("Nothing is due.")},
    404,
    409,
    query=(
        Query(
            "deck",
            {"type": "string"},
            "Only this deck (a slug) and the subdecks the caller studies under it (titled "
            '"Parent::Child", as in Anki); 409 if the caller does not study the deck.',
        ),
    ),
)
def next_card() -> Response:
    caller = current_caller()
    user_id = caller.user_id
    deck_ids = None
    if "deck" in request.args:
        deck = subscriptions.find_visible_deck(db(), user_id, request.args["deck"])
        if db().get(Subscription, (user_id, deck.id)) is None:
            # Not "nothing due" (204): this deck has no queue of theirs at all.
            raise NotSubscribed("subscribe to this deck before studying it", field="deck")
        deck_ids = subscriptions.with_subdecks(db(), user_id, deck)
    now = utcnow()
    if caller.paced:
        pace_before_queue(user_id, now)
    # Statement by statement, with no snapshot across them: an answer landing in between
    # shows up in the next request, as it would had it come a moment later.
    card, counts = queue.next_card(
        direct(), user_id, now=now, deck_ids=deck_ids, clock=caller.clock
    )
    if card is None:
        return Response(status=204)
    return reply(
        NextCard(
            card=card_text(card),
            intervals=intervals_of(direct(), user_id, card, now, caller.clock),
            counts=Counts(new=counts.new, learning=counts.learning, review=counts.review),
        )
    )


def card_text(card: queue.NextCard) -> NextCardText:
    return NextCardText(
        id=card.card_id,
        deck=card.deck_slug,
        key=card.key,
        locale=card.locale,
        front=card.question,
        back=card.answer,
        explanation=card.explanation,
        kind=card.kind,  # type: ignore[arg-type]
    )


def intervals_of(
    db: Session | Executor, user_id: int, card: queue.NextCard, now: datetime, clock: Clock
) -> Intervals:
    """When `card` comes back for each rating: exactly what an answer now stores."""
    seed = fuzz_seed(user_id, card.card_id, card.state.reps if card.state else 0)
    balance = workload(db, user_id, now, clock, card.card_id)
    outcomes = preview(card.config, card.state, now, seed=seed, clock=clock, workload=balance)
    return Intervals(
        **{
            rating.name.lower(): max(0, round((outcome.due - now).total_seconds()))
            for rating, outcome in outcomes.items()
        }
    )


def _parse_review() -> tuple[int, Any, str, datetime | None, int | None]:
    body = parse_body(ReviewRequest)
    return body.card_id, body.rating, str(body.review_id), body.reviewed_at, body.duration_ms


@bp.post("/reviews")
@documented(
    "postReview",
    "Answer a card. Idempotent by review_id.",
    {
        201: Answer("Answered: the card's new state.", ReviewResult),
        200: Answer("This review_id was already applied: the same result.", ReviewResult),
    },
    404,
    409,
    description="The card's deck must be one the caller studies (subscribed to); otherwise a 409.",
    body=ReviewRequest,
)
def post_review() -> Response:
    # The answer's own read finds the token's owner: no lookup of its own (one round trip).
    caller = token_owner()
    try:
        card_id, rating, review_id, reviewed_at, duration = _parse_review()
    except Exception:
        current_user_id()  # a bad token is said first, as on every other endpoint
        raise
    connection = direct()

    def attempt() -> study.AnswerResult:
        return study.answer(
            connection, caller, card_id, rating, review_id,
            now=utcnow(), reviewed_at=reviewed_at, duration_ms=duration,
        )  # fmt: skip

    # A racing first answer of the card, or a resend of this review id, hits a unique key.
    result = with_retries(attempt, retry_on=(IntegrityError,))
    body = ReviewResult(
        review_id=result.review_id, card_id=result.card_id, state=CardStateBody.of(result.state)
    )
    return reply(body, 201 if result.created else 200)


@bp.post("/reviews/undo")
@documented(
    "undoReview",
    "Undo the caller's latest answer of today, restoring the state before it.",
    {200: Answer("Undone: the card's restored state.", UndoResult)},
    404,
    409,
    body=UndoRequest,
    body_required=False,
)
@writes
def undo_review() -> Response:
    user_id = current_user_id()
    sent = parse_body(UndoRequest, optional=True).review_id
    review_id = None if sent is None else str(sent)
    session = db()
    result = retrying(
        session,
        lambda: study.undo(session, user_id, now=utcnow(), review_id=review_id),
    )
    return reply(
        UndoResult(
            review_id=result.review_id, card_id=result.card_id, state=state_body(result.state)
        )
    )
