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
(`card_rows`). A note edited on a device gives its cards their new text (`retext`); a note or
card deleted on a device retires its cards here (`retire`). A card whose note is not read
(an empty front, an unknown note type) stays kept, on devices alone.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Select, func, insert, select, update
from sqlalchemy.orm import Session

from ..anki import schema
from ..anki.errors import AnkiPackageError
from ..anki.import_rows import write_progress
from ..anki.importer import card_tags, marks_of
from ..anki.names import deck_title, home_deck
from ..anki.planning import PlannedCard, plan_cards
from ..anki.reader import AnkiCard, Collection, Note, Revlog
from ..anki.reimport import free_key
from ..anki.scheduling_in import ImportTiming, Replay, convert_card, convert_revlog
from ..anki.scheduling_out import SchedulingContext, card_columns, revlog_rows
from ..anki.structure import notetype_of
from ..anki.tables import insert_rows, table
from ..anki.timing import CRT
from ..decks.own_decks import create_own_deck
from ..errors import FlashcardsError
from ..srs.days import study_date
from ..srs.subscriptions import subscribe, unsubscribe
from ..storage.models import (
    Card,
    CardMark,
    CardText,
    Deck,
    DeckText,
    SchedulerSettings,
    Subscription,
    User,
)
from . import ids, kept, snapshot
from .wire import is_whole

FIELD_SEPARATOR = "\x1f"
NEW = 0  # a card's type: new
IMAGE_OCCLUSION = 6  # a note type's `originalStockKind`: Anki's Image Occlusion
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
    if sent_notes and kept.holds_cards(session, user_id):
        # A sync's chunks may bring a card before its note: kept then, taken with the note.
        for oid, row in kept.payloads(session, user_id, snapshot.CARD).items():
            if isinstance(row, list) and len(row) > 1 and row[1] in sent_notes:
                found[oid] = row
    cards = [c for c in map(_anki_card, found.values()) if c is not None]
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
    notes = {n.id: n for n in map(_note, note_rows.values()) if n is not None}
    notetypes = _notetypes(session, user_id, {n.mid for n in notes.values()})
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
    revlog = sorted(r for r in map(_revlog, answers.values()) if r is not None)
    coll = Collection(crt, conf or {}, notetypes, names, list(notes.values()), cards, revlog)
    try:
        planner = plan_cards(coll, user.locale, Counter(), kept.LIMIT, by_template=True)
    except AnkiPackageError:
        return Adopted()  # templates that make too much text, or too slow to read: kept as sent
    by_deck: dict[int, list[PlannedCard]] = {}
    for p in planner.planned.values():
        if len(p.anki_cards) == 1 and len(p.texts) == 1:
            by_deck.setdefault(home_deck(p.anki_cards[0]), []).append(p)
    timing = ImportTiming.from_collection(coll, user, now)
    replay = Replay.of(session.get(SchedulerSettings, user_id), timing)
    logs_of: dict[int, list[Revlog]] = {}
    for r in revlog:
        logs_of.setdefault(r.cid, []).append(r)
    adopted: set[int] = set()
    for did, planned in by_deck.items():
        deck = _deck_for(session, user, did, names.get(did, ""), now)
        if deck is None:
            continue
        _add_cards(session, user, deck, planned, logs_of, replay, timing, now)
        adopted.update(p.anki_cards[0].id for p in planned)
    # Kept from an earlier chunk or sync (its note then unread, or not yet sent): ours now.
    were_kept = kept.drop(session, user_id, snapshot.CARD, adopted)
    gone = [oid for oid, r in kept_answers.items() if isinstance(r, list) and r[1] in adopted]
    kept.drop(session, user_id, kept.REVLOG, gone)
    return Adopted(adopted, were_kept)


def _deck_for(session: Session, user: User, did: int, name: str, now: datetime) -> Deck | None:
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
        deck = create_own_deck(session, user.id, title=title, locales=[user.locale], now=now)
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
            (card_id, deck.default_locale, *_text(p), now, next(iter(p.guids.values()), None))
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


