"""Decks a team owns: made from a quiz text (the seed format) or a CSV, edited card by card.

Every change goes through `sync_deck`, as `decks sync` does, so members keep their progress:
cards are matched by key, a removed card is retired (never deleted), a new one is new.
Only the team's owner and managers change them; members see and study them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from ..decks import card_editing
from ..decks.card_editing import current_source, unique_slug
from ..decks.card_pages import CardPage, CardRow, card_page, card_texts
from ..decks.deckfile import DeckSource
from ..decks.sync import SyncReport, sync_deck
from ..errors import (
    InvalidInput,
    NotFound,
)
from ..storage.models import Card, Deck, DeckText
from .deck_uploads import check_card_count, parse_upload
from .roles import LEADS, membership, team_deck


class UnknownCardKey(InvalidInput):
    """A translation names a card the deck's own language does not have (in a CSV without
    the deck's keys, its rows get new ones)."""

    def __init__(self, key: str, locale: str, default_locale: str) -> None:
        super().__init__(
            f"card '{key}' ({locale}) is not in the default locale '{default_locale}'",
            field="content",
        )
        self.key = key


def _validated(source: DeckSource) -> DeckSource:
    default = source.locales.get(source.default_locale)
    if default is None:
        raise InvalidInput(
            f"no cards in the default locale '{source.default_locale}'", field="locale"
        )
    check_card_count(len(default.cards))
    keys = {c.key for c in default.cards}
    for loc in source.locales.values():
        for card in loc.cards:
            if card.key not in keys:
                raise UnknownCardKey(card.key, loc.locale, source.default_locale)
    return source


def create_team_deck(
    session: Session,
    team_id: int,
    actor_id: int,
    *,
    fmt: str,
    content: str,
    locale: str,
    title: str | None,
    now: datetime,
) -> tuple[Deck, SyncReport]:
    """A new private deck of the team; `locale` is its default language."""
    membership(session, team_id, actor_id, *LEADS)
    locales = parse_upload(fmt, content, locale, title)
    slug = unique_slug(session, f"team{team_id}-", locales[0].title)
    source = _validated(DeckSource(slug, locale, {loc.locale: loc for loc in locales}))
    report = sync_deck(session, source, now=now, owner_team_id=team_id)
    deck = team_deck(session, team_id, slug)
    card_editing.keep_notes(session, deck, source.locales[locale].cards)
    return deck, report


def upload_locale(
    session: Session,
    team_id: int,
    actor_id: int,
    slug: str,
    *,
    fmt: str,
    content: str,
    locale: str,
    title: str | None,
    now: datetime,
) -> SyncReport:
    """Replace one language of a team deck (or add one). Replacing the default language may
    add and retire cards; a quiz in another language pairs its questions with the default's
    cards in order."""
    membership(session, team_id, actor_id, *LEADS)
    deck = team_deck(session, team_id, slug)
    source = current_source(session, deck)
    translation = locale != deck.default_locale
    uploaded = parse_upload(fmt, content, locale, title, source.keys, exact=translation)
    locales = dict(source.locales)
    for loc in uploaded:
        locales[loc.locale] = loc
    if not translation:
        # Cards the new default no longer has are retired, in every language: the kept
        # translations lose them too instead of naming cards the deck no longer has.
        kept = {card.key for card in locales[locale].cards}
        for other in source.locales.keys() - {loc.locale for loc in uploaded}:
            cards = tuple(c for c in locales[other].cards if c.key in kept)
            locales[other] = replace(locales[other], cards=cards)
    report = sync_deck(
        session, _validated(replace(source, locales=locales)), now=now, owner_team_id=team_id
    )
    if not translation:
        card_editing.keep_notes(session, deck, locales[locale].cards)
    return report


def set_card(
    session: Session,
    team_id: int,
    actor_id: int,
    slug: str,
    key: str,
    *,
    locale: str,
    question: str,
    answer: str,
    explanation: str,
    tags: list[str] | None = None,
    now: datetime,
) -> SyncReport:
    """Edit one card's text in one language, or add a card (in the default language); with
    `tags`, the card's tags too (every member's card has them)."""
    membership(session, team_id, actor_id, *LEADS)
    deck = team_deck(session, team_id, slug)
    return card_editing.set_card(
        session,
        deck,
        key,
        locale=locale,
        question=question,
        answer=answer,
        explanation=explanation,
        tags=tags,
        now=now,
    )


def add_cards(
    session: Session,
    team_id: int,
    actor_id: int,
    slug: str,
    *,
    question: str,
    answer: str,
    explanation: str,
    tags: list[str] | None = None,
    now: datetime,
) -> list[str]:
    """A new card in the deck's default language, or a Cloze text's cards
    (`card_editing.add_cards`), with `tags`; their keys."""
    membership(session, team_id, actor_id, *LEADS)
    deck = team_deck(session, team_id, slug)
    return card_editing.add_cards(
        session, deck, question=question, answer=answer, explanation=explanation, tags=tags,
        now=now,
    )  # fmt: skip


