"""Editing a deck card by card: the one home of it, for a team's decks (by their leads) and
a person's own decks (by their owner). Callers decide who may edit; this module edits.

Every change goes through `sync_deck`, as `decks sync` does, so everyone keeps their
progress: cards are matched by key, a removed card is retired (never deleted), a new one is new.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from ..errors import (
    CardOfAnkiNote,
    EditingRetiredCard,
    InvalidInput,
    LanguageNotInDeck,
    LastCardOfDeck,
    NotClozeCard,
    NotFound,
    TextTooLong,
)
from ..storage.models import Card, CardText, Deck, DeckText
from ..teams.deck_uploads import check_card_count
from .cloze import Cloze, back_extra
from .cloze_source import cloze_number, cloze_source, sibling_key
from .deckfile import KEY_RE, MAX_TEXT, CardSource, DeckSource, LocaleSource
from .quizfile import slugify
from .sync import SyncReport, sync_deck

MAX_TAGS = 20
MAX_TAG = 100  # as custom study takes one; a tag is a word: no white space inside


def unique_slug(session: Session, prefix: str, title: str) -> str:
    """A slug no deck has: the owner's prefix and the title's words, numbered if taken."""
    base = f"{prefix}{slugify(title)}"[:90].strip("-")
    taken = set(session.scalars(select(Deck.slug).where(Deck.slug.startswith(base))))
    slug, n = base, 1
    while slug in taken:
        n += 1
        slug = f"{base}-{n}"
    return slug


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


def sync_owned(session: Session, deck: Deck, source: DeckSource, *, now: datetime) -> SyncReport:
    """Sync an edited source into the deck it came from, under the deck's own owner."""
    return sync_deck(
        session,
        source,
        now=now,
        owner_user_id=deck.owner_user_id,
        owner_team_id=deck.owner_team_id,
    )


def clean_tags(tags: list[str]) -> list[str]:
    """Tags as Anki keeps them: words without white space, each once, in their order."""
    cleaned: list[str] = []
    for tag in tags:
        if "\x00" in tag:
            raise InvalidInput("a NUL character is not text", field="tags")
        if any(ch.isspace() for ch in tag.strip()):
            raise InvalidInput("a tag is one word, without spaces", field="tags")
        tag = tag.strip()
        if not tag:
            continue
        if len(tag) > MAX_TAG:
            raise InvalidInput(f"a tag may have at most {MAX_TAG} characters", field="tags")
        if tag not in cleaned:
            cleaned.append(tag)
    if len(cleaned) > MAX_TAGS:
        raise InvalidInput(f"a card may have at most {MAX_TAGS} tags", field="tags")
    return cleaned


def check_texts(question: str, answer: str, explanation: str) -> None:
    for name, value in (("front", question), ("back", answer), ("explanation", explanation)):
        if "\x00" in value:
            raise InvalidInput("a NUL character is not text", field=name)
    for name, value in (("front", question), ("back", answer)):
        if not value.strip():
            raise InvalidInput(f"{name} must not be empty", field=name)
    for name, value in (("front", question), ("back", answer), ("explanation", explanation)):
        if len(value) > MAX_TEXT:
            raise TextTooLong(f"{name} may have at most {MAX_TEXT} characters", field=name)


@dataclass(frozen=True)
class CardEdit:
    """One card's texts in one language: None keeps the card's current text."""

    key: str
    question: str | None
    answer: str | None
    explanation: str | None


def set_card(
    session: Session,
    deck: Deck,
    key: str,
    *,
    locale: str,
    question: str | None,
    answer: str | None,
    explanation: str | None,
    tags: list[str] | None = None,
    now: datetime,
    create: bool = True,
) -> SyncReport:
    """Edit one card's text in one language, or add a card (in the default language).

    A text given as None keeps the card's current one in that language; tags (the card's,
    in every language) likewise. `create=False` edits only: an unknown key is NotFound."""
    edit = CardEdit(key, question, answer, explanation)
    return set_cards(session, deck, [edit], locale=locale, tags=tags, now=now, create=create)


