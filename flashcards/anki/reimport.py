"""A package imported again updates the deck it came from, by its notes' GUIDs.

A person who exports a deck, studies or edits it in Anki and imports it back (or imports the
same Anki deck twice) means that deck, not a second copy beside it. The deck is found among
the person's own decks by the GUIDs its texts were imported under (`CardText.anki_guid`), or,
for a deck made here, by the GUIDs our export gives its cards (`note_guid`; its notes carry
the deck's slug as a tag, "flashcards::<slug>"), which finds the shipped and team decks they
study too. Cards are then matched by key, else by GUID; in their own deck, matched cards get
the package's texts and tags, and keep everyone's progress, and the others are added. A deck
that is not theirs keeps its texts and cards: only their progress comes in.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.orm import Session

from ..decks.cloze_source import cloze_number
from ..storage.models import Card, CardText, Deck, DeckText, Subscription
from .export_notes import exported_guid
from .import_rows import title_of
from .planning import PlannedCard, marked_slugs
from .tables import table


@dataclass
class DeckFinder:
    """The owner's decks by the GUIDs their cards reached Anki under, read once: a package
    of several decks looks up each of them."""

    decks: dict[int, Deck]
    imported: dict[int, set[str]]  # GUIDs texts were imported under (`CardText.anki_guid`)
    exported: dict[int, set[str]]  # GUIDs our export gives the other texts

    @classmethod
    def of(cls, session: Session, owner_user_id: int, tags: set[str]) -> DeckFinder:
        """The owner's decks, and the decks they study that are not theirs (shipped, a
        team's) whose slug the package's notes carry among `tags`, as our export tags them;
        a deck made here is known only so (the GUIDs our export gave it are hashed here)."""
        slugs = marked_slugs(tags)
        studied = select(Subscription.deck_id).where(Subscription.user_id == owner_user_id)
        decks = {
            d.id: d
            for d in session.scalars(
                select(Deck).where(
                    (Deck.owner_user_id == owner_user_id)
                    | (Deck.id.in_(studied) & Deck.slug.in_(slugs))
                )
            )
        }
        finder = cls(decks, {}, {})
        # Only what names a text, not the texts: a person may have tens of thousands.
        for row in _deck_texts(session, list(decks), with_texts=False) if decks else ():
            slug = decks[row.deck_id].slug
            if row.anki_guid is not None:
                finder.imported.setdefault(row.deck_id, set()).add(row.anki_guid)
            elif slug in slugs:
                finder.exported.setdefault(row.deck_id, set()).update(_guids(slug, row))
        return finder

    def find(self, guids: set[str], tags: set[str]) -> Deck | None:
        """The deck that notes of `guids` (tagged `tags`) came from: the one with most GUIDs
        in common, if that is more than half of them. Notes sharing a few with a deck
        ("Spanish 2" beside "Spanish 1") are another deck, imported as one. A deck made here
        is known by its export's GUIDs only when the notes carry its slug as a tag."""
        if not guids:
            return None
        enough: dict[int, int] = {}
        slugs = marked_slugs(tags)
        for deck_id, deck in self.decks.items():
            mine = self.imported.get(deck_id, set())
            if deck.slug in slugs:
                mine = mine | self.exported.get(deck_id, set())
            shared = len(mine & guids)
            if 2 * shared > len(guids):
                enough[deck_id] = shared
        if not enough:
            return None
        best = max(enough.values())
        # Two decks of one package (imported twice as copies): the newer copy is kept up.
        return self.decks[max(deck_id for deck_id, n in enough.items() if n == best)]


def titles_near(session: Session, owner_user_id: int) -> list[str]:
    """The titles, in every language, of the decks the person owns or studies: the names
    their library's tree is made of."""
    studied = select(Subscription.deck_id).where(Subscription.user_id == owner_user_id)
    return list(
        session.scalars(
            select(DeckText.title)
            .join(Deck, Deck.id == DeckText.deck_id)
            .where((Deck.owner_user_id == owner_user_id) | Deck.id.in_(studied))
        )
    )


