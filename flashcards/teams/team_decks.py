"""Decks a team owns: made from a quiz text (the seed format) or a CSV, edited card by card.

Every change goes through `sync_deck`, as `decks sync` does, so members keep their progress:
cards are matched by key, a removed card is retired (never deleted), a new one is new.
Only the team's owner and managers change them; members see and study them.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, replace
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from ..decks.deckfile import (
    KEY_RE,
    MAX_TEXT,
    MAX_TITLE,
    CardSource,
    DeckSource,
    LocaleSource,
)
from ..decks.locales import check_locale
from ..decks.quizfile import parse_quiz, quiz_to_locale, slugify
from ..decks.sync import SyncReport, sync_deck
from ..errors import (
    EditingRetiredCard,
    InvalidInput,
    LanguageNotInDeck,
    LastCardOfDeck,
    NotFound,
    TextTooLong,
)
from ..storage.models import Card, CardText, Deck, DeckText
from .roles import LEADS, clean_text, membership, team_deck

FORMATS = ("quiz", "csv")
CSV_COLUMNS = ("front", "back", "key", "locale", "explanation")
MAX_CARDS = 5000


def parse_csv(text: str, default_locale: str) -> dict[str, list[CardSource]]:
    """Cards per locale from CSV: front, back, optional key, locale and explanation.

    A first row naming the columns sets their order; without one the order is front, back,
    key, locale. Cards without a key are numbered per locale (q01, q02, ...), so the n-th
    card of each language is the same card.
    """
    # newline="" as the csv module asks: a lone "\r" is then a line break, not a csv.Error.
    reader = csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline=""))
    try:
        rows = [r for r in reader if any(c.strip() for c in r)]
    except csv.Error as exc:  # e.g. a cell over the csv module's field size limit
        raise InvalidInput(f"line {reader.line_num}: {exc}", field="content") from None
    if not rows:
        raise InvalidInput("the CSV has no rows", field="content")
    header = [c.strip().lower() for c in rows[0]]
    if "front" in header and "back" in header:
        unknown = [c for c in header if c not in CSV_COLUMNS]
        if unknown:
            raise InvalidInput(f"unknown CSV column '{unknown[0]}'", field="content")
        columns, body, first_line = header, rows[1:], 2
    else:
        columns, body, first_line = list(CSV_COLUMNS[:4]), rows, 1
    by_locale: dict[str, list[CardSource]] = {}
    for line, row in enumerate(body, start=first_line):
        values = dict(zip(columns, (c.strip() for c in row), strict=False))
        if len(row) > len(columns):
            raise InvalidInput(f"line {line}: more cells than columns", field="content")
        front, back = values.get("front", ""), values.get("back", "")
        if not front or not back:
            raise InvalidInput(f"line {line}: front and back must not be empty", field="content")
        if max(len(front), len(back), len(values.get("explanation", ""))) > MAX_TEXT:
            raise InvalidInput(f"line {line}: longer than {MAX_TEXT} characters", field="content")
        locale = check_locale(values.get("locale") or default_locale, field="content", line=line)
        cards = by_locale.setdefault(locale, [])
        key = values.get("key") or f"q{len(cards) + 1:02d}"
        if not KEY_RE.match(key):
            raise InvalidInput(
                f"line {line}: invalid key '{key}' (use a-z, 0-9, '-', '_')", field="content"
            )
        if any(c.key == key for c in cards):
            raise InvalidInput(f"line {line}: duplicate key '{key}' in {locale}", field="content")
        cards.append(CardSource(key, front, back, values.get("explanation", ""), line))
    if not by_locale:
        # A header row alone: a deck needs at least one card.
        raise InvalidInput("the CSV has no cards, only the row naming its columns", field="content")
    if sum(len(c) for c in by_locale.values()) > MAX_CARDS:
        raise InvalidInput(f"at most {MAX_CARDS} cards", field="content")
    return by_locale


def _check_no_nul(text: str, field: str) -> None:
    # PostgreSQL refuses NUL in text (a DataError, so a 500 at the edge); SQLite would keep it.
    at = text.find("\x00")
    if at >= 0:
        line = text.count("\n", 0, at) + 1
        raise InvalidInput(f"line {line}: a NUL character is not text", field=field)


def _check_title(title: str) -> str:
    return clean_text(title, field="title", max_length=MAX_TITLE)


def parse_upload(
    fmt: str,
    content: str,
    locale: str,
    title: str | None,
    keys: list[str] | None = None,
    *,
    exact: bool = True,
) -> list[LocaleSource]:
    """The locales an upload provides.

    `keys`: the deck's current keys, given to the quiz's questions in order. With `exact`
    (a translation) the numbers must match; without (a new version of the default language)
    extra questions get new keys and missing ones are retired.
    """
    check_locale(locale)
    _check_no_nul(content, "content")
    if title is not None:
        _check_no_nul(title, "title")
    if fmt == "quiz":
        quiz = parse_quiz(content, path="upload")
        if keys is not None and not exact:
            keys = _positional_keys(keys, len(quiz.items))
        source = quiz_to_locale(quiz, locale, keys, path="upload")
        return [replace(source, title=_check_title(title or source.title))]
    if fmt == "csv":
        if title is None:
            raise InvalidInput("a CSV upload needs a title", field="title")
        clean = _check_title(title)
        return [
            LocaleSource(loc, clean, "", tuple(cards))
            for loc, cards in parse_csv(content, locale).items()
        ]
    raise InvalidInput(f"format must be one of {', '.join(FORMATS)}", field="format")


def _positional_keys(existing: list[str], count: int) -> list[str]:
    """Question n keeps the key of the deck's n-th card, so re-uploads keep progress."""
    keys = existing[:count]
    taken = set(existing)
    number = 0
    while len(keys) < count:
        number += 1
        key = f"q{number:02d}"
        if key not in taken:
            keys.append(key)
            taken.add(key)
    return keys