def set_cards(
    session: Session,
    deck: Deck,
    edits: list[CardEdit],
    *,
    locale: str,
    tags: list[str] | None = None,
    now: datetime,
    create: bool = True,
) -> SyncReport:
    """`set_card` for several cards (a Cloze text's), in one sync of the deck: each sync
    reads and compares the whole deck."""
    source = current_source(session, deck)
    target = source.locales.get(locale)
    if target is None:
        raise LanguageNotInDeck(f"the deck has no language '{locale}'", field="locale")
    cards = list(target.cards)
    at_key = {card.key: i for i, card in enumerate(cards)}
    for edit in edits:
        key = edit.key
        if not KEY_RE.match(key):
            raise InvalidInput("invalid card key (use a-z, 0-9, '-' and '_')", field="key")
        if key not in source.keys and _retired(session, deck.id, key):
            # Most likely an edit from a page opened before the card was retired elsewhere:
            # taking it as new would bring the old question back with everyone's progress.
            raise EditingRetiredCard(
                "this card was retired from the deck and can no longer be edited", field="key"
            )
        if key not in source.keys and not create:
            raise NotFound(f"no card '{key}' in this deck")
        if key not in source.keys and locale != deck.default_locale:
            raise InvalidInput(
                f"add the card in the default language '{deck.default_locale}' first",
                field="locale",
            )
        at = at_key.get(key)
        if at is not None and deck.anki_deck_id is not None and _of_anki_note(session, deck, key):
            raise CardOfAnkiNote(
                "this card comes from a note made in Anki that the web cannot edit: edit the "
                "note in Anki, and your next sync brings the change here"
            )
        old = cards[at] if at is not None else CardSource(key, "", "", "")
        texts = (
            old.question if edit.question is None else edit.question,
            old.answer if edit.answer is None else edit.answer,
            old.explanation if edit.explanation is None else edit.explanation,
        )
        # A browser's form sends its line breaks as CRLF: stored as they are, saving a card
        # unchanged would change it (and its devices' copies).
        question, answer, explanation = (t.replace("\r\n", "\n").replace("\r", "\n") for t in texts)
        check_texts(question, answer, explanation)
        card = CardSource(key, question.strip(), answer.strip(), explanation.strip())
        if at is None:
            check_card_count(len(cards) + 1)
            at_key[key] = len(cards)
            cards.append(card)
        else:
            cards[at] = card
    wanted_tags = None if tags is None else clean_tags(tags)
    locales = dict(source.locales)
    locales[locale] = replace(target, cards=tuple(cards))
    report = sync_owned(session, deck, replace(source, locales=locales), now=now)
    if wanted_tags is not None:
        keys = [edit.key for edit in edits]
        for row in session.scalars(select(Card).where(Card.deck_id == deck.id, Card.key.in_(keys))):
            if list(row.tags or ()) != wanted_tags:
                row.tags = wanted_tags
                row.updated_at = now
                if row.key not in report.added and row.key not in report.updated:
                    report.updated.append(row.key)
    return report


def _of_anki_note(session: Session, deck: Deck, key: str) -> bool:
    found = session.scalar(select(Card.anki_ord).where(Card.deck_id == deck.id, Card.key == key))
    return found is not None


def _retired(session: Session, deck_id: int, key: str) -> bool:
    found = select(Card.id).where(
        Card.deck_id == deck_id, Card.key == key, Card.retired_at.is_not(None)
    )
    return session.scalar(found) is not None


def add_cards(
    session: Session,
    deck: Deck,
    *,
    question: str,
    answer: str,
    explanation: str,
    tags: list[str] | None = None,
    now: datetime,
) -> list[str]:
    """A new card in the deck's default language; its key, in a list.

    A question written with Anki's Cloze deletions ("{{c1::Paris}} is in {{c2::France}}")
    makes a card for each deletion number instead, as an Anki Cloze note does: that number's
    deletions hidden ("[...]", or the hint), the whole text as the answer, and what was
    written as the answer, if anything, with the explanation (Anki's "Back Extra"). They are
    siblings, keyed "<key>-c<number>", and go to Anki as one Cloze note. Their note key
    (`Card.note_key`, which also names the note in Anki) is the key with a random part: it
    stays theirs in any deck a card of theirs is moved to."""
    key = new_card_key(session, deck)
    parsed = Cloze(question)
    if not parsed.numbers():
        set_card(
            session, deck, key, locale=deck.default_locale, question=question, answer=answer,
            explanation=explanation, tags=tags, now=now,
        )  # fmt: skip
        return [key]
    extra = back_extra(answer, explanation)
    numbers = parsed.card_numbers()
    keys = [sibling_key(key, number) for number in numbers]
    _write_cloze(session, deck, parsed, dict(zip(numbers, keys, strict=True)), extra,
                 new_note_key(key), tags=tags, now=now)  # fmt: skip
    return keys


