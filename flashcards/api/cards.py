"""The card resource: one card as the caller sees it, and changes to their own state of it."""

from __future__ import annotations

import dataclasses
import uuid

from flask import Response
from sqlalchemy.exc import IntegrityError

from ..errors import InvalidInput
from ..http.request_db import db, writes
from ..srs import answer_effects, card_actions, cards
from ..storage.retry import retrying
from ..storage.schema import utcnow
from . import bp
from .auth import current_user_id
from .bodies import parse_body
from .models import reply
from .models_cards import (
    CardDetail,
    CardPatch,
    CardText,
    CardView,
    StudyOptionsBody,
    StudyOptionsPatch,
)
from .models_study import CardStateBody
from .openapi import Answer, documented


def card_view(card: cards.SeenCard) -> CardView:
    shown = card.shown
    return CardView(
        card=CardDetail(
            id=card.id,
            deck=card.deck_slug,
            key=card.key,
            locale=card.locale,
            retired=card.retired,
            front=shown.front,
            back=shown.back,
            explanation=shown.explanation,
            translations={
                locale: CardText(front=t.front, back=t.back, explanation=t.explanation)
                for locale, t in card.texts.items()
            },
        ),
        state=None if card.state is None else CardStateBody.of(card.state),
        suspended=card.marks.suspended,
        buried_until=card.marks.buried_until,
        flag=card.marks.flag,
        leech=card.marks.leech,
        tags=card.tags,
    )


@bp.get("/cards/<int:card_id>")
@documented(
    "getCard",
    "A card in every language, the caller's state on it and what they set on it.",
    {200: Answer("The card.", CardView)},
)
def get_card(card_id: int) -> Response:
    return reply(card_view(cards.seen_card(db(), current_user_id(), card_id)))


@bp.patch("/cards/<int:card_id>")
@documented(
    "changeCard",
    "Suspend, bury, flag, forget or reschedule a card, for the caller only.",
    {200: Answer("The card as changed.", CardView)},
    404,
    409,
    description="The changes given are one action, undone as a whole by POST /reviews/undo "
    "(latest first, as answers are). A card the caller may not see is a 404.",
    body=CardPatch,
)
@writes
def change_card(card_id: int) -> Response:
    user_id = current_user_id()
    body = parse_body(CardPatch)
    given = body.model_fields_set
    if not given:
        raise InvalidInput("give at least one change: " + ", ".join(CardPatch.model_fields))
    for name in ("suspended", "flag", "forget", "due", "restore_position", "reset_counts"):
        if name in given and getattr(body, name) is None:
            raise InvalidInput(CardPatch.messages[name], field=name)
    for name in ("restore_position", "reset_counts"):
        if name in given and not body.forget:
            raise InvalidInput(CardPatch.messages[name], field=name)
    session = db()
    now = utcnow()
    cards.seen_card(session, user_id, card_id)  # 404 before anything else is said

    def change() -> None:
        # One request, one action: undone as a whole.
        one = str(uuid.uuid4())
        selection = [card_id]
        if body.forget:
            card_actions.forget(
                session,
                user_id,
                selection,
                now=now,
                restore_position=bool(body.restore_position),
                reset_counts=bool(body.reset_counts),
                action_id=one,
            )
        if body.due is not None:
            days = card_actions.parse_due_days(body.due)
            card_actions.set_due(session, user_id, selection, days, now=now, action_id=one)
        if body.suspended is not None:
            card_actions.suspend(
                session, user_id, selection, on=body.suspended, now=now, action_id=one
            )
        if "buried_until" in given:
            if body.buried_until is None:
                card_actions.unbury(session, user_id, selection, now=now, action_id=one)
            else:
                card_actions.bury(
                    session, user_id, selection, until=body.buried_until, now=now, action_id=one
                )
        if body.flag is not None:
            card_actions.set_flag(session, user_id, selection, body.flag, now=now, action_id=one)

    # Two first marks of one card at once meet at its primary key; the retry finds the row.
    retrying(session, change, retry_on=(IntegrityError,))
    return reply(card_view(cards.seen_card(session, user_id, card_id)))


def _options(options: answer_effects.Options) -> StudyOptionsBody:
    return StudyOptionsBody(**dataclasses.asdict(options))


@bp.get("/study-options")
@documented(
    "getStudyOptions",
    "The caller's sibling burying and leech options.",
    {200: Answer("The options.", StudyOptionsBody)},
)
def get_study_options() -> Response:
    return reply(_options(answer_effects.options(db(), current_user_id())))


@bp.patch("/study-options")
@documented(
    "changeStudyOptions",
    "Change some of the caller's sibling burying and leech options.",
    {200: Answer("The options as changed.", StudyOptionsBody)},
    body=StudyOptionsPatch,
)
@writes
def change_study_options() -> Response:
    user_id = current_user_id()
    body = parse_body(StudyOptionsPatch)
    values = {name: getattr(body, name) for name in body.model_fields_set}
    for name, value in values.items():
        if value is None:
            raise InvalidInput(f"{name} cannot be null", field=name)
    session = db()
    options = retrying(
        session,
        lambda: answer_effects.set_options(session, user_id, **values),
        retry_on=(IntegrityError,),
    )
    return reply(_options(options))
