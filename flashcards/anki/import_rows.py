"""The rows an import writes into a new deck, and what it reads of a deck it updates."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from ..storage.models import Card, CardMark, CardText, Deck, DeckText, ReviewState
from .planning import PlannedCard
from .tables import insert_rows, table


def new_deck_rows(
    session: Session,
    deck: Deck,
    planned: list[PlannedCard],
    title: str,
    now: datetime,
    tags_of: Callable[[PlannedCard], list[str]],
    note_key_of: Callable[[PlannedCard], str | None],
) -> list[int]:
    """A new deck's titles, cards and texts; the card ids, in the planned cards' order."""
    locales = sorted({loc for p in planned for loc in p.texts})
    session.add_all(DeckText(deck_id=deck.id, locale=loc, title=title) for loc in locales)
    cards = table(Card)
    card_ids = list(
        session.scalars(
            insert(cards).returning(cards.c.id, sort_by_parameter_order=True),
            [
                {
                    "deck_id": deck.id,
                    "key": p.key,
                    "position": i,
                    "tags": tags_of(p),
                    "note_key": note_key_of(p),
                    "created_at": now,
                    "updated_at": now,
                }
                for i, p in enumerate(planned)
            ],
        )
    )
    insert_rows(
        session,
        CardText,
        ("card_id", "locale", "question", "answer", "explanation", "updated_at", "anki_guid"),
        (
            (card_id, loc, q, a, e, now, p.guids.get(loc))
            for card_id, p in zip(card_ids, planned, strict=True)
            for loc, (q, a, e) in p.texts.items()
        ),
    )
    return card_ids


def title_of(session: Session, deck: Deck) -> str:
    title = session.scalar(
        select(DeckText.title).where(
            DeckText.deck_id == deck.id, DeckText.locale == deck.default_locale
        )
    )
    return title or deck.slug


def cards_with(
    session: Session, model: type[ReviewState] | type[CardMark], user_id: int, deck_id: int
) -> set[int]:
    """The deck's cards the person has rows of `model` on: progress, or marks (suspended,
    flagged...)."""
    rows = table(model)
    return set(
        session.scalars(
            select(rows.c.card_id).where(rows.c.user_id == user_id, rows.c.deck_id == deck_id)
        )
    )
