"""A card as one person sees it: its texts in every language, the language they study it in,
their state on it and what they set on it (suspended, buried, flag, leech, tags). No Flask;
the API's card resource renders it."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session, aliased

from ..decks.access import visible_decks
from ..errors import CardNotFound
from ..storage.models import (
    Card,
    CardMark,
    CardText,
    Deck,
    ReviewState,
    Subscription,
    TeamMember,
)
from ..storage.schema import MAX_ID
from ..teams.roles import LEADS
from .marks import Marks, card_marks
from .scheduling import CardState
from .state_rows import card_state


@dataclass(frozen=True)
class Text:
    front: str
    back: str
    explanation: str


@dataclass(frozen=True)
class SeenCard:
    id: int
    deck_slug: str
    key: str
    locale: str  # the one the person studies it in, else the deck's default
    retired: bool
    texts: dict[str, Text]  # by locale
    state: CardState | None  # None: new to them
    marks: Marks
    tags: list[str]  # the card's own (from its Anki note), the person's, and "leech"

    @property
    def shown(self) -> Text:
        return self.texts.get(self.locale, Text("", "", ""))


def seen_card(session: Session, user_id: int, card_id: int) -> SeenCard:
    """The card, if its deck is one the person may see; CardNotFound otherwise (another
    person's own deck answers as no card at all)."""
    if card_id > MAX_ID:  # larger ids exist nowhere, and PostgreSQL would refuse them
        raise CardNotFound(f"no card {card_id}")
    row = session.execute(
        select(
            Card.id,
            Card.key,
            Card.retired_at,
            Card.tags,
            Deck.slug,
            Deck.default_locale,
            Subscription.locale,
        )
        .join(Deck, Deck.id == Card.deck_id)
        .outerjoin(
            Subscription,
            (Subscription.deck_id == Deck.id) & (Subscription.user_id == user_id),
        )
        .where(Card.id == card_id, visible_decks(user_id))
    ).first()
    if row is None:
        raise CardNotFound(f"no card {card_id}")
    texts = {
        t.locale: Text(t.question, t.answer, t.explanation)
        for t in session.scalars(select(CardText).where(CardText.card_id == card_id))
    }
    marks = card_marks(session, user_id, card_id)
    return SeenCard(
        id=row.id,
        deck_slug=row.slug,
        key=row.key,
        locale=row.locale if row.locale in texts else row.default_locale,
        retired=row.retired_at is not None,
        texts=texts,
        state=card_state(session, user_id, card_id),
        marks=marks,
        tags=marks.all_tags(row.tags or ()),
    )


@dataclass(frozen=True)
class EditPlace:
    """Where a card's text is edited: its own deck's card page (team_id None), or its
    team deck's, whose leads edit it card by card."""

    team_id: int | None
    slug: str
    key: str


def edit_place(session: Session, user_id: int, card_id: int) -> EditPlace | None:
    """Where the person may edit the card's text: a deck of their own, or a team deck they
    lead (owner or manager); None when they may not (a shipped deck, a team's they study)."""
    row = session.execute(
        select(Deck.owner_user_id, Deck.owner_team_id, Deck.slug, Card.key, Card.retired_at)
        .join(Card, Card.deck_id == Deck.id)
        .where(Card.id == card_id)
    ).first()
    if row is None or row.retired_at is not None:
        return None
    if not may_edit_deck(session, user_id, row.owner_user_id, row.owner_team_id):
        return None
    return EditPlace(row.owner_team_id, row.slug, row.key)


def may_edit_deck(
    session: Session, user_id: int, owner_user_id: int | None, owner_team_id: int | None
) -> bool:
    """Whether the person may edit the cards of a deck owned so: their own, or a team's they
    lead."""
    if owner_user_id == user_id:
        return True
    if owner_team_id is None:
        return False
    lead = session.scalar(
        select(TeamMember.user_id).where(
            TeamMember.team_id == owner_team_id,
            TeamMember.user_id == user_id,
            TeamMember.role.in_(LEADS),
        )
    )
    return lead is not None


@dataclass(frozen=True)
class LeechCard:
    id: int
    deck_slug: str
    question: str
    locale: str  # the question's
    lapses: int
    suspended: bool


def leeches(session: Session, user_id: int) -> list[LeechCard]:
    """The person's leeches on decks they still see, the most lapsed first: the question in
    the language they study the deck in, else in the deck's."""
    own = aliased(CardText)
    default = aliased(CardText)
    rows = session.execute(
        select(
            Card.id,
            Deck.slug,
            CardMark.suspended,
            ReviewState.lapses,
            own.locale.label("own_locale"),
            own.question.label("own_question"),
            Deck.default_locale,
            default.question.label("default_question"),
        )
        .select_from(CardMark)
        .join(Card, Card.id == CardMark.card_id)
        .join(Deck, Deck.id == Card.deck_id)
        .outerjoin(
            ReviewState,
            (ReviewState.user_id == user_id) & (ReviewState.card_id == Card.id),
        )
        .outerjoin(
            Subscription,
            (Subscription.user_id == user_id) & (Subscription.deck_id == Deck.id),
        )
        .outerjoin(own, (own.card_id == Card.id) & (own.locale == Subscription.locale))
        .outerjoin(default, (default.card_id == Card.id) & (default.locale == Deck.default_locale))
        .where(CardMark.user_id == user_id, CardMark.leech.is_(True), visible_decks(user_id))
        .order_by(ReviewState.lapses.desc(), Card.id)
    )
    return [
        LeechCard(
            id=r.id,
            deck_slug=r.slug,
            question=r.own_question if r.own_locale else r.default_question or "",
            locale=r.own_locale or r.default_locale,
            lapses=r.lapses or 0,
            suspended=r.suspended,
        )
        for r in rows
    ]