def cloze_text(
    session: Session, team_id: int, actor_id: int, slug: str, key: str
) -> card_editing.ClozeText:
    """The Cloze text a card of the team's deck was made from, for its leads
    (`card_editing.find_cloze_text`)."""
    membership(session, team_id, actor_id, *LEADS)
    return card_editing.find_cloze_text(session, team_deck(session, team_id, slug), key)


def edit_cloze(
    session: Session,
    team_id: int,
    actor_id: int,
    slug: str,
    key: str,
    *,
    text: str,
    extra: str,
    tags: list[str] | None = None,
    now: datetime,
) -> card_editing.ClozeSaved:
    """A Cloze text's cards changed as the text (`card_editing.edit_cloze`), by a lead."""
    membership(session, team_id, actor_id, *LEADS)
    deck = team_deck(session, team_id, slug)
    return card_editing.edit_cloze(session, deck, key, text=text, extra=extra, tags=tags, now=now)


def retire_card(
    session: Session, team_id: int, actor_id: int, slug: str, key: str, *, now: datetime
) -> SyncReport:
    membership(session, team_id, actor_id, *LEADS)
    return card_editing.retire_card(session, team_deck(session, team_id, slug), key, now=now)


def delete_team_deck(session: Session, team_id: int, actor_id: int, slug: str) -> None:
    """Delete the deck with everyone's progress on it: it was the team's, not theirs."""
    membership(session, team_id, actor_id, *LEADS)
    deck = team_deck(session, team_id, slug)
    session.execute(delete(Deck).where(Deck.id == deck.id))
    session.flush()
    session.expire_all()


@dataclass(frozen=True)
class TeamDeckView:
    id: int
    slug: str
    title: str
    default_locale: str
    locales: list[str]
    card_count: int


def _views(session: Session, decks: list[Deck]) -> list[TeamDeckView]:
    """Each deck's titles and live card count, counted in the database: a 5,000-card deck
    is listed without reading its cards."""
    ids = [deck.id for deck in decks]
    counts: dict[int, int] = {
        deck_id: count
        for deck_id, count in session.execute(
            select(Card.deck_id, func.count())
            .where(Card.deck_id.in_(ids), Card.retired_at.is_(None))
            .group_by(Card.deck_id)
        )
    }
    texts: dict[int, dict[str, str]] = {}
    for text in session.scalars(select(DeckText).where(DeckText.deck_id.in_(ids))):
        texts.setdefault(text.deck_id, {})[text.locale] = text.title
    views = []
    for deck in decks:
        titles = texts.get(deck.id, {})
        default = titles.get(deck.default_locale)
        views.append(
            TeamDeckView(
                deck.id,
                deck.slug,
                default if default is not None else deck.slug,
                deck.default_locale,
                sorted(titles),
                counts.get(deck.id, 0) if default is not None else 0,
            )
        )
    return views


def list_team_decks(session: Session, team_id: int, user_id: int) -> list[TeamDeckView]:
    membership(session, team_id, user_id)
    decks = session.scalars(select(Deck).where(Deck.owner_team_id == team_id).order_by(Deck.slug))
    return _views(session, list(decks))


def team_deck_view(session: Session, team_id: int, user_id: int, slug: str) -> TeamDeckView:
    """One team deck's titles and card count, for members (who study it) and editors."""
    membership(session, team_id, user_id)
    return _views(session, [team_deck(session, team_id, slug)])[0]


def deck_cards(session: Session, team_id: int, user_id: int, slug: str) -> DeckSource:
    """A team deck's live cards in every language, for members (who study it) and editors."""
    membership(session, team_id, user_id)
    return current_source(session, team_deck(session, team_id, slug))


def deck_cards_and_tags(
    session: Session, team_id: int, user_id: int, slug: str
) -> tuple[DeckSource, dict[str, list[str]]]:
    """`deck_cards`, with the live cards' tags by key (a card's, the same in every language)."""
    membership(session, team_id, user_id)
    deck = team_deck(session, team_id, slug)
    rows = session.execute(
        select(Card.key, Card.tags).where(Card.deck_id == deck.id, Card.retired_at.is_(None))
    )
    return current_source(session, deck), {key: list(tags or ()) for key, tags in rows}


def deck_card_page(
    session: Session, team_id: int, user_id: int, slug: str, *, query: str, page: int
) -> tuple[TeamDeckView, CardPage]:
    """A page of a team deck's live cards, those matching `query` in any language."""
    view = team_deck_view(session, team_id, user_id, slug)
    return view, card_page(session, view.id, query=query, page=page)


def deck_card(
    session: Session, team_id: int, user_id: int, slug: str, key: str
) -> tuple[TeamDeckView, CardRow]:
    """One live card of a team deck in every language; NotFound for a retired or unknown one."""
    view = team_deck_view(session, team_id, user_id, slug)
    row = card_texts(session, view.id, key)
    if row is None:
        raise NotFound(f"no card '{key}' in this deck")
    return view, row