def _deck_texts(session: Session, deck_ids: list[int], *, with_texts: bool) -> Iterable[Any]:
    """A row per card text of the decks: what names it, and with `with_texts` what it says."""
    cards_t, texts_t = table(Card), table(CardText)
    columns = [cards_t.c.deck_id, cards_t.c.key, cards_t.c.note_key, texts_t.c.locale,
               texts_t.c.anki_guid]  # fmt: skip
    if with_texts:
        columns += [cards_t.c.id, cards_t.c.tags, cards_t.c.retired_at, texts_t.c.question,
                    texts_t.c.answer, texts_t.c.explanation]  # fmt: skip
    return session.execute(
        select(*columns)
        .join(texts_t, texts_t.c.card_id == cards_t.c.id)
        .where(cards_t.c.deck_id.in_(deck_ids))
    )


def _guids(slug: str, row: Any) -> set[str]:
    """The GUIDs a text may have reached Anki under: Anki's own, or the one our export gave
    it, alone or with its siblings as one note (which of them depends on the export)."""
    if row.anki_guid is not None:
        return {row.anki_guid}
    return {
        exported_guid(slug, row.key, row.note_key, row.locale, alone=alone)
        for alone in (True, False)
    }


@dataclass
class Matched:
    """The deck's cards as the package's planned cards meet them."""

    card_ids: list[int | None]  # by planned card; None: a new card
    changed_texts: list[dict[str, Any]] = field(default_factory=list)  # rows to update
    added_texts: list[dict[str, Any]] = field(default_factory=list)  # languages new to a card
    changed_tags: dict[int, list[str]] = field(default_factory=dict)
    changed_cards: set[int] = field(default_factory=set)
    revived: set[int] = field(default_factory=set)  # retired here, back with the package
    keys: set[str] = field(default_factory=set)  # the deck's keys, taken
    next_position: int = 0


def match(
    session: Session, deck: Deck, planned: list[PlannedCard], tags_of: Any, now: Any
) -> Matched:
    """Each planned card's card in `deck` (by key, else by a GUID only one card has), and what
    changes on the matched ones. `tags_of(planned card)` gives the tags a card keeps."""
    rows = list(_deck_texts(session, [deck.id], with_texts=True))
    by_key: dict[str, int] = {}
    texts: dict[tuple[int, str], Any] = {}
    tags: dict[int, list[str]] = {}
    retired: set[int] = set()
    guid_cards: dict[tuple[str, str], set[int]] = {}
    # A Cloze note's cards share its GUID: each is its deletion number's. Its keys need not
    # be the ones the package makes of the note's (a text typed here keys its cards apart
    # from its note key, `card_editing.add_cards`).
    deletion_cards: dict[tuple[str, str, int], set[int]] = {}
    for row in rows:
        by_key[row.key] = row.id
        texts[(row.id, row.locale)] = row
        tags[row.id] = list(row.tags or [])
        if row.retired_at is not None:
            retired.add(row.id)
        number = cloze_number(row.key)
        for exported in _guids(deck.slug, row):
            guid_cards.setdefault((row.locale, exported), set()).add(row.id)
            if number is not None:
                deletion_cards.setdefault((row.locale, exported, number), set()).add(row.id)
    by_guid = {k: next(iter(ids)) for k, ids in guid_cards.items() if len(ids) == 1}
    by_deletion = {k: next(iter(ids)) for k, ids in deletion_cards.items() if len(ids) == 1}
    keys = set(session.scalars(select(Card.key).where(Card.deck_id == deck.id)))
    last = session.scalar(select(Card.position).where(Card.deck_id == deck.id).order_by(
        Card.position.desc()).limit(1))  # fmt: skip
    result = Matched([], keys=keys, next_position=(last or 0) + 1)
    used: set[int] = set()
    for p in planned:
        card_id = by_key.get(p.key)
        if card_id is None:
            card_id = next(
                (c for loc, g in p.guids.items() if (c := by_guid.get((loc, g))) is not None),
                None,
            )
        number = cloze_number(p.key)
        if card_id is None and number is not None:
            card_id = next(
                (
                    c
                    for loc, g in p.guids.items()
                    if (c := by_deletion.get((loc, g, number))) is not None
                ),
                None,
            )
        if card_id is None or card_id in used:
            result.card_ids.append(None)
            continue
        used.add(card_id)
        result.card_ids.append(card_id)
        if card_id in retired:
            # Removed here but still in the package: back in the deck, as Anki adds a note
            # deleted since the package was made, and as a deck file's card comes back.
            result.revived.add(card_id)
            result.changed_cards.add(card_id)
        for loc, (question, answer, explanation) in p.texts.items():
            guid = p.guids.get(loc)
            values = {"question": question, "answer": answer, "explanation": explanation}
            old = texts.get((card_id, loc))
            if old is None:
                result.added_texts.append(
                    {"card_id": card_id, "locale": loc, **values, "updated_at": now,
                     "anki_guid": guid}
                )  # fmt: skip
                result.changed_cards.add(card_id)
            elif (old.question, old.answer, old.explanation) != (question, answer, explanation):
                result.changed_texts.append(
                    {"card_id": card_id, "locale": loc, **values, "updated_at": now,
                     "anki_guid": old.anki_guid or guid}
                )  # fmt: skip
                result.changed_cards.add(card_id)
        wanted = tags_of(p)
        if card_id in tags and wanted != tags[card_id]:
            result.changed_tags[card_id] = wanted
            result.changed_cards.add(card_id)
    return result


