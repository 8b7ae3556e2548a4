"""Custom study: start, read and end the caller's session, its next card, a preview's step.

Answers in a session are sent to POST /reviews like any other: they count as real answers.
More new or review cards of a deck today start no session: they raise the deck's limits.
"""

from __future__ import annotations

from dataclasses import replace

from flask import Response

from ..http.request_db import db, writes
from ..people.accounts import user_clock
from ..srs import custom_study, queue
from ..srs.state_rows import answered_from
from ..storage.schema import utcnow
from . import bp
from .auth import current_user_id
from .bodies import parse_body
from .models import reply
from .models_custom_study import (
    CustomStudyNext,
    CustomStudyRequest,
    CustomStudySession,
    ExtendedLimits,
    PreviewedCard,
)
from .openapi import Answer, documented
from .study import card_text, intervals_of

_SESSION = {200: Answer("The caller's custom study session.", CustomStudySession)}


def _body(study: custom_study.CustomStudy) -> CustomStudySession:
    return CustomStudySession(
        mode=study.mode, deck=study.deck_slug, days=study.days, amount=study.amount,
        tag=study.tag, flag=study.flag, started_at=study.started_at, done=study.done,
    )  # fmt: skip


@bp.put("/custom-study")
@documented(
    "startCustomStudy",
    "Start a custom study session, ending the caller's previous one; or study more new or "
    "review cards of a deck today.",
    {
        201: Answer("Started.", CustomStudySession),
        200: Answer("extra_new, extra_review: the deck's limits today raised.", ExtendedLimits),
    },
    404,
    409,
    description="The deck must be one the caller studies (409 otherwise, 404 for a deck they "
    "cannot see). A session that would show no card is not started (409 no-cards-match), and "
    "the previous one stays. extra_new and extra_review, as Anki's \"increase today's limit\", add "
    "`amount` cards on top of the deck's daily limit for today only (asked again the same day, "
    "the numbers add up); they start no session and leave the current one: the deck's daily "
    "queue (GET /study/next) shows the extra cards.",
    body=CustomStudyRequest,
)
@writes
def start_custom_study() -> Response:
    user_id = current_user_id()
    body = parse_body(CustomStudyRequest)
    session = db()
    now = utcnow()
    clock = user_clock(session, user_id)
    study = custom_study.start(
        session, user_id, mode=body.mode, deck=body.deck, days=body.days,
        amount=body.amount, tag=body.tag, flag=body.flag, now=now, clock=clock,
    )  # fmt: skip
    if isinstance(study, custom_study.ExtendedLimits):
        left = queue.counts_by_deck(session, user_id, now=now, clock=clock)[study.deck_id]
        session.commit()
        extended = ExtendedLimits(
            deck=study.deck_slug, day=study.on, extra_new=study.extra_new,
            extra_reviews=study.extra_reviews, new=left.new, review=left.review,
        )  # fmt: skip
        return reply(extended)
    session.commit()
    return reply(_body(study), 201)


@bp.get("/custom-study")
@documented("getCustomStudy", "The caller's custom study session.", _SESSION, 404)
def get_custom_study() -> Response:
    return reply(_body(custom_study.current(db(), current_user_id())))


@bp.delete("/custom-study")
@documented(
    "endCustomStudy", "End the caller's custom study session.", {204: Answer("Ended.")}, 404
)
@writes
def end_custom_study() -> Response:
    session = db()
    custom_study.end(session, current_user_id())
    session.commit()
    return Response(status=204)


@bp.get("/custom-study/next")
@documented(
    "nextCustomStudyCard",
    "The session's next card, with its intervals (none in a preview).",
    {200: Answer("The next card.", CustomStudyNext), 204: Answer("The session is through.")},
    404,
)
def next_custom_study_card() -> Response:
    user_id = current_user_id()
    session = db()
    now = utcnow()
    clock = user_clock(session, user_id)
    card, study = custom_study.next_card(session, user_id, now=now, clock=clock)
    if card is None:
        return Response(status=204)
    # A forgotten card's intervals are those of the state its answer starts from.
    card = replace(card, state=answered_from(session, user_id, card.card_id))
    preview = study.mode == "preview"  # schedules nothing: no intervals
    intervals = None if preview else intervals_of(session, user_id, card, now, clock)
    return reply(CustomStudyNext(card=card_text(card), intervals=intervals, session=_body(study)))


@bp.post("/custom-study/previewed")
@documented(
    "previewedCustomStudyCard",
    "In a preview session, move on past the card shown (nothing is scheduled).",
    _SESSION,
    404,
    body=PreviewedCard,
    description="Idempotent: a card that is not the one shown moves nothing.",
)
@writes
def previewed_custom_study_card() -> Response:
    user_id = current_user_id()
    card_id = parse_body(PreviewedCard).card_id
    session = db()
    custom_study.previewed(
        session, user_id, card_id, now=utcnow(), clock=user_clock(session, user_id)
    )
    study = custom_study.current(session, user_id)
    session.commit()
    return reply(_body(study))
