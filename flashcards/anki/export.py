"""One deck out as a legacy `.apkg`: schema-11 SQLite in a zip, no `meta`, and the images
and sounds its notes name, from the deck owner's media folder (`media`: number to name).

We write the collection ourselves (stdlib sqlite3, into a temporary directory that is always
removed) because genanki cannot write scheduling, revlog or FSRS data, and leaks temp files.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable, Set
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from itertools import groupby, starmap
from operator import itemgetter
from typing import Any

from fsrs.scheduler import DEFAULT_PARAMETERS
from sqlalchemy import select
from sqlalchemy.orm import Session

from ..decks import deck_tree
from ..decks.locales import display_name
from ..errors import InvalidInput, NotFound
from ..people import media_folder
from ..srs import answer_effects
from ..srs.marks import marks_from_row
from ..srs.subscriptions import with_subdecks
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
from .collection_file import Collection, collection_bytes
from .export_notes import (
    LOCALE_SLOTS,
    CardRow,
    NoteWriter,
    TextRow,
    back_field,
    card_of,
    note_guid,
    note_id,
    sibling_groups,
)
from .gc_pause import gc_paused
from .reader import names_in_fields
from .sanitize import text_to_html
from .scheduling_out import LOG_COLUMNS, SchedulingContext, StateRow
from .tables import table
from .utc_reads import columns

Progress = Callable[[int, int], None]
# zlib's level for the package: level 1 deflates a collection a few times faster than the
# default 6, for a package about a tenth larger.
ZIP_LEVEL = 1
NOTE_FIELDS = 6  # a schema-11 note row's fields
__all__ = ["LOCALE_SLOTS", "back_field", "card_of", "note_guid", "note_id"]


@dataclass(frozen=True)
class ExportedPackage:
    data: bytes
    filename: str
    notes: int
    reviews: int


def language_name(locale: str) -> str:
    name = display_name(locale, locale)
    return name[:1].upper() + name[1:]


def anki_deck_name(title: str, fallback: str) -> str:
    """A title as an Anki deck name: "::" parts are subdecks, as in the name it came from;
    Anki has no empty parts."""
    return deck_tree.anki_name(title) or fallback


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
    """The deck as `.apkg` bytes; `locales=None` exports every language as subdecks. The
    subdecks `user_id` studies under it go along, each an Anki deck of its own title.

    Every live card goes out: one that lacks a text in an exported language that is not the
    deck's goes out in the deck's language instead, as the study page shows it.

    With scheduling, `user_id`'s own review state and log go along; each card is studied in
    one language, so the state rides on that language's copy (their subscription's, else the
    first exported) and the other copies are new.
    """
    deck = session.get(Deck, deck_id)
    if deck is None:
        raise NotFound("no such deck")
    # The subdecks the person studies under it go along, as Anki exports a deck's children;
    # but a deck standing for a device's, whose notes are the device's own (`adopted_export`)
    # and would reach that device as conflicting copies of another note type.
    under = list(with_subdecks(session, user_id, deck))[1:] if user_id is not None else []
    found = session.scalars(select(Deck).where(Deck.id.in_(under), Deck.anki_deck_id.is_(None)))
    subdecks = sorted(found, key=lambda d: under.index(d.id))  # parents first
    mod_ms = int(now.timestamp() * 1000)
    # Half a million rows and tuples made and kept: no collections walking them (a quarter
    # of bench_apkg_export's time, 1.39 s against 1.05 s on 2026-12-06; `gc_pause`).
    with gc_paused():
        parts: list[DeckRows] = []
        for number, exported in enumerate([deck, *subdecks]):
            scheduling = None
            if with_scheduling:
                scheduling = partial(scheduling_context, session, exported, user_id, now=now)
            wanted = (
                locales if number == 0
                else _subdeck_locales(session, exported, parts[0].chosen, locales)
            )  # fmt: skip
            parts.append(
                deck_rows(
                    session,
                    exported,
                    locales=wanted,
                    scheduling=scheduling,
                    mod_ms=mod_ms,
                    # Each deck's (language sub)decks their own ids; notes' and cards' are
                    # their cards' ids, apart already.
                    deck_id_base=schema.ID_BASE + number * (LOCALE_SLOTS + 2),
                    conf_id=schema.PACKAGE_CONFIG_ID,
                    progress=progress if number == 0 else None,
                    siblings=True,
                )
            )
        rows = parts[0]
        decks = [schema.deck(schema.DEFAULT_DECK_ID, "Default", mod_ms // 1000)]
        notetypes: dict[Any, dict[str, Any]] = {}
        for part in parts:
            decks.extend(part.decks)
            notetypes.update((t["id"], t) for t in part.notetypes)
        suffix = "all" if locales is None else "-".join(rows.chosen)
        return package(
            session, [deck, *subdecks], f"{deck.slug}-{suffix}.apkg", rows.sched, mod_ms,
            Collection(
                collection_conf(sum(p.card_count for p in parts), rows.sched), decks, [], mod_ms,
                [n for p in parts for n in p.notes], [c for p in parts for c in p.cards],
                [r for p in parts for r in p.revlog], notetypes=list(notetypes.values()),
            ),
        )  # fmt: skip


def _subdeck_locales(
    session: Session, subdeck: Deck, chosen: list[str], asked: list[str] | None
) -> list[str] | None:
    """A subdeck's languages in its parent's package: all of them as the parent's, else the
    parent's one where the subdeck has it, else the subdeck's own."""
    if asked is None:
        return None
    has = set(session.scalars(select(DeckText.locale).where(DeckText.deck_id == subdeck.id)))
    return [loc for loc in chosen if loc in has] or [subdeck.default_locale]


def package(
    session: Session,
    decks: list[Deck],
    filename: str,
    sched: SchedulingContext | None,
    mod_ms: int,
    collection: Collection,
) -> ExportedPackage:
    """The `.apkg` of a collection of the rows of `decks` (its options group made here, from
    the person's settings with `sched`, else the defaults), with the media its notes name."""
    settings = sched.settings if sched else None
    # With progress, the person's own options for an answer's siblings and leeches.
    study = answer_effects.options(session, sched.user.id) if sched else answer_effects.Options()
    dconf = schema.deck_config(
        mod_ms,
        config_id=schema.PACKAGE_CONFIG_ID,
        learning_steps=settings.learning_steps if settings else [60, 600],
        relearning_steps=settings.relearning_steps if settings else [600],
        maximum_interval=settings.maximum_interval if settings else 36500,
        new_per_day=settings.new_per_day if settings else 20,
        reviews_per_day=settings.reviews_per_day if settings else 200,
        desired_retention=settings.desired_retention if settings else 0.9,
        parameters=sched.parameters if sched else DEFAULT_PARAMETERS,
        bury_new=study.bury_new,
        bury_reviews=study.bury_reviews,
        bury_interday=study.bury_interday,
        leech_threshold=study.leech_threshold,
        leech_suspend=study.leech_suspend,
    )
    collection = replace(collection, dconf=[dconf])
    data = _package(collection, _media(session, decks, collection.notes))
    return ExportedPackage(data, filename, len(collection.notes), len(collection.revlog))


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
    notetypes: list[dict[str, Any]]  # the note types the notes are of
    card_of: dict[int, int]  # our card of each Anki card id


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
    siblings: bool = False,
) -> DeckRows:
    """The deck's (sub)decks, notes, cards and, with `scheduling` (made for the languages
    chosen), its person's state and log. Note and card ids come from our card ids, deck ids
    from `deck_id_base`, so that they are the same on every export (and every sync). Rows
    carry `usn`: a package's -1 ("not yet synced"), or a sync server's own. With `only`,
    the rows of those cards alone (the deck's decks all the same). With `siblings`, cards
    of one note go out as one note (`export_notes`), else each card as a note of its own."""
    deck_id = deck.id
    titles = {
        t.locale: t for t in session.scalars(select(DeckText).where(DeckText.deck_id == deck_id))
    }
    # Plain rows rather than ORM objects: a deck can have tens of thousands of cards.
    cards_t, texts_t = table(Card), table(CardText)
    of_deck = [cards_t.c.deck_id == deck_id]
    if only is not None:
        of_deck.append(cards_t.c.id.in_(only))
    card_rows = session.execute(
        select(*columns(cards_t, CardRow._fields))
        .where(*of_deck, cards_t.c.retired_at.is_(None))
        .order_by(cards_t.c.position, cards_t.c.id)
    )
    cards = list(starmap(CardRow, card_rows.all()))
    text_rows = session.execute(
        select(*columns(texts_t, TextRow._fields))
        .join(cards_t, cards_t.c.id == texts_t.c.card_id)
        .where(*of_deck)
    )
    texts = {(t.card_id, t.locale): t for t in starmap(TextRow, text_rows.all())}
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
        name = anki_deck_name(title, deck.slug)
        decks.append(schema.deck(deck_ids[loc], name, mod_ms // 1000, desc, conf_id))
    else:
        parent = anki_deck_name(default_title, deck.slug)
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

    writer = NoteWriter(deck.slug, sched, shown, studied_in, deck_ids, usn, mod_ms)
    groups = sibling_groups(cards, siblings)
    total = len(groups) * len(chosen)
    for locale_index, loc in enumerate(chosen):
        for done, group in enumerate(groups, 1):
            writer.group(group, loc, locale_index)
            if progress is not None:
                progress(locale_index * len(groups) + done, total)
    return DeckRows(
        chosen, decks, writer.notes, writer.cards, writer.revlog, len(cards), sched,
        list(writer.notetypes.values()), writer.card_of,
    )  # fmt: skip


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
        # Today, in Anki's day numbers: without it Anki takes its first queue as a new day's
        # and unburies the cards that went out buried.
        conf["lastUnburied"] = sched.day(sched.now)
    return conf


def scheduling_context(
    session: Session, deck: Deck, user_id: int | None, chosen: list[str], now: datetime
) -> SchedulingContext:
    """`user_id`'s settings, state, log and marks on the deck, for its rows in a package."""
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
    # The columns the export reads alone, fetched at once: a deck's log can have hundreds of
    # thousands, and each timestamp read is a conversion.
    states_t, logs_t = table(ReviewState), table(ReviewLog)
    state_rows = session.execute(
        select(*columns(states_t, StateRow._fields)).where(
            states_t.c.user_id == user_id, states_t.c.deck_id == deck.id
        )
    )
    states = {row.card_id: row for row in starmap(StateRow, state_rows.all())}
    log_rows = session.execute(
        select(*columns(logs_t, ["card_id", *LOG_COLUMNS]))
        .where(logs_t.c.user_id == user_id, logs_t.c.deck_id == deck.id)
        .order_by(logs_t.c.card_id, logs_t.c.reviewed_at, logs_t.c.id)
    )
    logs = {card_id: list(rows) for card_id, rows in groupby(log_rows.all(), itemgetter(0))}
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


def _media(session: Session, decks: list[Deck], notes: list[tuple[Any, ...]]) -> dict[str, bytes]:
    """The files the notes name that the decks' owners have (a shared or team deck has no
    media folder: its notes name none that we keep)."""
    owners = sorted({d.owner_user_id for d in decks if d.owner_user_id is not None})
    named = names_in_fields(n[NOTE_FIELDS] for n in notes) if owners else set()
    media: dict[str, bytes] = {}
    for owner in owners if named else []:
        found = media_folder.live_files(session, owner, named)
        data = media_folder.contents(session, owner, found.values())
        media.update((name, data[sha1]) for name, sha1 in found.items() if sha1 in data)
        named -= media.keys()
    return dict(sorted(media.items()))


def _package(collection: Collection, media: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=ZIP_LEVEL) as archive:
        archive.writestr("collection.anki2", collection_bytes(collection))
        listing = {}
        for index, (name, content) in enumerate(media.items()):
            # Images and sounds are compressed already: stored, not deflated again.
            archive.writestr(str(index), content, compress_type=zipfile.ZIP_STORED)
            listing[str(index)] = name
        archive.writestr("media", json.dumps(listing))
    return buffer.getvalue()
