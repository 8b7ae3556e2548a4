"""Which decks a person studies, and in which language."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from operator import attrgetter
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session, aliased

from ..decks import deck_tree
from ..decks.access import visible_decks
from ..errors import InvalidInput, NotFound
from ..storage.models import Card, Deck, DeckText, Subscription, User


@dataclass(frozen=True)
class DeckSummary:
    id: int
    slug: str
    title: str
    description: str
    locales: list[str]
    default_locale: str
    card_count: int
    subscribed_locale: str | None
    text_locale: str | None  # the language of title and description; None: no text, the slug


def find_visible_deck(session: Session, user_id: int, slug: str) -> Deck:
    # No slug holds a NUL, and PostgreSQL refuses one in a query parameter (a DataError).
    if "\x00" in slug:
        raise NotFound(f"no deck {slug!r}")
    deck = session.scalar(select(Deck).where(Deck.slug == slug, visible_decks(user_id)))
    if deck is None:
        raise NotFound(f"no deck '{slug}'")
    return deck


def deck_locales(session: Session, deck_id: int) -> list[str]:
    return list(
        session.scalars(
            select(DeckText.locale).where(DeckText.deck_id == deck_id).order_by(DeckText.locale)
        )
    )


def subscribe(
    session: Session, user_id: int, deck: Deck, locale: str | None, *, now: datetime
) -> Subscription:
    """Subscribe, or change the language of an existing subscription; progress is per card.

    Without a language, a new subscription takes the person's UI language (else the deck's
    default) and an existing one keeps the language they chose.
    """
    sub = session.get(Subscription, (user_id, deck.id))
    if locale is None and sub is not None:
        return sub
    locales = deck_locales(session, deck.id)
    if locale is None:
        locale = _first_locale(session, user_id, deck, locales)
    elif locale not in locales:
        raise InvalidInput(
            f"deck '{deck.slug}' is available in {', '.join(locales)}, not '{locale}'",
            field="locale",
        )
    if sub is None:
        sub = Subscription(user_id=user_id, deck_id=deck.id, locale=locale, created_at=now)
        session.add(sub)
    else:
        sub.locale = locale
    session.flush()
    return sub


def reading_locale(session: Session, user_id: int, deck: Deck) -> str:
    """The language this person studies the deck in; if they do not, the one a subscription
    would start in."""
    locales = deck_locales(session, deck.id)
    sub = session.get(Subscription, (user_id, deck.id))
    # A team may have dropped the language a subscription was made in.
    if sub is not None and sub.locale in locales:
        return sub.locale
    return _first_locale(session, user_id, deck, locales)


def _first_locale(session: Session, user_id: int, deck: Deck, locales: list[str]) -> str:
    """Their UI language if the deck has it, else the deck's default."""
    ui_locale = session.scalar(select(User.locale).where(User.id == user_id))
    return ui_locale if ui_locale in locales else deck.default_locale


def unsubscribe(session: Session, user_id: int, deck: Deck) -> bool:
    """Stop studying a deck; review state and history stay for a later return."""
    result = session.execute(
        delete(Subscription).where(Subscription.user_id == user_id, Subscription.deck_id == deck.id)
    )
    return bool(getattr(result, "rowcount", 0))


def _text(text: DeckText) -> tuple[str, str]:
    return text.title, text.description


def card_counts(session: Session, deck_ids: Iterable[int]) -> dict[int, int]:
    """The live cards of each deck (a deck without any is left out)."""
    return dict(
        session.execute(
            select(Card.deck_id, func.count())
            .where(Card.deck_id.in_(list(deck_ids)), Card.retired_at.is_(None))
            .group_by(Card.deck_id)
        ).all()
    )


def deck_summaries(session: Session, user_id: int, ui_locale: str) -> list[DeckSummary]:
    decks = session.scalars(select(Deck).where(visible_decks(user_id)).order_by(Deck.slug)).all()
    ids = [d.id for d in decks]
    counts = card_counts(session, ids)
    texts: dict[int, dict[str, DeckText]] = {}
    for text in session.scalars(select(DeckText).where(DeckText.deck_id.in_(ids))):
        texts.setdefault(text.deck_id, {})[text.locale] = text
    subs = dict(
        session.execute(
            select(Subscription.deck_id, Subscription.locale).where(Subscription.user_id == user_id)
        ).all()
    )
    summaries = []
    for deck in decks:
        by_locale = texts.get(deck.id, {})
        default = by_locale.get(deck.default_locale)
        shown = by_locale.get(subs.get(deck.id) or ui_locale) or default
        text_locale = shown.locale if shown else None
        if shown and default and _text(shown) == _text(default):
            # A copy of the default language's text (a team deck's one title is filed under
            # each of its languages) is written in that language.
            text_locale = default.locale
        summaries.append(
            DeckSummary(
                id=deck.id,
                slug=deck.slug,
                title=shown.title if shown else deck.slug,
                description=shown.description if shown else "",
                locales=sorted(by_locale),
                default_locale=deck.default_locale,
                card_count=counts.get(deck.id, 0),
                subscribed_locale=subs.get(deck.id),
                text_locale=text_locale,
            )
        )
    return summaries


