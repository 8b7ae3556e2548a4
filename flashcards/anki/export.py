"""One deck out as a legacy `.apkg`: schema-11 SQLite in a zip, no `meta`, empty `media`.

We write the collection ourselves (stdlib sqlite3, into a temporary directory that is always
removed) because genanki cannot write scheduling, revlog or FSRS data, and leaks temp files.
"""

from __future__ import annotations

import hashlib
import io
import json
import tempfile
import zipfile
from collections.abc import Callable, Set
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from fsrs.scheduler import DEFAULT_PARAMETERS
from sqlalchemy import select
from sqlalchemy.orm import Session

from ..decks.locales import display_name
from ..errors import InvalidInput, NotFound
from ..srs.marks import marks_from_row
from ..storage.models import (
    Card,
    CardMark,
    CardText,
    Deck,
    DeckText,
    ReviewLog,
    ReviewState,
    SchedulerSettings,
    Subscription,
    User,
)
from . import schema
from .collection_file import Collection, write_collection
from .sanitize import text_to_html
from .scheduling_out import SchedulingContext, card_columns, revlog_rows
from .tables import table

Progress = Callable[[int, int], None]
LOCALE_SLOTS = 64  # note id = base + card id * slots + language index


@dataclass(frozen=True)
class ExportedPackage:
    data: bytes
    filename: str
    notes: int
    reviews: int


def note_id(card_id: int, locale_index: int = 0) -> int:
    """A card's note id (and its Anki card's) in one language: the language's index in the
    low bits, so the default language's note of a card sorts first (our importer tells the
    default language back by that)."""
    return schema.ID_BASE + card_id * LOCALE_SLOTS + locale_index


def card_of(note_id: int) -> int:
    """The card of a note (`note_id`'s inverse)."""
    return (note_id - schema.ID_BASE) // LOCALE_SLOTS


def note_guid(slug: str, key: str, locale: str) -> str:
    """Stable per card and language: edits keep the guid, so Anki updates the note."""
    digest = hashlib.sha256(f"flashcards\x1f{slug}\x1f{key}\x1f{locale}".encode()).hexdigest()
    return digest[:20]


def language_name(locale: str) -> str:
    name = display_name(locale, locale)
    return name[:1].upper() + name[1:]


def back_field(answer: str, explanation: str) -> str:
    # Back holds the answer and, in a div of its own, the explanation: a Basic-like two-sided
    # note stays complete for Anki users and importers that read "first field front, second
    # field back", while the class lets CSS set it apart and our importer split it again.
    back = text_to_html(answer)
    if explanation.strip():
        back += f'<div class="{schema.EXPLANATION_CLASS}">{text_to_html(explanation)}</div>'
    return back


def _sort_field(text: str) -> str:
    return " ".join(text.split())


def _checksum(text: str) -> int:
    return int(hashlib.sha1(text.encode()).hexdigest()[:8], 16)