def card_rows(
    session: Session, deck: Deck, sched: SchedulingContext, *, usn: int, only: Iterable[int] | None
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], dict[int, int]]:
    """The card rows of a deck standing for a device's (its notes and the deck itself are
    kept), with the person's scheduling, and their revlog rows; and our card of each."""
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


def retext(session: Session, user_id: int, note_rows: list[list[Any]], now: datetime) -> int:
    """Notes a device sent (schema-11 rows) that are of cards studied here: the cards take
    their new text and tags; how many changed. A card whose note no longer makes it keeps
    its text."""
    sent = {n[0]: n for n in note_rows}
    if not sent:
        return 0
    mine = _studied_decks(user_id)
    ours: list[Card] = []
    wanted = sorted(sent)
    for i in range(0, len(wanted), ids.BATCH):
        ours.extend(
            session.scalars(
                select(Card).where(
                    Card.anki_note_id.in_(wanted[i : i + ids.BATCH]),
                    Card.anki_ord.is_not(None),
                    Card.deck_id.in_(mine),
                )
            )
        )
    if not ours:
        return 0
    user = session.get(User, user_id)
    assert user is not None
    notes = {
        n.id: n
        for n in (_note(sent[c.anki_note_id]) for c in ours if c.anki_note_id in sent)
        if n is not None
    }
    notetypes = _notetypes(session, user_id, {n.mid for n in notes.values()})
    stand_ins = [
        AnkiCard(c.anki_card_id or 0, c.anki_note_id or 0, 0, c.anki_ord or 0,
                 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, {})
        for c in ours
    ]  # fmt: skip
    coll = Collection(CRT, {}, notetypes, {}, list(notes.values()), stand_ins)
    try:
        planner = plan_cards(coll, user.locale, Counter(), kept.LIMIT, by_template=True)
    except AnkiPackageError:
        return 0
    planned = {p.anki_cards[0].id: p for p in planner.planned.values() if len(p.anki_cards) == 1}
    texts: dict[int, CardText] = {}
    card_ids = [c.id for c in ours]
    for i in range(0, len(card_ids), ids.BATCH):
        texts.update(
            (t.card_id, t)
            for t in session.scalars(
                select(CardText)
                .join(Card, Card.id == CardText.card_id)
                .join(Deck, Deck.id == Card.deck_id)
                .where(
                    CardText.card_id.in_(card_ids[i : i + ids.BATCH]),
                    CardText.locale == Deck.default_locale,
                )
            )
        )
    changed = 0
    for card in ours:
        p = planned.get(card.anki_card_id or 0)
        text = texts.get(card.id)
        if p is None or len(p.texts) != 1 or text is None:
            continue
        question, answer, explanation = _text(p)
        tags = card_tags(p)
        if (text.question, text.answer, text.explanation) != (question, answer, explanation):
            text.question, text.answer, text.explanation = question, answer, explanation
            text.updated_at = now
            card.updated_at = now
            changed += 1
        if list(card.tags) != tags:
            card.tags = tags
    return changed


def retitle(session: Session, user_id: int, decks: Iterable[Any], sent: dict[int, Any]) -> None:
    """Decks a device sent (`applyChanges`' deck objects), before they are kept: those
    studied here that it renamed take the new name. A deck it sends unrenamed (its study
    counts changed) keeps a name given here, as does one renamed here since its last sync
    (`sent`: the names this sync gives it, by deck id)."""
    names = {
        d["id"]: d["name"]
        for d in decks
        if isinstance(d, dict) and isinstance(d.get("name"), str) and d["name"].strip()
    }
    names = {did: name for did, name in names.items() if is_whole(did)}
    if not names:
        return
    before = kept.payloads(session, user_id, snapshot.DECK, names)
    found = session.scalars(
        select(Deck).where(Deck.owner_user_id == user_id, Deck.anki_deck_id.in_(list(names)))
    )
    for deck in found:
        assert deck.anki_deck_id is not None
        name = names[deck.anki_deck_id]
        held = before.get(deck.anki_deck_id)
        held_name = held.get("name") if isinstance(held, dict) else None
        if name == held_name:
            continue
        if deck.anki_deck_id in sent and sent[deck.anki_deck_id] != held_name:
            continue  # renamed here since: ours goes to the device
        text = session.get(DeckText, (deck.id, deck.default_locale))
        if text is not None:
            text.title = deck_title([name], name.strip())