def _unique_slug(session: Session, team_id: int, title: str) -> str:
    base = f"team{team_id}-{slugify(title)}"[:90].strip("-")
    taken = set(session.scalars(select(Deck.slug).where(Deck.slug.startswith(base))))
    slug, n = base, 1
    while slug in taken:
        n += 1
        slug = f"{base}-{n}"
    return slug


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
    slug = _unique_slug(session, team_id, locales[0].title)
    source = _validated(DeckSource(slug, locale, {loc.locale: loc for loc in locales}))
    report = sync_deck(session, source, now=now, owner_team_id=team_id)
    return team_deck(session, team_id, slug), report


def current_source(session: Session, deck: Deck) -> DeckSource:
    """The deck as the database holds it (live cards only), ready to be edited and synced."""
    cards = session.execute(
        select(Card.key, CardText)
        .join(CardText, CardText.card_id == Card.id)
        .where(Card.deck_id == deck.id, Card.retired_at.is_(None))
        .order_by(Card.position)
    ).all()
    locales: dict[str, LocaleSource] = {}
    for text in session.scalars(select(DeckText).where(DeckText.deck_id == deck.id)):
        own = tuple(
            CardSource(key, t.question, t.answer, t.explanation)
            for key, t in cards
            if t.locale == text.locale
        )
        locales[text.locale] = LocaleSource(text.locale, text.title, text.description, own)
    return DeckSource(deck.slug, deck.default_locale, locales)


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
    return sync_deck(
        session, _validated(replace(source, locales=locales)), now=now, owner_team_id=team_id
    )


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
    now: datetime,
) -> SyncReport:
    """Edit one card's text in one language, or add a card (in the default language)."""
    membership(session, team_id, actor_id, *LEADS)
    deck = team_deck(session, team_id, slug)
    if not KEY_RE.match(key):
        raise InvalidInput("invalid card key (use a-z, 0-9, '-' and '_')", field="key")
    for name, value in (("front", question), ("back", answer), ("explanation", explanation)):
        _check_no_nul(value, name)
    for name, value in (("front", question), ("back", answer)):
        if not value.strip():
            raise InvalidInput(f"{name} must not be empty", field=name)
    for name, value in (("front", question), ("back", answer), ("explanation", explanation)):
        if len(value) > MAX_TEXT:
            raise TextTooLong(f"{name} may have at most {MAX_TEXT} characters", field=name)
    source = current_source(session, deck)
    target = source.locales.get(locale)
    if target is None:
        raise LanguageNotInDeck(f"the deck has no language '{locale}'", field="locale")
    if key not in source.keys and _retired(session, deck.id, key):
        # Most likely an edit from a page opened before another lead retired the card:
        # taking it as new would bring the old question back with everyone's progress.
        raise EditingRetiredCard(
            "this card was retired from the deck and can no longer be edited", field="key"
        )
    if key not in source.keys and locale != deck.default_locale:
        raise InvalidInput(
            f"add the card in the default language '{deck.default_locale}' first", field="locale"
        )
    card = CardSource(key, question.strip(), answer.strip(), explanation.strip())
    cards = list(target.cards)
    at = next((i for i, c in enumerate(cards) if c.key == key), None)
    if at is None:
        cards.append(card)
    else:
        cards[at] = card
    locales = dict(source.locales)
    locales[locale] = replace(target, cards=tuple(cards))
    return sync_deck(session, replace(source, locales=locales), now=now, owner_team_id=team_id)


def _retired(session: Session, deck_id: int, key: str) -> bool:
    found = select(Card.id).where(
        Card.deck_id == deck_id, Card.key == key, Card.retired_at.is_not(None)
    )
    return session.scalar(found) is not None


def retire_card(
    session: Session, team_id: int, actor_id: int, slug: str, key: str, *, now: datetime
) -> SyncReport:
    membership(session, team_id, actor_id, *LEADS)
    deck = team_deck(session, team_id, slug)
    source = current_source(session, deck)
    if key not in source.keys:
        raise NotFound("no such card in this deck")
    if len(source.keys) == 1:
        raise LastCardOfDeck("a deck keeps at least one card; delete the deck instead")
    locales = {
        loc: replace(ls, cards=tuple(c for c in ls.cards if c.key != key))
        for loc, ls in source.locales.items()
    }
    return sync_deck(session, replace(source, locales=locales), now=now, owner_team_id=team_id)


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


def list_team_decks(session: Session, team_id: int, user_id: int) -> list[TeamDeckView]:
    membership(session, team_id, user_id)
    views = []
    for deck in session.scalars(
        select(Deck).where(Deck.owner_team_id == team_id).order_by(Deck.slug)
    ):
        source = current_source(session, deck)
        default = source.locales.get(deck.default_locale)
        views.append(
            TeamDeckView(
                deck.id,
                deck.slug,
                default.title if default else deck.slug,
                deck.default_locale,
                sorted(source.locales),
                len(source.keys) if default else 0,
            )
        )
    return views


def deck_cards(session: Session, team_id: int, user_id: int, slug: str) -> DeckSource:
    """A team deck's live cards in every language, for members (who study it) and editors."""
    membership(session, team_id, user_id)
    return current_source(session, team_deck(session, team_id, slug))
