"""The Anki ids a sync gives our decks and cards, and which of ours an id a device sends
stands for. No Flask.

A sync gives each deck and card out in one language, under ids derived from ours (decks
`deck_id_base` + 1, cards `export.note_id` in language slot 0), except a card made from a
note a device added: it keeps that note's and card's ids (`Card.anki_note_id`,
`anki_card_id`), so the device's note stays the same note.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import ColumnElement, select
from sqlalchemy.orm import Session

from ..anki import schema
from ..anki.export import LOCALE_SLOTS
from ..storage.models import Card, Subscription
from ..storage.schema import MAX_ID

BATCH = 500  # ids per IN list: well under every database's limit on bound values
MANY = 5 * BATCH  # more ids than this: the person's mapped cards read whole instead
# Deck ids: room for a deck's parent and one subdeck per language under each of our decks.
DECK_ID_STRIDE = 128


def deck_id_base(deck_id: int) -> int:
    return schema.ID_BASE + deck_id * DECK_ID_STRIDE


def deck_of(anki_deck_id: int) -> int | None:
    """Our deck of an Anki deck id a sync gave out (each deck in one language: base + 1)."""
    deck_id, offset = divmod(anki_deck_id - schema.ID_BASE, DECK_ID_STRIDE)
    return deck_id if 0 < deck_id <= MAX_ID and offset == 1 else None


def _batches(ids: list[int]) -> Iterable[list[int]]:
    return (ids[i : i + BATCH] for i in range(0, len(ids), BATCH))


def cards_of(
    session: Session, user_id: int | None, anki_ids: Iterable[int], *, notes: bool
) -> dict[int, int]:
    """Our card of each Anki note id (`notes`) or card id the sync gave out, if the card
    exists in a deck the person (`user_id`) subscribes to; ids of anything else (a note the
    device made and we did not take, a card not theirs) are left out. `user_id` None: any
    person's card (which ids are in use)."""
    wanted = set(anki_ids)
    column = Card.anki_note_id if notes else Card.anki_card_id
    # A note of the device's own note type is kept as it sent it (`adopted`): its cards are
    # ours, the note is not.
    of_kind = (Card.anki_ord.is_(None),) if notes else ()
    found: dict[int, int] = {}
    if user_id is not None and len(wanted) > MANY:
        # An upload's hundred thousand answers: the person's few mapped cards in one read.
        rows = session.execute(
            select(column, Card.id).where(column.is_not(None), *of_kind, *_theirs(user_id))
        )
        found.update({anki_id: card_id for anki_id, card_id in rows if anki_id in wanted})
    else:
        for part in _batches(sorted(wanted)):
            query = select(column, Card.id).where(column.in_(part), *of_kind, *_theirs(user_id))
            found.update({a: card_id for a, card_id in session.execute(query) if a is not None})
    derived: dict[int, int] = {}
    for anki_id in wanted - found.keys():
        card_id, slot = divmod(anki_id - schema.ID_BASE, LOCALE_SLOTS)
        # Ids a device made (times in ms) can fall on a slot too, past any card id here.
        if 0 < card_id <= MAX_ID and slot == 0:
            derived[card_id] = anki_id
    for part in _batches(sorted(derived)):
        existing = select(Card.id).where(Card.id.in_(part), *_theirs(user_id))
        for card_id in session.scalars(existing):
            found[derived[card_id]] = card_id
    return found


def _theirs(user_id: int | None) -> tuple[ColumnElement[bool], ...]:
    if user_id is None:
        return ()
    return (Card.deck_id.in_(select(Subscription.deck_id).where(Subscription.user_id == user_id)),)