def forget_decks(
    session: Session, user_id: int, deck_ids: Iterable[int], now: datetime
) -> set[int]:
    """A device deleted these decks (with their notes and cards): each of the person's decks
    standing for one retires the cards its notes made (history kept) and stands for no
    device deck any more: with cards added here it is an own deck as any other, which
    devices get again; without, the person stops studying it. The Anki card ids retired."""
    wanted = sorted(set(deck_ids))
    if not wanted:
        return set()
    found = session.scalars(
        select(Deck).where(Deck.owner_user_id == user_id, Deck.anki_deck_id.in_(wanted))
    ).all()
    retired: set[int] = set()
    for deck in found:
        live = session.execute(
            select(Card.id, Card.anki_card_id, Card.anki_ord).where(
                Card.deck_id == deck.id, Card.retired_at.is_(None)
            )
        ).all()
        theirs = [(card_id, cid) for card_id, cid, o in live if o is not None]
        for i in range(0, len(theirs), ids.BATCH):
            part = [card_id for card_id, _ in theirs[i : i + ids.BATCH]]
            session.execute(update(Card).where(Card.id.in_(part)).values(retired_at=now))
        if session.get(Subscription, (user_id, deck.id)) is not None:
            retired.update(cid for _, cid in theirs if cid is not None)
        deck.anki_deck_id = None
        if len(theirs) == len(live):
            unsubscribe(session, user_id, deck)
    return retired


def shown_notes(session: Session, user_id: int, note_ids: Iterable[int]) -> set[int]:
    """Which of these kept notes devices get: those with a card, ours or kept (`projection`
    leaves out a note with none, as Anki's own check deletes it)."""
    wanted = sorted(set(note_ids))
    shown: set[int] = set()
    for i in range(0, len(wanted), ids.BATCH):
        shown.update(
            nid
            for nid in session.scalars(
                select(Card.anki_note_id).where(
                    Card.anki_note_id.in_(wanted[i : i + ids.BATCH]),
                    Card.anki_ord.is_not(None),
                    Card.retired_at.is_(None),
                    Card.deck_id.in_(_studied_decks(user_id)),
                )
            )
            if nid is not None
        )
    if wanted and kept.holds_cards(session, user_id):
        asked = set(wanted)
        for row in kept.payloads(session, user_id, snapshot.CARD).values():
            if isinstance(row, list) and len(row) > 1 and row[1] in asked:
                shown.add(row[1])
    return shown


def retire(
    session: Session, user_id: int, *, notes: Iterable[int], cards: Iterable[int], now: datetime
) -> set[int]:
    """A device deleted these notes or cards: their cards here are retired (history kept);
    the Anki card ids retired."""
    mine = _studied_decks(user_id)
    retired: set[int] = set()
    for column, oids in ((Card.anki_note_id, sorted(set(notes))),
                         (Card.anki_card_id, sorted(set(cards)))):  # fmt: skip
        for i in range(0, len(oids), ids.BATCH):
            found = session.execute(
                select(Card.id, Card.anki_card_id).where(
                    column.in_(oids[i : i + ids.BATCH]),
                    Card.deck_id.in_(mine),
                    Card.anki_ord.is_not(None),
                    Card.retired_at.is_(None),
                )
            ).all()
            if found:
                session.execute(
                    update(Card).where(Card.id.in_([c for c, _ in found])).values(retired_at=now)
                )
                retired.update(cid for _, cid in found if cid is not None)
    return retired


