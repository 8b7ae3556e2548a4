"""Loading deck sources into the database: idempotent, keeps review state, retires removed cards.

The caller owns the transaction: a failure anywhere leaves the database as it was.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from ..errors import DeckNameTaken
from ..storage.models import Card, CardText, Deck, DeckText, Subscription, User
from .deckfile import CardSource, DeckSource


@dataclass
class SyncReport:
    slug: str
    created: bool = False
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)
    restored: list[str] = field(default_factory=list)
    # Cards whose position changed, and changes to the deck itself (titles, descriptions,
    # locales, default locale): edits too, though no card text changed.
    moved: list[str] = field(default_factory=list)
    deck_changed: bool = False

    @property
    def changed(self) -> bool:
        return bool(
            self.created
            or self.added
            or self.updated
            or self.retired
            or self.restored
            or self.moved
            or self.deck_changed
        )


def sync_deck(
    session: Session,
    source: DeckSource,
    *,
    now: datetime,
    owner_user_id: int | None = None,
    owner_team_id: int | None = None,
) -> SyncReport:
    report = SyncReport(source.slug)
    deck = session.scalar(select(Deck).where(Deck.slug == source.slug))
    if deck is None:
        deck = Deck(
            slug=source.slug,
            default_locale=source.default_locale,
            owner_user_id=owner_user_id,
            owner_team_id=owner_team_id,
            created_at=now,
            updated_at=now,
        )
        session.add(deck)
        session.flush()
        report.created = True
    elif (deck.owner_user_id, deck.owner_team_id) != (owner_user_id, owner_team_id):
        raise DeckNameTaken(f"the deck name '{source.slug}' is already taken", field="slug")
    if deck.default_locale != source.default_locale:
        deck.default_locale = source.default_locale
        report.deck_changed = True

    if _sync_deck_texts(session, deck, source):
        report.deck_changed = True

    cards = {c.key: c for c in session.scalars(select(Card).where(Card.deck_id == deck.id))}
    texts: dict[tuple[int, str], CardText] = {
        (t.card_id, t.locale): t
        for t in session.scalars(select(CardText).join(Card).where(Card.deck_id == deck.id))
    }
    wanted_keys = source.keys
    by_locale = {loc: {c.key: c for c in ls.cards} for loc, ls in source.locales.items()}
    removed_locales = {locale for _, locale in texts} - by_locale.keys()
    for position, key in enumerate(wanted_keys):
        card = cards.get(key)
        if card is None:
            card = Card(deck_id=deck.id, key=key, position=position, created_at=now, updated_at=now)
            session.add(card)
            session.flush()
            cards[key] = card
            report.added.append(key)
        else:
            if card.retired_at is not None:
                card.retired_at = None
                report.restored.append(key)
            if card.position != position:
                card.position = position
                report.moved.append(key)
        if _sync_card_texts(session, card, by_locale, texts, removed_locales, now):
            card.updated_at = now
            if key not in report.added:
                report.updated.append(key)

    wanted = set(wanted_keys)
    for key, card in cards.items():
        if key in wanted:
            continue
        if card.retired_at is None:
            card.retired_at = now
            report.retired.append(key)
        # A retired card keeps its texts (its history is shown with them), but not in a
        # language the deck no longer has.
        for locale in removed_locales:
            text = texts.get((card.id, locale))
            if text is not None:
                session.delete(text)

    if report.changed:
        deck.updated_at = now
    return report


def _sync_deck_texts(session: Session, deck: Deck, source: DeckSource) -> bool:
    changed = False
    existing = {
        t.locale: t for t in session.scalars(select(DeckText).where(DeckText.deck_id == deck.id))
    }
    for locale, loc in source.locales.items():
        text = existing.pop(locale, None)
        if text is None:
            session.add(
                DeckText(
                    deck_id=deck.id, locale=locale, title=loc.title, description=loc.description
                )
            )
            changed = True
            if len(loc.cards) == len(source.keys):
                # People given the deck's language for want of their own get theirs now.
                session.execute(
                    update(Subscription)
                    .where(
                        Subscription.deck_id == deck.id,
                        Subscription.locale == source.default_locale,
                        Subscription.user_id.in_(select(User.id).where(User.locale == locale)),
                    )
                    .values(locale=locale)
                )
        elif (text.title, text.description) != (loc.title, loc.description):
            text.title, text.description = loc.title, loc.description
            changed = True
    for gone in existing.values():
        session.delete(gone)
        changed = True
    if existing:
        # People studying in a language the deck no longer has continue in its default one.
        session.execute(
            update(Subscription)
            .where(Subscription.deck_id == deck.id, Subscription.locale.in_(list(existing)))
            .values(locale=source.default_locale)
        )
    return changed


def _sync_card_texts(
    session: Session,
    card: Card,
    by_locale: dict[str, dict[str, CardSource]],
    texts: dict[tuple[int, str], CardText],
    removed_locales: set[str],
    now: datetime,
) -> bool:
    changed = False
    for locale, cards_by_key in by_locale.items():
        card_source = cards_by_key.get(card.key)
        text = texts.get((card.id, locale))
        if card_source is None:
            if text is not None:
                session.delete(text)
                changed = True
            continue
        values = (card_source.question, card_source.answer, card_source.explanation)
        if text is None:
            session.add(
                CardText(
                    card_id=card.id,
                    locale=locale,
                    question=values[0],
                    answer=values[1],
                    explanation=values[2],
                    updated_at=now,
                )
            )
            changed = True
        elif (text.question, text.answer, text.explanation) != values:
            text.question, text.answer, text.explanation = values
            text.updated_at = now
            changed = True
    for locale in removed_locales:
        text = texts.get((card.id, locale))
        if text is not None:
            session.delete(text)
            changed = True
    return changed
