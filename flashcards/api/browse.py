"""The card browser's API: GET /cards (the web browser's search), a card's history, and one
action on a selection of cards (`srs/card_actions.py`)."""

from __future__ import annotations

from typing import Any

from flask import Response, request
from pydantic import ValidationError
from sqlalchemy.exc import IntegrityError

from ..errors import InvalidInput
from ..http.request_db import db, writes
from ..srs import browse, card_actions
from ..srs.card_history import load_history
from ..storage.retry import retrying
from ..storage.schema import utcnow
from . import bp
from .auth import current_user_id
from .bodies import invalid_input, parse_body
from .models import reply
from .models_browse import (
    BrowsedCardBody,
    CardActionsBody,
    CardActionsReply,
    CardHistoryBody,
    CardPageBody,
    CardSearch,
    HistoryAnswer,
)
from .openapi import Answer, Query, documented


def _query_parameters() -> tuple[Query, ...]:
    # Written once, in the model: each field's schema and description become the document's.
    schema = CardSearch.model_json_schema()
    properties: dict[str, dict[str, Any]] = schema["properties"]
    out = []
    for name, prop in properties.items():
        description = str(prop.pop("description", ""))
        prop.pop("title", None)
        # A query parameter is absent rather than null: its schema is the value's alone.
        kinds = [k for k in prop.pop("anyOf", []) if k.get("type") != "null"]
        if kinds:
            prop = {**kinds[0], **{k: v for k, v in prop.items() if v is not None}}
        out.append(Query(name, prop, description))
    return tuple(out)


def _search() -> CardSearch:
    values: dict[str, str] = {}
    for name, given in request.args.lists():
        if len(given) > 1:
            raise InvalidInput(f"{name} is given more than once", field=name)
        if given[0] != "":
            values[name] = given[0]
    try:
        return CardSearch.model_validate(values)
    except ValidationError as exc:
        raise invalid_input(CardSearch, exc) from None


@bp.get("/cards")
@documented(
    "browseCards",
    "The caller's cards, searched, sorted and paged (50 a page), as the web's card browser.",
    {200: Answer("A page of cards.", CardPageBody)},
    422,
    description="Cards of the decks the caller studies, owns or leads. Every filter narrows "
    "the search; an empty value is no filter. New cards (no schedule) sort last.",
    query=_query_parameters(),
)
def browse_cards() -> Response:
    page = browse.browse(db(), current_user_id(), _search().search(), now=utcnow())
    return reply(
        CardPageBody(
            cards=[BrowsedCardBody.of(c) for c in page.cards],
            total=page.total,
            page=page.page,
            pages=page.pages,
            page_size=browse.PAGE_SIZE,
        )
    )


@bp.get("/cards/<int:card_id>/history")
@documented(
    "getCardHistory",
    "Every answer the caller gave a card, with its interval and memory state.",
    {200: Answer("The card's history.", CardHistoryBody)},
    404,
)
def card_history(card_id: int) -> Response:
    history = load_history(db(), current_user_id(), card_id)
    return reply(
        CardHistoryBody(
            card_id=history.card_id,
            deck=history.deck_slug,
            question=history.question,
            locale=history.locale,
            answers=[HistoryAnswer(**a.__dict__) for a in history.answers],
        )
    )


@bp.post("/cards/actions")
@documented(
    "actOnCards",
    "Suspend, bury, flag, tag, forget, reschedule or move a selection of cards, for the caller "
    "only.",
    {200: Answer("The action, by the id that undoes it.", CardActionsReply)},
    403,
    404,
    409,
    description="One action in one transaction, undone as a whole by POST /reviews/undo. If "
    "any card is one the caller may not see, nothing is done and the answer is 404; due on a "
    "card still new to the caller is 409. A move is between the caller's own decks only: a "
    "deck they cannot see is 404, a shipped or team deck (as source or target) 403.",
    body=CardActionsBody,
)
@writes
def act_on_cards() -> Response:
    user_id = current_user_id()
    body = parse_body(CardActionsBody)
    session = db()
    now = utcnow()

    def change() -> card_actions.ActionResult:
        return card_actions.act(
            session,
            user_id,
            body.card_ids,
            body.action,
            now=now,
            flag=body.flag,
            tag=body.tag,
            due=body.due,
            restore_position=body.restore_position,
            reset_counts=body.reset_counts,
            deck=body.deck,
        )

    # Two first marks of one card at once meet at its primary key; the retry finds the row.
    result = retrying(session, change, retry_on=(IntegrityError,))
    return reply(CardActionsReply(action_id=result.action_id, card_ids=list(result.card_ids)))