def _update_cards(session: Session, card_ids: set[int], values: dict[str, Any]) -> None:
    ids = sorted(card_ids)
    cards_t = table(Card)
    for start in range(0, len(ids), 500):  # within every database's limit of parameters
        chunk = ids[start : start + 500]
        session.execute(update(cards_t).where(cards_t.c.id.in_(chunk)).values(values))


def free_key(wanted: str, taken: set[str]) -> str:
    """`wanted`, or numbered until no card of the deck has it (keys are unique per deck)."""
    key, n = wanted, 2
    while key in taken:
        key = f"{wanted[:90]}-{n}"
        n += 1
    taken.add(key)
    return key


@dataclass
class Applied:
    card_ids: list[int | None]  # by planned card; None: left out
    added: int
    changed: int
    missing_language: int  # new cards without a text in the deck's language, left out


def apply(
    session: Session,
    deck: Deck,
    planned: list[PlannedCard],
    matched: Matched,
    tags_of: Any,
    note_key_of: Any,
    now: Any,
) -> Applied:
    """Write what `match` found: changed texts and tags, new languages, new cards."""
    texts_t = table(CardText)
    for row in matched.changed_texts:
        session.execute(
            update(texts_t)
            .where(texts_t.c.card_id == row["card_id"], texts_t.c.locale == row["locale"])
            .values({k: v for k, v in row.items() if k not in ("card_id", "locale")})
        )
    cards_t = table(Card)
    for tagged, tags in matched.changed_tags.items():
        session.execute(update(cards_t).where(cards_t.c.id == tagged).values(tags=tags))
    # Anki devices are sent a card again when it changes (its `updated_at`), tags alone too.
    _update_cards(session, matched.changed_cards, {"updated_at": now})
    _update_cards(session, matched.revived, {"retired_at": None})
    card_ids = list(matched.card_ids)
    new_rows: list[dict[str, Any]] = []
    new_index: list[int] = []
    missing = 0
    for i, (p, card_id) in enumerate(zip(planned, card_ids, strict=True)):
        if card_id is not None:
            continue
        if deck.default_locale not in p.texts:
            # Everyone is shown a card in the deck's language when theirs is missing.
            missing += 1
            continue
        new_index.append(i)
        new_rows.append(
            {"deck_id": deck.id, "key": free_key(p.key, matched.keys),
             "position": matched.next_position + len(new_rows), "tags": tags_of(p),
             "note_key": note_key_of(p), "created_at": now, "updated_at": now}
        )  # fmt: skip
    if new_rows:
        ids = session.scalars(
            insert(Card).returning(Card.id, sort_by_parameter_order=True), new_rows
        ).all()
        for i, new_id in zip(new_index, ids, strict=True):
            card_ids[i] = new_id
    text_rows = list(matched.added_texts)
    text_rows.extend(
        {"card_id": card_ids[i], "locale": loc, "question": q, "answer": a, "explanation": e,
         "updated_at": now, "anki_guid": planned[i].guids.get(loc)}
        for i in new_index
        for loc, (q, a, e) in planned[i].texts.items()
    )  # fmt: skip
    if text_rows:
        session.execute(insert(texts_t), text_rows)
    titled = set(session.scalars(select(DeckText.locale).where(DeckText.deck_id == deck.id)))
    title = title_of(session, deck)
    for loc in sorted({row["locale"] for row in text_rows} - titled):
        session.add(DeckText(deck_id=deck.id, locale=loc, title=title))
    if new_rows or matched.changed_cards:
        deck.updated_at = now
    return Applied(card_ids, len(new_rows), len(matched.changed_cards), missing)
