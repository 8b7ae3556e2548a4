"""Decks a device made, studied on the web too. No Flask.

A card a device made, in a deck of its own, of a note type the `.apkg` importer reads
(Basic, Basic and reversed, Cloze, any note type whose cards have a front: `planning`),
becomes a card of an own deck of the person's that stands for the device's deck
(`Deck.anki_deck_id`): its text is rendered from the note, its scheduling and answers become
the person's review state and log, its suspension, burial and flag their marks. From then on
it is studied, answered and counted as any other card of theirs, on the web, through the API
and on every device.

What the service does not model stays as the device sent it (`kept`): the note with all its
fields, the note type with its templates and styling, the deck and its options group. Each
device gets back the same note under the same ids; only the card's scheduling is ours
(`card_rows`). A device's later edits, renames and deletions are `adopted_changes`'. A card
whose note is not read (an empty front, an unknown note type, Image Occlusion) stays kept,
on devices alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session

from ..anki.errors import AnkiPackageError
from ..anki.import_rows import write_progress
from ..anki.importer import card_tags, marks_of
from ..anki.names import deck_title, home_deck
from ..anki.planning import PlannedCard, plan_cards
from ..anki.reader import AnkiCard, Collection, Revlog
from ..anki.reimport import free_key
from ..anki.scheduling_in import ImportTiming, Replay, convert_card, convert_revlog
from ..anki.scheduling_out import SchedulingContext, card_columns, revlog_rows
from ..anki.tables import insert_rows, table
from ..anki.timing import CRT
from ..decks.own_decks import create_own_deck
from ..errors import FlashcardsError
from ..srs.days import study_date
from ..srs.subscriptions import subscribe
from ..storage.models import (
    Card,
    CardMark,
    CardText,
    Deck,
    SchedulerSettings,
    Subscription,
    User,
)
from . import device_rows_read as read
from . import ids, kept, snapshot

NEW = 0  # a card's type: new
MAX_POSITION = 2**31 - 1


@dataclass(frozen=True)
class Adopted:
    cards: set[int] = field(default_factory=set)  # Anki card ids, now cards of ours
    were_kept: set[int] = field(default_factory=set)  # of them, those kept before


def adopt(
    session: Session,
    user_id: int,
    rows: dict[str, list[list[Any]]],
    *,
    now: datetime,
    crt: int = CRT,
    conf: dict[str, Any] | None = None,
) -> Adopted:
    """Cards a device sent that are not ours (`kept.unknown_rows`: a chunk's, or a whole
    upload's), and kept cards of the notes among them, that can be studied here become
    cards of the person's decks standing for their devices' decks, with their answers (the
    caller keeps the others). `crt` and `conf` are the collection's the cards' due days count
    from (an upload's own; else ours, which every device that downloaded from us has)."""
    user = session.get(User, user_id)
    if user is None:
        return Adopted()
    sent_notes = {n[0]: n for n in rows.get("notes", [])}
    found: dict[int, Any] = {c[0]: c for c in rows.get("cards", [])}
    # A sync's chunks may bring a card before its note: kept then, taken with the note.
    found.update(kept.cards_of_notes(session, user_id, sent_notes))
    cards = [c for c in map(read.card_of, found.values()) if c is not None]
    # Not in a deck of ours (a device's deck id can fall on one of our numbers too).
    ours = {
        ids.deck_id_base(d) + 1
        for d in session.scalars(
            select(Subscription.deck_id).where(Subscription.user_id == user_id)
        )
    }
    cards = [c for c in cards if home_deck(c) not in ours]
    # A card one of their decks has already, studied or left, live or retired (a device
    # makes a retired card of a note again when the note is edited), stays kept.
    known = _known(session, user_id, cards)
    cards = [c for c in cards if c.id not in known]
    if not cards:
        return Adopted()
    nids = {c.nid for c in cards}
    note_rows = {nid: sent_notes[nid] for nid in nids if nid in sent_notes}
    note_rows.update(kept.payloads(session, user_id, snapshot.NOTE, nids - note_rows.keys()))
    notes = {n.id: n for n in map(read.note_of, note_rows.values()) if n is not None}
    notetypes = read.notetypes(session, user_id, {n.mid for n in notes.values()})
    notes = {nid: n for nid, n in notes.items() if n.mid in notetypes}
    cards = [c for c in cards if c.nid in notes]
    deck_rows = kept.payloads(session, user_id, snapshot.DECK, {home_deck(c) for c in cards})
    names = {did: str(d.get("name", "")) for did, d in deck_rows.items() if isinstance(d, dict)}
    wanted = {c.id for c in cards}
    # Their answers: the ones sent with them, and any kept from an earlier chunk.
    kept_answers = (
        kept.payloads(session, user_id, kept.REVLOG) if kept.holds_answers(session, user_id) else {}
    )
    answers = {
        r[0]: r for r in kept_answers.values() if isinstance(r, list) and r[1:2] and r[1] in wanted
    }
    answers.update((r[0], r) for r in rows.get("revlog", []) if r[1] in wanted)
    revlog = sorted(r for r in map(read.revlog_of, answers.values()) if r is not None)
    logs_of: dict[int, list[Revlog]] = {}
    for r in revlog:
        logs_of.setdefault(r.cid, []).append(r)
    in_deck: dict[int, list[AnkiCard]] = {}
    for c in cards:
        in_deck.setdefault(home_deck(c), []).append(c)
    adopted: set[int] = set()
    # Deck by deck: a deck whose notes the planner refuses (templates that make too much
    # text, too slow to read) stays on the devices alone, the others are taken.
    for did, its_cards in in_deck.items():
        its_notes = [notes[nid] for nid in dict.fromkeys(c.nid for c in its_cards)]
        coll = Collection(crt, conf or {}, notetypes, names, its_notes, its_cards)
        try:
            planner = plan_cards(coll, user.locale, Counter(), kept.LIMIT, by_template=True)
        except AnkiPackageError:
            continue
        planned = [
            p for p in planner.planned.values() if len(p.anki_cards) == 1 and len(p.texts) == 1
        ]
        deck = deck_for(session, user, did, names.get(did, ""), now) if planned else None
        if deck is None:
            continue
        timing = ImportTiming.from_collection(coll, user, now)
        replay = Replay.of(session.get(SchedulerSettings, user_id), timing)
        _add_cards(session, user, deck, planned, logs_of, replay, timing, now)
        adopted.update(p.anki_cards[0].id for p in planned)
    # Kept from an earlier chunk or sync (its note then unread, or not yet sent): ours now.
    were_kept = kept.drop(session, user_id, snapshot.CARD, adopted)
    gone = [oid for oid, r in kept_answers.items() if isinstance(r, list) and r[1] in adopted]
    kept.drop(session, user_id, kept.REVLOG, gone)
    return Adopted(adopted, were_kept)


def deck_for(session: Session, user: User, did: int, name: str, now: datetime) -> Deck | None:
    """The person's deck standing for the device's deck `did`, made if need be."""
    deck = session.scalar(
        select(Deck).where(Deck.owner_user_id == user.id, Deck.anki_deck_id == did)
    )
    if deck is not None:
        if session.get(Subscription, (user.id, deck.id)) is None:
            subscribe(session, user.id, deck, None, now=now)  # left here, studied there again
        return deck
    title = deck_title([name], name.strip() or "Default")
    try:
        deck = create_own_deck(
            session, user.id, title=title, locales=[user.locale], now=now, from_device=True
        )
    except FlashcardsError:
        return None  # a name the web would refuse too: the deck stays on the devices
    deck.anki_deck_id = did
    return deck


def _add_cards(
    session: Session,
    user: User,
    deck: Deck,
    planned: list[PlannedCard],
    logs_of: dict[int, list[Revlog]],
    replay: Replay,
    timing: ImportTiming,
    now: datetime,
) -> None:
    keys = set(session.scalars(select(Card.key).where(Card.deck_id == deck.id)))
    last = session.scalar(select(func.max(Card.position)).where(Card.deck_id == deck.id))
    first = -1 if last is None else last
    cards_t = table(Card)
    rows = []
    for i, p in enumerate(planned, 1):
        anki = p.anki_cards[0]
        # A new card keeps its place in Anki's order of new cards (its due), here as there.
        position = min(max(anki.due, 0), MAX_POSITION) if anki.type == NEW else first + i
        rows.append({
            "deck_id": deck.id, "key": free_key(p.key, keys), "position": position,
            "tags": card_tags(p), "note_key": p.note_key, "created_at": now, "updated_at": now,
            "anki_note_id": anki.nid, "anki_card_id": anki.id, "anki_ord": anki.ord,
        })  # fmt: skip
    card_ids = list(
        session.scalars(insert(cards_t).returning(cards_t.c.id, sort_by_parameter_order=True), rows)
    )
    # A note is read in one language, whichever the planner names it: the deck's.
    insert_rows(
        session,
        CardText,
        ("card_id", "locale", "question", "answer", "explanation", "updated_at", "anki_guid"),
        (
            (
                card_id,
                deck.default_locale,
                *read.text_of(p),
                now,
                next(iter(p.guids.values()), None),
            )
            for card_id, p in zip(card_ids, planned, strict=True)
        ),
    )
    progress_of = {}
    settings = session.get(SchedulerSettings, user.id)
    for index, p in enumerate(planned):
        anki = p.anki_cards[0]
        answers = convert_revlog(logs_of.get(anki.id, []), replay)
        state = convert_card(anki, answers, settings, timing)
        if state is not None:
            progress_of[index] = (state, answers)
    write_progress(session, user.id, deck.id, list(card_ids), progress_of)
    today = study_date(now, user.timezone, user.day_start_hour)
    marks = [
        {"user_id": user.id, "card_id": card_id, "deck_id": deck.id, **found}
        for card_id, p in zip(card_ids, planned, strict=True)
        if (found := marks_of(p, today)) is not None
    ]
    if marks:
        session.execute(insert(table(CardMark)), marks)


def _guid(p: PlannedCard) -> str | None:
    return next(iter(p.guids.values()), None)


def card_rows(
    session: Session, deck: Deck, sched: SchedulingContext | None, *, usn: int,
    only: Iterable[int] | None,
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], dict[int, int]]:  # fmt: skip
    """The card rows of a deck standing for a device's (its notes and the deck itself are
    kept), with the person's scheduling (without: new cards), and their revlog rows; and our
    card of each."""
    assert deck.anki_deck_id is not None
    where = [Card.deck_id == deck.id, Card.retired_at.is_(None), Card.anki_ord.is_not(None)]
    if only is not None:
        where.append(Card.id.in_(list(only)))
    found = session.execute(
        select(Card.id, Card.position, Card.anki_note_id, Card.anki_card_id, Card.anki_ord,
               Card.updated_at).where(*where).order_by(Card.position)
    )  # fmt: skip
    cards: list[tuple[Any, ...]] = []
    revlog: list[tuple[Any, ...]] = []
    card_of: dict[int, int] = {}
    for card_id, position, nid, cid, ord_, updated in found:
        assert cid is not None  # each such card has its Anki ids (`_add_cards`)
        columns = card_columns(sched, card_id, position)
        if not columns[-1]:
            columns = (*columns[:-1], "{}")  # no data, as Anki writes it
        mod = int(updated.timestamp())
        cards.append((cid, nid, deck.anki_deck_id, ord_, mod, usn, *columns))
        if sched is not None:
            revlog.extend(revlog_rows(sched, card_id, cid))
        card_of[cid] = card_id
    return cards, revlog, card_of


def added_here(session: Session, deck: Deck, only: Iterable[int] | None) -> set[int]:
    """The live cards of a deck standing for a device's that were added here (of our note
    type): of `only`, if given."""
    where = [Card.deck_id == deck.id, Card.retired_at.is_(None), Card.anki_ord.is_(None)]
    if only is not None:
        where.append(Card.id.in_(list(only)))
    return set(session.scalars(select(Card.id).where(*where)))


def _known(session: Session, user_id: int, cards: list[AnkiCard]) -> set[int]:
    """Which of these Anki cards a deck of the person's already has: by id, or as the same
    card of the same note."""
    owned = select(Deck.id).where(Deck.owner_user_id == user_id)
    by_id = sorted({c.id for c in cards})
    known: set[int] = set()
    for i in range(0, len(by_id), ids.BATCH):
        known.update(
            session.scalars(
                select(Card.anki_card_id).where(
                    Card.anki_card_id.in_(by_id[i : i + ids.BATCH]), Card.deck_id.in_(owned)
                )
            )
        )
    nids = sorted({c.nid for c in cards})
    places: set[tuple[int | None, int | None]] = set()
    for i in range(0, len(nids), ids.BATCH):
        places.update(
            session.execute(
                select(Card.anki_note_id, Card.anki_ord).where(
                    Card.anki_note_id.in_(nids[i : i + ids.BATCH]),
                    Card.anki_ord.is_not(None),
                    Card.deck_id.in_(owned),
                )
            ).all()
        )
    known.update(c.id for c in cards if (c.nid, c.ord) in places)
    return known