def new_note_key(stem: str) -> str:
    """A note key for the Cloze text whose cards' keys start `stem`: with a random part, so
    that it stays theirs in any deck a card of theirs is moved to, where another text's
    cards may have keys like theirs."""
    # Card.note_key holds 100 characters; an upload's own keys may have as many.
    return f"{stem[:91]}-{secrets.token_hex(4)}"


def keep_notes(session: Session, deck: Deck, cards: Sequence[CardSource]) -> None:
    """The notes of an upload's cards in the deck's default language (`CardSource.note`), after
    its sync: the cards of one Cloze text are siblings, keeping the note key one of them has,
    so that a re-upload updates their note in Anki instead of making another; every other
    card is a note of its own, as the upload now has it."""
    rows = {card.key: card for card in session.scalars(select(Card).where(Card.deck_id == deck.id))}
    texts: dict[str, list[Card]] = {}
    wanted: dict[str, str | None] = {}
    for source in cards:
        if source.note is None:
            wanted[source.key] = None
        else:
            texts.setdefault(source.note, []).append(rows[source.key])
    for stem, siblings in texts.items():
        kept = next((card.note_key for card in siblings if card.note_key is not None), None)
        note_key = kept or new_note_key(stem)
        wanted.update((card.key, note_key) for card in siblings)
    for key, its_note in wanted.items():
        if rows[key].note_key != its_note:
            rows[key].note_key = its_note


def _write_cloze(
    session: Session,
    deck: Deck,
    parsed: Cloze,
    keys: dict[int, str],
    extra: str,
    note_key: str,
    *,
    tags: list[str] | None = None,
    now: datetime,
) -> None:
    """The cards of a Cloze text (`keys`: the key of each number's), siblings of `note_key`,
    in one sync of the deck."""
    whole = parsed.answer()
    edits = [CardEdit(key, parsed.question(number), whole, extra) for number, key in keys.items()]
    set_cards(session, deck, edits, locale=deck.default_locale, tags=tags, now=now)
    session.execute(
        update(Card)
        .where(Card.deck_id == deck.id, Card.key.in_(list(keys.values())))
        .values(note_key=note_key)
    )


@dataclass(frozen=True)
class ClozeText:
    """The Cloze text a card was made from, found again from it and its siblings."""

    text: str
    extra: str  # the explanation they share (Anki's "Back Extra")
    keys: dict[int, str]  # deletion number: its card's key
    note_key: str  # theirs (`Card.note_key`)


def cloze_text(session: Session, deck: Deck, key: str) -> ClozeText | None:
    """The Cloze text of the card `key` and its siblings, from their questions and answer
    in the deck's language (`cloze_source`); None for a card of no Cloze text, or one whose
    siblings no longer give a text back (edited one by one)."""
    note_key = session.scalar(
        select(Card.note_key).where(
            Card.deck_id == deck.id, Card.key == key, Card.retired_at.is_(None)
        )
    )
    if note_key is None:
        return None
    rows = session.execute(
        select(Card.key, CardText.question, CardText.answer, CardText.explanation)
        .join(CardText, CardText.card_id == Card.id)
        .where(
            Card.deck_id == deck.id, Card.note_key == note_key, Card.retired_at.is_(None),
            CardText.locale == deck.default_locale,
        )
    ).all()  # fmt: skip
    by_number = {number: r for r in rows if (number := cloze_number(r.key)) is not None}
    if len(by_number) != len(rows) or len({(r.answer, r.explanation) for r in rows}) != 1:
        return None
    questions = {number: r.question for number, r in by_number.items()}
    source = cloze_source(questions, rows[0].answer)
    if source is None:
        return None
    # By number, whatever order the rows came in: an edit takes the first card's stem and tags.
    keys = {number: by_number[number].key for number in sorted(by_number)}
    return ClozeText(source, rows[0].explanation, keys, note_key)


