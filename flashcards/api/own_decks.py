"""JSON API for a person's own decks: make one, add, edit and retire its cards. Progress on
an edited card is kept (`decks/card_editing.py`). Another person's deck is not found (404);
a shipped or a team's deck is not the caller's to edit here (403)."""

from __future__ import annotations

from flask import Response
from sqlalchemy.exc import IntegrityError

from ..anki_sync import note_edits
from ..decks import own_decks
from ..decks.card_pages import CardRow, card_texts
from ..errors import NotFound
from ..http.request_db import db, writes
from ..srs import subscriptions
from ..storage.models import Deck, DeckText
from ..storage.retry import retrying
from ..storage.schema import utcnow
from . import bp
from .auth import current_user_id
from .bodies import parse_body
from .models import reply
from .models_own_decks import (
    AddedCard,
    CardPatch,
    ClozeCards,
    ClozeEdit,
    DeckPatch,
    NewDeck,
    OwnCard,
    OwnDeck,
)
from .models_teams import NewCard
from .openapi import Answer, documented

TAGS = ("own decks",)


def _card(slug: str, user_id: int, key: str) -> CardRow:
    session = db()
    deck = own_decks.find_own_deck(session, user_id, slug)
    row = card_texts(session, deck.id, key)
    if row is None:  # the sync just wrote it, in this transaction
        raise NotFound(f"no card '{key}' in this deck")
    return row


@bp.post("/decks")
@documented(
    "createDeck",
    "Make a deck of the caller's own, empty, which they study at once. A title they already "
    'have is a 409; "Parent::Child" makes a subdeck, as in Anki.',
    {201: Answer("The new deck.", OwnDeck)},
    409,
    body=NewDeck,
    tags=TAGS,
)
@writes
def create_deck() -> Response:
    user_id = current_user_id()
    body = parse_body(NewDeck)
    session = db()
    deck = retrying(
        session,
        lambda: own_decks.create_own_deck(
            session, user_id, title=body.title, locales=list(body.locales), now=utcnow()
        ),
        retry_on=(IntegrityError,),  # two decks with one title took the same slug
        attempts=3,
    )
    return reply(_own_deck(deck), 201)


@bp.patch("/decks/<slug>")
@documented(
    "renameDeck",
    "Rename the caller's own deck in one of its languages; its slug stays, and its own "
    'subdecks move with it ("A::B" becomes "C::B" when A becomes C). The caller\'s Anki '
    "devices get the new names at their next sync. A title they already have is a 409.",
    {200: Answer("The deck, its title in its default language.", OwnDeck)},
    403,
    409,
    body=DeckPatch,
    tags=TAGS,
)
@writes
def rename_deck(slug: str) -> Response:
    body = parse_body(DeckPatch)
    session = db()
    deck = own_decks.rename_own_deck(
        session, current_user_id(), slug, title=body.title, locale=body.locale
    )
    session.commit()
    return reply(_own_deck(deck))


def _own_deck(deck: Deck) -> OwnDeck:
    session = db()
    locales = subscriptions.deck_locales(session, deck.id)
    title = session.get(DeckText, (deck.id, deck.default_locale))
    return OwnDeck.of(deck, title.title if title else deck.slug, locales)


@bp.post("/decks/<slug>/cards")
@documented(
    "addCard",
    "Add a card to the caller's own deck, in its default language; it comes up as new. A "
    "front written with Anki's Cloze deletions ({{c1::Paris}}) makes a card for each deletion "
    "number, as an Anki Cloze note does: that number hidden as [...] (or its hint), the whole "
    "text as the back, and the back sent, if any, with the explanation.",
    {201: Answer("The new card (the first, of a Cloze text's).", AddedCard)},
    403,
    body=NewCard,
    tags=TAGS,
)
@writes
def add_card(slug: str) -> Response:
    user_id = current_user_id()
    body = parse_body(NewCard)
    session = db()
    keys = retrying(
        session,
        lambda: note_edits.add_card(
            session,
            user_id,
            slug,
            question=body.front,
            answer=body.back,
            explanation=body.explanation,
            tags=list(body.tags),
            now=utcnow(),
        ),
        retry_on=(IntegrityError,),  # two cards added at once picked the same new key
        attempts=3,
    )
    return reply(AddedCard.added(_card(slug, user_id, keys[0]), keys), 201)


@bp.patch("/decks/<slug>/cards/<key>")
@documented(
    "editCard",
    "Change a card of the caller's own deck, in one language, and its tags; progress is "
    "kept. A retired card is not edited (409). A card made from a note of an Anki device's own "
    "note type changes the note's fields its sides show, which reach every device; one whose "
    "sides are not two fields (a Cloze deletion) is edited in Anki (409).",
    {200: Answer("The card.", OwnCard)},
    403,
    409,
    body=CardPatch,
    tags=TAGS,
)
@writes
def edit_card(slug: str, key: str) -> Response:
    user_id = current_user_id()
    body = parse_body(CardPatch)
    session = db()
    note_edits.edit_card(
        session,
        user_id,
        slug,
        key,
        locale=body.locale,
        question=body.front,
        answer=body.back,
        explanation=body.explanation,
        tags=None if body.tags is None else list(body.tags),
        now=utcnow(),
    )
    card = _card(slug, user_id, key)
    session.commit()
    return reply(OwnCard.of(card))


@bp.get("/decks/<slug>/cards/<key>/cloze")
@documented(
    "getClozeText",
    "The Cloze text a card of the caller's own deck was made from, with its sibling cards; "
    "404 for a card of no Cloze text (or one whose cards were edited one by one).",
    {200: Answer("The text and its cards.", ClozeCards)},
    tags=TAGS,
)
def get_cloze_text(slug: str, key: str) -> Response:
    return reply(ClozeCards.of(own_decks.cloze_text(db(), current_user_id(), slug, key)))


@bp.put("/decks/<slug>/cards/<key>/cloze")
@documented(
    "editClozeText",
    "Change the Cloze text a card of the caller's own deck was made from, with its sibling "
    "cards, as Anki edits a Cloze note: each number's card keeps its progress, a new number "
    "adds a card, a number taken out retires its card. 404 for a card of no Cloze text (or one "
    "whose cards were edited one by one); 422 for a text without a deletion.",
    {200: Answer("The text and its cards.", ClozeCards)},
    403,
    body=ClozeEdit,
    tags=TAGS,
)
@writes
def edit_cloze(slug: str, key: str) -> Response:
    user_id = current_user_id()
    body = parse_body(ClozeEdit)
    session = db()
    saved = own_decks.edit_cloze(
        session, user_id, slug, key, text=body.text, extra=body.extra, tags=body.tags,
        now=utcnow(),
    )  # fmt: skip
    found = own_decks.cloze_text(session, user_id, slug, saved.keys[0])  # as stored
    session.commit()
    return reply(ClozeCards.of(found, saved))


@bp.delete("/decks/<slug>/cards/<key>")
@documented(
    "retireCard",
    "Retire a card of the caller's own deck: it no longer comes up; its history is kept.",
    {204: Answer("Retired.")},
    403,
    tags=TAGS,
)
@writes
def retire_card(slug: str, key: str) -> Response:
    user_id = current_user_id()
    session = db()
    own_decks.retire_card(session, user_id, slug, key, now=utcnow())
    session.commit()
    return Response(status=204)
