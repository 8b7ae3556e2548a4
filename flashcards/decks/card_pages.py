"""A deck's live cards a page at a time, optionally only those whose text matches a query.

The deck and team deck pages show a page of cards, not the whole deck: a 5,000-card deck
would otherwise be megabytes of HTML. The query matches the question, answer or explanation
in any of the deck's languages, so a lead finds a card by its Korean text on an English page.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

from sqlalchemy import ColumnElement, func, or_, select
from sqlalchemy.orm import Session

from ..storage.models import Card, CardText

PAGE_SIZE = 50
MAX_QUERY = 200  # characters of a search: longer ones are cut, not refused


@dataclass(frozen=True)
class CardTexts:
    question: str
    answer: str
    explanation: str


@dataclass(frozen=True)
class CardRow:
    key: str
    number: int  # the card's place in the deck, from 1, as the deck's order gives it
    texts: dict[str, CardTexts] = field(default_factory=dict)  # by locale
    tags: tuple[str, ...] = ()  # the card's own (an imported note's, or set on its page)
    # Made from a note of an Anki device's own note type: its text is the note's, edited
    # in Anki (`anki_sync.adopted`).
    from_anki_note: bool = False


@dataclass(frozen=True)
class CardPage:
    rows: list[CardRow]
    total: int  # live cards matching the query (all of them without one)
    page: int  # from 1, within 1..pages
    pages: int
    query: str

    @property
    def first(self) -> int:
        """The place of the page's first row among the matches, from 1 (0 without one)."""
        return (self.page - 1) * PAGE_SIZE + 1 if self.rows else 0

    @property
    def last(self) -> int:
        return self.first + len(self.rows) - 1 if self.rows else 0


def clean_query(raw: str | None) -> str:
    """A search as typed, NFC (as texts are compared), trimmed, and cut to MAX_QUERY."""
    return unicodedata.normalize("NFC", (raw or "").replace("\x00", "")).strip()[:MAX_QUERY]


def text_matches(query: str) -> ColumnElement[bool]:
    # The query is lowered here, where Python knows every script's case ("ESPAÑOL"); SQLite's
    # lower() knows only ASCII's, so there a capital "Ñ" in a card's text stays one.
    # autoescape: "%" and "_" in a search are the characters, not wildcards.
    lowered = query.lower()
    return or_(
        *(
            func.lower(column).contains(lowered, autoescape=True)
            for column in (CardText.question, CardText.answer, CardText.explanation)
        )
    )


def card_page(session: Session, deck_id: int, *, query: str = "", page: int = 1) -> CardPage:
    """Page `page` (clamped to the pages there are) of the deck's live cards in deck order,
    each with its text in every language it has."""
    query = clean_query(query)
    live = select(Card.id).where(Card.deck_id == deck_id, Card.retired_at.is_(None))
    if query:
        live = live.where(
            Card.id.in_(
                select(CardText.card_id)
                .join(Card)
                .where(Card.deck_id == deck_id, text_matches(query))
            )
        )
    total = session.scalar(select(func.count()).select_from(live.subquery())) or 0
    pages = max(1, -(-total // PAGE_SIZE))
    page = min(max(1, page), pages)
    offset = (page - 1) * PAGE_SIZE
    order = (Card.position, Card.id)
    if not query:
        found = session.execute(
            select(Card.id, Card.key)
            .where(Card.deck_id == deck_id, Card.retired_at.is_(None))
            .order_by(*order)
            .limit(PAGE_SIZE)
            .offset(offset)
        ).all()
        chosen = [(card_id, key, offset + i + 1) for i, (card_id, key) in enumerate(found)]
    else:
        # A card's number is its rank among all live cards, whatever the query matched.
        ranked = (
            select(Card.id, Card.key, func.row_number().over(order_by=order).label("number"))
            .where(Card.deck_id == deck_id, Card.retired_at.is_(None))
            .subquery()
        )
        chosen = [
            (card_id, key, number)
            for card_id, key, number in session.execute(
                select(ranked.c.id, ranked.c.key, ranked.c.number)
                .where(ranked.c.id.in_(live))
                .order_by(ranked.c.number)
                .limit(PAGE_SIZE)
                .offset(offset)
            )
        ]
    rows = {card_id: CardRow(key, number) for card_id, key, number in chosen}
    if rows:
        for text in session.scalars(select(CardText).where(CardText.card_id.in_(rows))):
            rows[text.card_id].texts[text.locale] = CardTexts(
                text.question, text.answer, text.explanation
            )
    return CardPage(list(rows.values()), total, page, pages, query)


def card_texts(session: Session, deck_id: int, key: str) -> CardRow | None:
    """One live card of the deck with its text in every language, or None."""
    page_rows = session.execute(
        select(Card.id, Card.key, Card.position, Card.tags, Card.anki_ord).where(
            Card.deck_id == deck_id, Card.key == key, Card.retired_at.is_(None)
        )
    ).first()
    if page_rows is None:
        return None
    card_id = page_rows.id
    number = (
        session.scalar(
            select(func.count()).where(
                Card.deck_id == deck_id,
                Card.retired_at.is_(None),
                or_(
                    Card.position < page_rows.position,
                    (Card.position == page_rows.position) & (Card.id <= card_id),
                ),
            )
        )
        or 1
    )
    row = CardRow(
        key,
        number,
        tags=tuple(page_rows.tags or ()),
        from_anki_note=page_rows.anki_ord is not None,
    )
    for text in session.scalars(select(CardText).where(CardText.card_id == card_id)):
        row.texts[text.locale] = CardTexts(text.question, text.answer, text.explanation)
    return row