def find_cloze_text(session: Session, deck: Deck, key: str) -> ClozeText:
    """`cloze_text`, for a caller that asked for one: NotClozeCard if the card has none."""
    found = cloze_text(session, deck, key)
    if found is None:
        raise NotClozeCard(f"card '{key}' is not one of a Cloze text's cards")
    return found


@dataclass(frozen=True)
class ClozeSaved:
    """A Cloze text's cards after an edit (`edit_cloze`), by key."""

    keys: list[str]  # the live cards, by deletion number
    added: list[str]  # made for numbers new to the text
    retired: list[str]  # of numbers taken out of it; their progress stays in the history


def edit_cloze(
    session: Session,
    deck: Deck,
    key: str,
    *,
    text: str,
    extra: str,
    tags: list[str] | None = None,
    now: datetime,
) -> ClozeSaved:
    """Change the Cloze text of the card `key` and its siblings, as Anki edits a Cloze note:
    each number's card gets the new text and keeps its progress, a new number makes a card,
    a number gone retires its card. `tags` (None: kept) are the note's, so every card's."""
    found = find_cloze_text(session, deck, key)
    parsed = Cloze(text)
    sibling = next(iter(found.keys.values()))
    stem = sibling.rpartition("-c")[0]
    keys = {
        number: found.keys.get(number) or free_key(session, deck, sibling_key(stem, number))
        for number in parsed.card_numbers()
    }
    _write_cloze(session, deck, parsed, keys, extra, found.note_key, tags=tags, now=now)
    retired = [gone for number, gone in sorted(found.keys.items()) if number not in keys]
    for gone in retired:
        retire_card(session, deck, gone, now=now)
    added = [k for number, k in keys.items() if number not in found.keys]
    if tags is None and added:  # a new number's card takes a sibling's, as a note's card does
        inherited = session.scalar(
            select(Card.tags).where(Card.deck_id == deck.id, Card.key == sibling)
        )
        session.execute(
            update(Card)
            .where(Card.deck_id == deck.id, Card.key.in_(added))
            .values(tags=list(inherited or ()))
        )
    return ClozeSaved(list(keys.values()), added, retired)


def from_cloze(keys: list[str]) -> bool:
    """Whether `add_cards` made the cards of `keys` from a Cloze text: theirs end "-c<n>",
    a plain new card's is "c<n>" (`new_card_key`)."""
    return "-c" in keys[0]


def free_key(session: Session, deck: Deck, key: str) -> str:
    """`key` for a card arriving in `deck` (a move), if no card there has it; else a new key,
    a Cloze card's keeping its "-c<number>", which says which deletion it asks."""
    if session.scalar(select(Card.id).where(Card.deck_id == deck.id, Card.key == key)) is None:
        return key
    number = cloze_number(key)
    fresh = new_card_key(session, deck)
    return sibling_key(fresh, number) if number is not None else fresh


def new_card_key(session: Session, deck: Deck) -> str:
    """A key no card of the deck ever had: reusing a retired card's key would bring back
    everyone's progress on that old question. Two adds at once may pick the same one: the
    caller retries on the unique constraint."""
    taken = set(session.scalars(select(Card.key).where(Card.deck_id == deck.id)))
    # Nor the start of one: a Cloze text's cards are "<key>-c1", "<key>-c2"... (`add_cards`).
    stems = {key.rpartition("-c")[0] for key in taken}
    number = len(taken) + 1
    while f"c{number:03d}" in taken or f"c{number:03d}" in stems:
        number += 1
    return f"c{number:03d}"


def retire_card(session: Session, deck: Deck, key: str, *, now: datetime) -> SyncReport:
    source = current_source(session, deck)
    if key not in source.keys:
        raise NotFound("no such card in this deck")
    if len(source.keys) == 1 and deck.owner_team_id is not None:
        # A team's deck keeps a card for its members; a person's own deck may start over.
        raise LastCardOfDeck("a deck keeps at least one card; delete the deck instead")
    locales = {
        loc: replace(ls, cards=tuple(c for c in ls.cards if c.key != key))
        for loc, ls in source.locales.items()
    }
    return sync_owned(session, deck, replace(source, locales=locales), now=now)