def export_deck(
    session: Session,
    deck_id: int,
    *,
    locales: list[str] | None,
    user_id: int | None = None,
    with_scheduling: bool = False,
    now: datetime,
    progress: Progress | None = None,
) -> ExportedPackage:
    """The deck as `.apkg` bytes; `locales=None` exports every language as subdecks.

    Every live card goes out: one that lacks a text in an exported language that is not the
    deck's goes out in the deck's language instead, as the study page shows it.

    With scheduling, `user_id`'s own review state and log go along; each card is studied in
    one language, so the state rides on that language's copy (their subscription's, else the
    first exported) and the other copies are new.
    """
    deck = session.get(Deck, deck_id)
    if deck is None:
        raise NotFound("no such deck")

    def scheduling(chosen: list[str]) -> SchedulingContext:
        return _scheduling_context(session, deck, user_id, chosen, now)

    mod_ms = int(now.timestamp() * 1000)
    rows = deck_rows(
        session,
        deck,
        locales=locales,
        scheduling=scheduling if with_scheduling else None,
        mod_ms=mod_ms,
        progress=progress,
    )
    sched = rows.sched
    decks = [schema.deck(schema.DEFAULT_DECK_ID, "Default", mod_ms // 1000), *rows.decks]
    conf = collection_conf(rows.card_count, sched)
    settings = sched.settings if sched else None
    dconf = schema.deck_config(
        mod_ms,
        learning_steps=settings.learning_steps if settings else [60, 600],
        relearning_steps=settings.relearning_steps if settings else [600],
        maximum_interval=settings.maximum_interval if settings else 36500,
        new_per_day=settings.new_per_day if settings else 20,
        reviews_per_day=settings.reviews_per_day if settings else 200,
        desired_retention=settings.desired_retention if settings else 0.9,
        parameters=sched.parameters if sched else DEFAULT_PARAMETERS,
    )
    data = _package(conf, decks, dconf, mod_ms, rows.notes, rows.cards, rows.revlog)
    suffix = "all" if locales is None else "-".join(rows.chosen)
    return ExportedPackage(data, f"{deck.slug}-{suffix}.apkg", len(rows.notes), len(rows.revlog))


@dataclass
class DeckRows:
    """One deck's rows of an Anki collection (its Default deck and options aside)."""

    chosen: list[str]  # the languages written, the deck's first
    decks: list[dict[str, Any]]
    notes: list[tuple[Any, ...]]
    cards: list[tuple[Any, ...]]
    revlog: list[tuple[Any, ...]]
    card_count: int  # live cards
    sched: SchedulingContext | None


def deck_rows(
    session: Session,
    deck: Deck,
    *,
    locales: list[str] | None,
    scheduling: Callable[[list[str]], SchedulingContext] | None,
    mod_ms: int,
    deck_id_base: int = schema.ID_BASE,
    conf_id: int = schema.DECK_CONFIG_ID,
    progress: Progress | None = None,
    usn: int = -1,
    only: Set[int] | None = None,
) -> DeckRows:
    """The deck's (sub)decks, notes, cards and, with `scheduling` (made for the languages
    chosen), its person's state and log. Note and card ids come from our card ids, deck ids
    from `deck_id_base`, so that they are the same on every export (and every sync). Rows
    carry `usn`: a package's -1 ("not yet synced"), or a sync server's own. With `only`,
    the rows of those cards alone (the deck's decks all the same)."""
    deck_id = deck.id
    titles = {
        t.locale: t for t in session.scalars(select(DeckText).where(DeckText.deck_id == deck_id))
    }
    # Plain rows rather than ORM objects: a deck can have tens of thousands of cards.
    cards_t, texts_t = table(Card), table(CardText)
    of_deck = [cards_t.c.deck_id == deck_id]
    if only is not None:
        of_deck.append(cards_t.c.id.in_(only))
    cards = session.execute(
        select(cards_t.c.id, cards_t.c.key, cards_t.c.position, cards_t.c.tags)
        .where(*of_deck, cards_t.c.retired_at.is_(None))
        .order_by(cards_t.c.position, cards_t.c.id)
    ).all()
    texts = {
        (t.card_id, t.locale): t
        for t in session.execute(
            select(texts_t).join(cards_t, cards_t.c.id == texts_t.c.card_id).where(*of_deck)
        )
    }
    available = sorted({loc for _, loc in texts} | titles.keys())
    if only is not None:
        # Whether a language is the deck's is a question about all its cards, not a few.
        available = sorted(set(available) | set(locales or []))
    if locales is None:
        chosen = [deck.default_locale] + [loc for loc in available if loc != deck.default_locale]
        chosen = [loc for loc in chosen if loc in available]
    else:
        missing = [loc for loc in locales if loc not in available]
        if missing:
            raise InvalidInput(
                f"the deck has no text in {', '.join(missing)}; it has {', '.join(available)}",
                field="locale",
            )
        chosen = list(dict.fromkeys(locales))
    if not chosen:
        raise InvalidInput("the deck has no text to export")
    if len(chosen) > LOCALE_SLOTS:
        raise InvalidInput(f"at most {LOCALE_SLOTS} languages fit in one package", field="locale")

    sched = scheduling(chosen) if scheduling is not None else None

    default_title = (
        titles[deck.default_locale].title if deck.default_locale in titles else deck.slug
    )
    deck_ids: dict[str, int] = {}
    decks = []
    if len(chosen) == 1 and locales is not None:
        loc = chosen[0]
        title = titles[loc].title if loc in titles else default_title
        deck_ids[loc] = deck_id_base + 1
        desc = text_to_html(titles[loc].description) if loc in titles else ""
        decks.append(
            schema.deck(deck_ids[loc], title.replace("::", ":"), mod_ms // 1000, desc, conf_id)
        )
    else:
        parent = default_title.replace("::", ":")
        decks.append(schema.deck(deck_id_base + 1, parent, mod_ms // 1000, "", conf_id))
        for i, loc in enumerate(chosen):
            deck_ids[loc] = deck_id_base + 2 + i
            desc = text_to_html(titles[loc].description) if loc in titles else ""
            name = f"{parent}::{language_name(loc)}"
            decks.append(schema.deck(deck_ids[loc], name, mod_ms // 1000, desc, conf_id))

    def shown(card_id: int, loc: str) -> Any:
        """The card's text in `loc`'s (sub)deck: its own, or else, as the study page shows
        it, the deck's language's, unless that language has a (sub)deck of its own already."""
        text = texts.get((card_id, loc))
        if text is None and deck.default_locale not in chosen:
            text = texts.get((card_id, deck.default_locale))
        return text

    def studied_in(card_id: int) -> str | None:
        """The (sub)deck whose note carries the card's progress: the one of the language it
        is studied in, else the deck's language's, where the study page shows it then."""
        if sched is None:
            return None
        return sched.locale if shown(card_id, sched.locale) else deck.default_locale

    notes: list[tuple[Any, ...]] = []
    card_rows: list[tuple[Any, ...]] = []
    revlog: list[tuple[Any, ...]] = []
    total = len(cards) * len(chosen)
    for locale_index, loc in enumerate(chosen):
        for card in cards:
            text = shown(card.id, loc)
            if text is None:
                continue
            nid = note_id(card.id, locale_index)
            front = text_to_html(text.question)
            fields = [front, back_field(text.answer, text.explanation), text_to_html(card.key)]
            # Anki tags are space-separated: a kept tag never holds a space (Anki's own rule).
            # Tag and guid name the language the text is in, which may not be its (sub)deck's.
            lang = text.locale
            # With progress, the person's own tags and `leech` go with the card's.
            card_tags = sched.tags(card.id, card.tags) if sched is not None else card.tags
            tags = " ".join(["", *dict.fromkeys([deck.slug, f"lang::{lang}", *card_tags]), ""])
            mod = int(text.updated_at.timestamp())
            sfld = _sort_field(text.question)
            # A text imported from Anki goes back under its note's guid: Anki knows it then.
            guid = text.anki_guid or note_guid(deck.slug, card.key, lang)
            notes.append(
                (nid, guid, schema.NOTETYPE_ID, mod, usn, tags,
                 "\x1f".join(fields), sfld, _checksum(sfld), 0, "")
            )  # fmt: skip
            studied = sched if studied_in(card.id) == loc else None
            columns = card_columns(studied, card.id, card.position)
            card_rows.append((nid, nid, deck_ids[loc], 0, mod, usn, *columns))
            if studied is not None:
                revlog.extend(revlog_rows(studied, card.id, nid))
            if progress is not None:
                progress(len(notes), total)
    return DeckRows(chosen, decks, notes, card_rows, revlog, len(cards), sched)


def collection_conf(card_count: int, sched: SchedulingContext | None) -> dict[str, Any]:
    """The collection's `conf`: with a person's progress, their day's start and FSRS on."""
    conf: dict[str, Any] = {
        "activeDecks": [schema.DEFAULT_DECK_ID],
        "curDeck": schema.DEFAULT_DECK_ID,
        "curModel": schema.NOTETYPE_ID,
        "nextPos": card_count + 1,
        "sortType": "noteFld",
        "sortBackwards": False,
        "addToCur": True,
        "collapseTime": 1200,
        "estTimes": True,
        "dueCounts": True,
        "newSpread": 0,
        "timeLim": 0,
        # Without schedVer 2 Anki "upgrades" the package from the v1 scheduler on import
        # and rewrites the eases of learning answers.
        "schedVer": 2,
        "creationOffset": 0,
        "rollover": sched.day_start_hour if sched else 4,
    }
    if sched is not None:
        conf["fsrs"] = True
    return conf


def _scheduling_context(
    session: Session, deck: Deck, user_id: int | None, chosen: list[str], now: datetime
) -> SchedulingContext:
    if user_id is None:
        raise InvalidInput("exporting with scheduling needs a user", field="user")
    user = session.get(User, user_id)
    if user is None:
        raise NotFound("no such user")
    settings = session.get(SchedulerSettings, user_id) or SchedulerSettings(
        user_id=user_id,
        desired_retention=0.9,
        learning_steps=[60, 600],
        relearning_steps=[600],
        maximum_interval=36500,
        new_per_day=20,
        reviews_per_day=200,
        parameters=None,
    )
    subscription = session.get(Subscription, (user_id, deck.id))
    locale = subscription.locale if subscription and subscription.locale in chosen else chosen[0]
    # Plain rows rather than ORM objects: a deck's log can have hundreds of thousands.
    states_t, logs_t = table(ReviewState), table(ReviewLog)
    states = {
        row.card_id: row
        for row in session.execute(
            select(states_t).where(states_t.c.user_id == user_id, states_t.c.deck_id == deck.id)
        )
    }
    logs: dict[int, list[Any]] = {}
    for log in session.execute(
        select(logs_t)
        .where(logs_t.c.user_id == user_id, logs_t.c.deck_id == deck.id)
        .order_by(logs_t.c.card_id, logs_t.c.reviewed_at, logs_t.c.id)
    ):
        logs.setdefault(log.card_id, []).append(log)
    marks_t = table(CardMark)
    marks = {
        row.card_id: marks_from_row(row)
        for row in session.execute(
            select(marks_t).where(marks_t.c.user_id == user_id, marks_t.c.deck_id == deck.id)
        )
    }
    return SchedulingContext(
        user=user,
        settings=settings,
        locale=locale,
        states=states,
        logs=logs,
        now=now,
        marks=marks,
    )


def _package(
    conf: dict[str, Any],
    decks: list[dict[str, Any]],
    dconf: dict[str, Any],
    mod_ms: int,
    notes: list[tuple[Any, ...]],
    cards: list[tuple[Any, ...]],
    revlog: list[tuple[Any, ...]],
) -> bytes:
    with tempfile.TemporaryDirectory(prefix="flashcards-apkg-") as tmp:
        path = Path(tmp) / "collection.anki2"
        write_collection(path, Collection(conf, decks, [dconf], mod_ms, notes, cards, revlog))
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.write(path, "collection.anki2")
            archive.writestr("media", json.dumps({}))
        return buffer.getvalue()