def deck_forest(decks: Iterable[DeckSummary]) -> list[deck_tree.Node[DeckSummary]]:
    """The decks with each subdeck under its parent by their shown titles ("Parent::Child")."""
    return deck_tree.tree(decks, attrgetter("title"))


@dataclass(frozen=True)
class StudiedDeck:
    id: int
    slug: str
    title: str  # in the language the person studies it in, else its own
    title_locale: str | None  # that language; None: no title, the slug


def with_subdecks(session: Session, user_id: int, deck: Deck) -> dict[int, int | None]:
    """The ids of the deck and of the subdecks it studies with (`studied_tree`), each with
    the id of the nearest deck it is under (None for the deck itself), parents first."""
    node = studied_tree(session, user_id, deck)
    return parent_ids(node) if node is not None else {deck.id: None}


def parent_ids(node: deck_tree.Node[Any]) -> dict[int, int | None]:
    """The node's deck and those under it by id, each with its parent's (`Node.under`)."""
    return {d.id: p.id if p is not None else None for d, p in node.under()}


def studied_tree(session: Session, user_id: int, deck: Deck) -> deck_tree.Node[StudiedDeck] | None:
    """The deck with the subdecks the person studies under it: what studying the deck
    studies, as in Anki. The decks nest as the library nests them (by each one's title in the
    language it is studied in, `deck_summaries`); None for a deck the person does not study."""
    shown, default = aliased(DeckText), aliased(DeckText)
    rows = session.execute(
        select(
            Deck.id,
            Deck.slug,
            func.coalesce(shown.title, default.title, Deck.slug),
            func.coalesce(shown.locale, default.locale),
        )
        .join(Subscription, Subscription.deck_id == Deck.id)
        .outerjoin(shown, (shown.deck_id == Deck.id) & (shown.locale == Subscription.locale))
        .outerjoin(default, (default.deck_id == Deck.id) & (default.locale == Deck.default_locale))
        .where(Subscription.user_id == user_id)
        .order_by(Deck.slug)  # the library's order: of two decks of one title, the first leads
    ).all()
    studied = [StudiedDeck(*row) for row in rows]
    own = next((d for d in studied if d.id == deck.id), None)
    return deck_tree.find(deck_tree.tree(studied, attrgetter("title")), own) if own else None


@dataclass(frozen=True)
class DeckTitles:
    """Decks' titles by slug, in every language they have, to show each in a given one."""

    texts: dict[str, dict[str, str]]  # slug: {locale: title}
    defaults: dict[str, str]  # slug: the deck's default language

    def of(self, slug: str, locale: str) -> tuple[str, str | None]:
        """The title in `locale`, else in the deck's default language, else the slug; with
        the language it is written in (None for the slug)."""
        titles = self.texts.get(slug, {})
        for wanted in (locale, self.defaults.get(slug)):
            if wanted and titles.get(wanted):
                return titles[wanted], wanted
        return slug, None


def deck_titles(session: Session, slugs: Iterable[str]) -> DeckTitles:
    """The titles of the decks `slugs`, in one statement."""
    return _titles(session, Deck.slug.in_(set(slugs)))


def deck_title(session: Session, deck_id: int, locale: str) -> tuple[str, str | None]:
    """A deck's title in `locale` (see `DeckTitles.of`)."""
    titles = _titles(session, Deck.id == deck_id)
    return titles.of(next(iter(titles.defaults), ""), locale)


def _titles(session: Session, which: Any) -> DeckTitles:
    texts: dict[str, dict[str, str]] = {}
    defaults: dict[str, str] = {}
    rows = session.execute(
        select(DeckText.locale, DeckText.title, Deck.default_locale, Deck.slug)
        .select_from(Deck)
        .outerjoin(DeckText, DeckText.deck_id == Deck.id)
        .where(which)
    )
    for r in rows:
        defaults[r.slug] = r.default_locale
        if r.locale is not None:
            texts.setdefault(r.slug, {})[r.locale] = r.title
    return DeckTitles(texts, defaults)
