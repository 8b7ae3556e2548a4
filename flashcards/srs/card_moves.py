"""Moving cards between a person's own decks, and putting one back (`card_actions.move` and
its undo, `marks.revert`). No Flask; functions take a session and never commit.

Only a person's own decks, which no one else sees: a shipped or a team's deck is everyone's
in it, and a card leaving it would take their progress along. The card keeps its id, so its
progress, history and marks go with it; the rows that copy its deck (state, log, marks) are
moved with it. Its text stays what the person read: the target deck's default language gets
the card's text in the source's when it has none, and texts in languages the target deck
lacks are dropped (its next edit, a sync, would drop them unseen). A key the target deck has
had is replaced by a new one, and the card goes last in its new deck.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, delete, func, select, update
from sqlalchemy.orm import Session

from ..decks.card_editing import free_key
from ..decks.own_decks import find_own_deck
from ..errors import CardRetired, InvalidInput, NotDeckOwner
from ..storage.models import Card, CardMark, CardText, Deck, DeckText, ReviewLog
from ..storage.schema import utcnow
from .state_rows import rs

_TEXT_FIELDS = ("question", "answer", "explanation", "anki_guid")
_COPIES = (rs, cast(Table, ReviewLog.__table__), cast(Table, CardMark.__table__))


def own_decks(session: Session, user_id: int) -> list[tuple[int, str]]:
    """The person's own decks, where cards may move: (id, slug), by slug."""
    rows = session.execute(
        select(Deck.id, Deck.slug).where(Deck.owner_user_id == user_id).order_by(Deck.slug)
    )
    return [(row.id, row.slug) for row in rows]


def target_deck(session: Session, user_id: int, slug: object) -> Deck:
    """The person's own deck to move cards to: NotFound for one they cannot see (another
    person's), NotDeckOwner for a shipped or a team's deck."""
    if not isinstance(slug, str) or not slug:
        raise InvalidInput("deck names the deck to move the cards to", field="deck")
    return find_own_deck(session, user_id, slug)


def check_sources(session: Session, user_id: int, deck_ids: set[int]) -> None:
    """NotDeckOwner unless every deck is the person's own."""
    owners = session.execute(select(Deck.id, Deck.owner_user_id).where(Deck.id.in_(deck_ids)))
    if any(owner != user_id for _id, owner in owners):
        raise NotDeckOwner("only cards of a deck you made or imported yourself can be moved")


def move_card(
    session: Session, card_id: int, target: Deck, *, now: datetime
) -> dict[str, Any] | None:
    """Move the card to `target`; what `restore` needs to put it back (None: it was there)."""
    card = session.get(Card, card_id)
    assert card is not None  # found visible by the caller
    if card.deck_id == target.id:
        return None
    if card.retired_at is not None:
        raise CardRetired("this card was retired from its deck and cannot be moved")
    source = session.get(Deck, card.deck_id)
    assert source is not None
    texts = {
        t.locale: t for t in session.scalars(select(CardText).where(CardText.card_id == card_id))
    }
    before: dict[str, Any] = {
        "deck_id": card.deck_id,
        "key": card.key,
        "position": card.position,
        "removed": {},
        "added": [],
    }
    languages = set(session.scalars(select(DeckText.locale).where(DeckText.deck_id == target.id)))
    if texts and target.default_locale not in texts:
        shown = texts.get(source.default_locale) or next(iter(texts.values()))
        # Not its Anki guid: that stays with the text it came with, one note per guid.
        session.add(
            CardText(
                card_id=card_id,
                locale=target.default_locale,
                question=shown.question,
                answer=shown.answer,
                explanation=shown.explanation,
                updated_at=now,
            )
        )
        before["added"].append(target.default_locale)
    for locale, text in texts.items():
        if locale not in languages:
            before["removed"][locale] = {f: getattr(text, f) for f in _TEXT_FIELDS}
            session.delete(text)
    key = free_key(session, target, card.key)
    _place(session, card, target, key, _last_position(session, target.id) + 1, now)
    source.updated_at = now
    return before


def restore(session: Session, card_id: int, before: dict[str, Any]) -> None:
    """Put a moved card back in its deck (its key again, unless a card took it since)."""
    card = session.get(Card, card_id)
    assert card is not None  # the action row goes with its card
    deck = session.get(Deck, before["deck_id"])
    assert deck is not None  # deleting the deck deletes the card, and the action row
    session.execute(
        delete(CardText).where(CardText.card_id == card_id, CardText.locale.in_(before["added"]))
    )
    for locale, values in before["removed"].items():
        session.add(CardText(card_id=card_id, locale=locale, **values))
    # Moved out of the deck, the card has not its key there: another card may have.
    key = free_key(session, deck, before["key"])
    now = utcnow()
    moved_from = session.get(Deck, card.deck_id)
    assert moved_from is not None
    moved_from.updated_at = now
    _place(session, card, deck, key, before["position"], now)


def _place(
    session: Session, card: Card, deck: Deck, key: str, position: int, now: datetime
) -> None:
    # Both times change, so that what keeps copies of a deck (an Anki device's collection,
    # whose sync compares them) sees the card leave one deck and arrive in the other.
    card.deck_id, card.key, card.position, card.updated_at = deck.id, key, position, now
    deck.updated_at = now
    session.flush()
    # The rows that copy a card's deck, for the indexes of a deck's queue, counts and history.
    for table in _COPIES:
        session.execute(update(table).where(table.c.card_id == card.id).values(deck_id=deck.id))


def _last_position(session: Session, deck_id: int) -> int:
    return session.scalar(select(func.max(Card.position)).where(Card.deck_id == deck_id)) or 0
