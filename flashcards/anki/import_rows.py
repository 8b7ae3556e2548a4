"""The rows an import writes into a new deck, its progress, and what it reads of a deck it
updates."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from ..storage.models import Card, CardMark, CardText, Deck, DeckText, ReviewLog, ReviewState
from .planning import PlannedCard
from .scheduling_in import LOG_COLUMNS, STATE_COLUMNS, Answer
from .tables import insert_rows, table

REVIEW_ID_NAMESPACE = uuid.UUID("4b9e5f0e-6a36-4f8e-9a55-2d8f3e0c1a7b")


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


def review_uuids(user_id: int, deck_id: int) -> Callable[[int], str]:
    """An answer's review id, from its revlog id: deterministic, and the user and deck in it
    keep two imports from colliding. It is `uuid.uuid5(REVIEW_ID_NAMESPACE,
    "user:deck:revlog")`, in a third of uuid5's time (a large package has 100,000 answers):
    the namespace and the name's common start are hashed once, and the version and variant
    bits set as `uuid.UUID(version=5)` sets them."""
    start = hashlib.sha1(REVIEW_ID_NAMESPACE.bytes + f"{user_id}:{deck_id}:".encode())

    def of(revlog_id: int) -> str:
        digest = start.copy()
        digest.update(str(revlog_id).encode())
        raw = bytearray(digest.digest()[:16])
        raw[6] = (raw[6] & 0x0F) | 0x50
        raw[8] = (raw[8] & 0x3F) | 0x80
        h = raw.hex()
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    return of


def write_progress(
    session: Session,
    user_id: int,
    deck_id: int,
    card_ids: list[int | None],
    progress_of: dict[int, tuple[dict[str, Any], list[Answer]]],
) -> int:
    """The review states and logs of the planned cards in `progress_of` (all with a card);
    the number of logs written."""
    states: list[tuple[Any, ...]] = []
    logs: list[tuple[Any, ...]] = []
    review_id = review_uuids(user_id, deck_id)
    for index, (state, answers) in progress_of.items():
        card_id = card_ids[index]
        states.append((user_id, card_id, deck_id, *(state[c] for c in STATE_COLUMNS)))
        logs.extend((review_id(a.revlog_id), user_id, card_id, deck_id, *a[1:]) for a in answers)
    if states:
        insert_rows(session, ReviewState, ("user_id", "card_id", "deck_id", *STATE_COLUMNS), states)
    if logs:
        insert_rows(
            session, ReviewLog, ("review_id", "user_id", "card_id", "deck_id", *LOG_COLUMNS), logs
        )
    return len(logs)


def already_logged(
    session: Session,
    user_id: int,
    deck_id: int,
    progress_of: dict[int, tuple[dict[str, Any], list[Answer]]],
) -> set[int]:
    """The planned cards (by index) with an answer the deck's review log holds already."""
    review_id = review_uuids(user_id, deck_id)
    by_review = {
        review_id(a.revlog_id): index
        for index, (_, answers) in progress_of.items()
        for a in answers
    }
    ids = list(by_review)
    found: set[int] = set()
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        known = session.scalars(select(ReviewLog.review_id).where(ReviewLog.review_id.in_(chunk)))
        found.update(by_review[review_id] for review_id in known)
    return found