def match_upload(
    session: Session, user_id: int, decks: set[int], present: set[int], now: datetime
) -> None:
    """A device uploaded its whole collection, which its devices now share: decks studied
    here it no longer holds (`decks`: its deck ids) are forgotten (`forget_decks`), cards of
    its notes it no longer holds (`present`: its card ids) retired, as deleted there, and
    retired ones it holds again live again."""
    mine = _studied_decks(user_id)
    gone_decks = session.scalars(
        select(Deck.anki_deck_id).where(Deck.id.in_(mine), Deck.anki_deck_id.not_in(decks))
    ).all()
    forget_decks(session, user_id, [d for d in gone_decks if d is not None], now)
    found = session.execute(
        select(Card.id, Card.anki_card_id, Card.retired_at).where(
            Card.deck_id.in_(mine), Card.anki_ord.is_not(None)
        )
    ).all()
    gone = [i for i, cid, retired in found if retired is None and cid not in present]
    back = [i for i, cid, retired in found if retired is not None and cid in present]
    for card_ids, value in ((gone, now), (back, None)):
        for i in range(0, len(card_ids), ids.BATCH):
            part = card_ids[i : i + ids.BATCH]
            session.execute(update(Card).where(Card.id.in_(part)).values(retired_at=value))


def _text(p: PlannedCard) -> tuple[str, str, str]:
    """The one language's text of a planned card of a device's note."""
    (text,) = p.texts.values()
    return text


def _studied_decks(user_id: int) -> Select[int]:
    """The person's decks standing for a device's that they study: those devices get."""
    return select(Deck.id).where(
        Deck.owner_user_id == user_id,
        Deck.anki_deck_id.is_not(None),
        Deck.id.in_(select(Subscription.deck_id).where(Subscription.user_id == user_id)),
    )


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


def _notetypes(session: Session, user_id: int, mids: set[int]) -> dict[int, Any]:
    out = {}
    for mid, payload in kept.payloads(session, user_id, snapshot.NOTETYPE, mids).items():
        if mid == schema.NOTETYPE_ID or not isinstance(payload, dict):
            continue
        if payload.get("originalStockKind") == IMAGE_OCCLUSION:
            continue  # its cards are masks over a picture: no text to study here
        try:
            out[mid] = notetype_of(payload)
        except (KeyError, TypeError, ValueError, AttributeError):
            continue  # a damaged note type: its notes stay kept
    return out


def _note(row: Any) -> Note | None:
    """A kept schema-11 note row (id, guid, mid, mod, usn, tags, flds, ...)."""
    try:
        nid, guid, mid, mod, _usn, tags, fields = row[:7]
        if not (isinstance(guid, str) and isinstance(tags, str) and isinstance(fields, str)):
            return None
        return Note(int(nid), guid, int(mid), int(mod), tags.split(), fields.split(FIELD_SEPARATOR))
    except (TypeError, ValueError):
        return None


def _anki_card(row: Any) -> AnkiCard | None:
    """A kept schema-11 card row (id, nid, did, ord, mod, usn, type, queue, due, ivl, factor,
    reps, lapses, left, odue, odid, flags, data)."""
    try:
        values = [int(v) for v in row[:17]]
    except (TypeError, ValueError):
        return None
    cid, nid, did, ord_, _mod, _usn, ctype, queue, due, ivl, factor, reps, lapses = values[:13]
    left, odue, odid, flags = values[13:17]
    try:
        data = json.loads(row[17]) if isinstance(row[17], str) and row[17] else {}
    except ValueError:
        data = {}
    return AnkiCard(cid, nid, did, ord_, ctype, queue, due, ivl, factor, reps, lapses, left,
                    odue, odid, data if isinstance(data, dict) else {}, flags & 7)  # fmt: skip


def _revlog(row: Any) -> Revlog | None:
    """A kept schema-11 revlog row (id, cid, usn, ease, ivl, lastIvl, factor, time, type)."""
    try:
        rid, cid, _usn, ease, ivl, last_ivl, factor, time, kind = (int(v) for v in row[:9])
    except (TypeError, ValueError):
        return None
    return Revlog(rid, cid, ease, ivl, last_ivl, factor, time, kind)
