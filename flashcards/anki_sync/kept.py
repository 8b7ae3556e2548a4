"""What a device made that the service does not model, kept per person as Anki sent it and
given back in every collection built for their devices (`projection`): note types, decks
and options groups of its own, and notes we did not take as cards (`device_notes.add`: of
another note type, in a deck made on the device or one the person may not edit here), with
their cards and answers. So each of the person's devices gets them, and a sync's counts
agree instead of asking for a full sync. No Flask.

Rows are the protocol's schema-11 wire forms (`AnkiKeptObject.payload`); a device's later
change replaces one, its deletion (a grave) removes it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from http import HTTPStatus
from typing import Any

from sqlalchemy import ColumnElement, delete, func, select, update
from sqlalchemy.orm import Session

from ..anki import schema
from ..anki.tables import insert_rows, table
from ..storage.models import AnkiKeptObject, Subscription
from ..storage.schema import MAX_ID
from . import device_marks, ids, snapshot
from .wire import Refused, bad_request, is_plain_row, is_whole

REVLOG = 6  # beside snapshot's kinds: answers to kept cards
BATCH = 500
# Objects kept per person, answers aside: far more than a personal collection's own note
# types, decks, notes and cards, and a bound on what a device can make us store and send
# every build.
LIMIT = 200_000
KEPT_COLUMNS = ("user_id", "kind", "oid", "usn", "payload", "updated_at")
# Where a schema-11 note or card row has its modification time.
MOD_INDEX = {snapshot.NOTE: 3, snapshot.CARD: 4}


@dataclass
class Kept:
    notetypes: list[dict[str, Any]] = field(default_factory=list)
    decks: list[dict[str, Any]] = field(default_factory=list)
    dconf: list[dict[str, Any]] = field(default_factory=list)
    notes: list[list[Any]] = field(default_factory=list)
    cards: list[list[Any]] = field(default_factory=list)
    revlog: list[list[Any]] = field(default_factory=list)


_LISTS = {
    snapshot.NOTETYPE: "notetypes",
    snapshot.DECK: "decks",
    snapshot.DECK_CONFIG: "dconf",
    snapshot.NOTE: "notes",
    snapshot.CARD: "cards",
    REVLOG: "revlog",
}


def load(session: Session, user_id: int) -> Kept:
    kept = Kept()
    rows = session.execute(
        select(AnkiKeptObject.kind, AnkiKeptObject.payload)
        .where(AnkiKeptObject.user_id == user_id)
        .order_by(AnkiKeptObject.kind, AnkiKeptObject.oid)
    )
    for kind, payload in rows:
        getattr(kept, _LISTS[kind]).append(payload)
    return kept


def kept_ids(session: Session, user_id: int, kind: int, oids: Iterable[int]) -> set[int]:
    """Which of `oids` are kept objects of `kind`."""
    found: set[int] = set()
    for where in _batches(user_id, kind, oids):
        found.update(session.scalars(select(AnkiKeptObject.oid).where(*where)))
    return found


def payloads(
    session: Session, user_id: int, kind: int, oids: Iterable[int] | None = None
) -> dict[int, Any]:
    """The kept objects of `kind` by id: those of `oids`, else all."""
    if oids is not None:
        return _payloads(session, user_id, kind, oids)
    rows = session.execute(
        select(AnkiKeptObject.oid, AnkiKeptObject.payload).where(
            AnkiKeptObject.user_id == user_id, AnkiKeptObject.kind == kind
        )
    )
    return {oid: payload for oid, payload in rows}


def ids_from(session: Session, user_id: int, kinds: Iterable[int], least: int) -> set[int]:
    """The ids of kept objects of `kinds` from `least` up."""
    return set(
        session.scalars(
            select(AnkiKeptObject.oid).where(
                AnkiKeptObject.user_id == user_id,
                AnkiKeptObject.kind.in_(list(kinds)),
                AnkiKeptObject.oid >= least,
            )
        )
    )


def _payloads(session: Session, user_id: int, kind: int, oids: Iterable[int]) -> dict[int, Any]:
    found: dict[int, Any] = {}
    for where in _batches(user_id, kind, oids):
        query = select(AnkiKeptObject.oid, AnkiKeptObject.payload).where(*where)
        found.update({oid: payload for oid, payload in session.execute(query)})
    return found


def _holds(session: Session, user_id: int, kind: int) -> bool:
    """Whether any object of `kind` is kept (none, after an upload cleared them: then a
    hundred thousand new ones need no lookup)."""
    found = session.scalar(
        select(AnkiKeptObject.oid)
        .where(AnkiKeptObject.user_id == user_id, AnkiKeptObject.kind == kind)
        .limit(1)
    )
    return found is not None


def _batches(
    user_id: int, kind: int, oids: Iterable[int]
) -> Iterator[tuple[ColumnElement[bool], ...]]:
    """The person's kept objects of `kind` with these ids, as conditions a batch at a time."""
    wanted = sorted(set(oids))
    for i in range(0, len(wanted), BATCH):
        yield (
            AnkiKeptObject.user_id == user_id,
            AnkiKeptObject.kind == kind,
            AnkiKeptObject.oid.in_(wanted[i : i + BATCH]),
        )


def keep(
    session: Session,
    user_id: int,
    kind: int,
    entries: dict[int, Any],
    *,
    usn: int,
    now: datetime,
) -> int:
    """Keep these objects of `kind` by id, or replace the kept ones unless what is kept is
    newer (as Anki's server does; the newer then goes back to the device, which has not got
    it); how many were new."""
    if not entries:
        return 0
    held = _payloads(session, user_id, kind, entries) if _holds(session, user_id, kind) else {}
    objs = table(AnkiKeptObject)
    mine = (AnkiKeptObject.user_id == user_id, AnkiKeptObject.kind == kind)
    for oid in held:
        if _mod(kind, entries[oid]) < _mod(kind, held[oid]):
            continue
        session.execute(
            update(objs)
            .where(*mine, AnkiKeptObject.oid == oid)
            .values(payload=entries[oid], usn=usn, updated_at=now)
        )
    # An upload keeps a hundred thousand at once: in bulk (`insert_rows`).
    new = [
        (user_id, kind, oid, usn, payload, now)
        for oid, payload in entries.items()
        if oid not in held
    ]
    insert_rows(session, AnkiKeptObject, KEPT_COLUMNS, new)
    return len(new)


def _mod(kind: int, payload: Any) -> float:
    """When a kept object last changed, by its own `mod` (answers never change)."""
    if isinstance(payload, dict):
        value = payload.get("mod")
    else:
        index = MOD_INDEX.get(kind)
        value = payload[index] if index is not None and len(payload) > index else None
    return value if isinstance(value, int | float) else 0


def drop(session: Session, user_id: int, kind: int, oids: Iterable[int]) -> set[int]:
    """A device deleted these: the kept ones among them go; those."""
    gone = kept_ids(session, user_id, kind, oids)
    # A batch a statement: cards studied here (`adopted`) leave a hundred thousand answers.
    for where in _batches(user_id, kind, gone):
        session.execute(delete(AnkiKeptObject).where(*where), execution_options={
            "synchronize_session": False
        })  # fmt: skip
    return gone


def revlog_since(session: Session, user_id: int, min_usn: int) -> list[list[Any]]:
    """Kept answers a device with `min_usn` has not got."""
    return list(
        session.scalars(
            select(AnkiKeptObject.payload)
            .where(
                AnkiKeptObject.user_id == user_id,
                AnkiKeptObject.kind == REVLOG,
                AnkiKeptObject.usn >= min_usn,
            )
            .order_by(AnkiKeptObject.oid)
        )
    )


def cards_of_notes(session: Session, user_id: int, note_ids: Iterable[int]) -> dict[int, Any]:
    """The kept cards of these notes, by id (a card row names its note second; none kept
    after an upload cleared them, or every card studied here, is the usual case)."""
    wanted = set(note_ids)
    if not wanted or not holds_cards(session, user_id):
        return {}
    return {
        oid: row
        for oid, row in payloads(session, user_id, snapshot.CARD).items()
        if isinstance(row, list) and len(row) > 1 and row[1] in wanted
    }


def holds_cards(session: Session, user_id: int) -> bool:
    return _holds(session, user_id, snapshot.CARD)


def holds_notes(session: Session, user_id: int) -> bool:
    return _holds(session, user_id, snapshot.NOTE)


def holds_answers(session: Session, user_id: int) -> bool:
    return _holds(session, user_id, REVLOG)


def counted(unknown: dict[str, list[Any]]) -> int:
    """How many of `unknown_rows`' rows count towards `LIMIT`: notes and cards (answers are
    bounded by what a sync or an upload may carry)."""
    return len(unknown.get("notes", ())) + len(unknown.get("cards", ()))


def make_room(session: Session, user_id: int, incoming: int) -> None:
    """413 (the sync refused, nothing kept) if `incoming` more objects would pass `LIMIT`."""
    held = session.scalar(
        select(func.count()).where(AnkiKeptObject.user_id == user_id, AnkiKeptObject.kind != REVLOG)
    )
    if (held or 0) + incoming > LIMIT:
        raise Refused(
            HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
            f"at most {LIMIT} objects Anki made that the service does not model are kept",
        )


def fingerprint(session: Session, user_id: int) -> tuple[int, str]:
    """How many objects are kept and when the last changed: part of the collection's."""
    count, latest = session.execute(
        select(func.count(), func.max(AnkiKeptObject.updated_at)).where(
            AnkiKeptObject.user_id == user_id
        )
    ).one()
    return int(count or 0), str(latest)


def take_changes(
    session: Session, user_id: int, changes: dict[str, Any], *, usn: int, now: datetime
) -> tuple[list[int], int]:
    """The note types, decks and options groups of an `applyChanges` that are the device's
    own (not ours: a device's change to one of ours stays on it). How many of each were
    new ([note types, decks, options groups]), and how many were taken in all."""
    models = changes.get("models") or []
    pair = changes.get("decks") or [[], []]
    if not isinstance(pair, list) or len(pair) != 2:
        raise bad_request("applyChanges' decks are [decks, options groups]")
    decks, dconf = pair
    for name, value in (("models", models), ("decks", decks), ("options", dconf)):
        if not isinstance(value, list) or not all(
            isinstance(o, dict) and is_whole(o.get("id")) for o in value
        ):
            raise bad_request(f"{name} must be a list of objects with 64-bit whole-number ids")
    subscribed = session.scalars(
        select(Subscription.deck_id).where(Subscription.user_id == user_id)
    )
    # The Default deck is the collection's, not ours: the device's (collapsed, renamed) goes.
    ours = {ids.deck_id_base(d) + 1 for d in subscribed}
    own_models = {m["id"]: m for m in models if m["id"] != schema.NOTETYPE_ID}
    own_decks = {d["id"]: d for d in decks if d["id"] not in ours}
    # Ours are 1 (the person's settings) and 1 + a deck's id; a device's are times in ms
    # (an Anki of 2015's too), past any of ours.
    own_dconf = {c["id"]: c for c in dconf if c["id"] > schema.DECK_CONFIG_ID + MAX_ID}
    taken = ((snapshot.NOTETYPE, own_models), (snapshot.DECK, own_decks),
             (snapshot.DECK_CONFIG, own_dconf))  # fmt: skip
    make_room(session, user_id, sum(len(objects) for _, objects in taken))
    default = {schema.DEFAULT_DECK_ID} & own_decks.keys() - kept_ids(
        session, user_id, snapshot.DECK, [schema.DEFAULT_DECK_ID]
    )
    new = [keep(session, user_id, kind, objects, usn=usn, now=now) for kind, objects in taken]
    new[1] -= len(default)  # the Default deck kept replaces ours: no deck more
    return new, sum(len(objects) for _, objects in taken)


# The schema-11 row lengths of notes, cards and revlog rows.
ROW_LENGTHS = {"notes": 11, "cards": 18, "revlog": 9}


def unknown_rows(
    session: Session, user_id: int, part: dict[str, Any]
) -> dict[str, list[list[Any]]]:
    """A chunk's notes, cards and answers that are not of our cards, as sent (400 for a
    malformed row): kept at the sync's end (`take_rows`), unless a new note became a card
    of ours (`device_notes.add`)."""
    out: dict[str, list[list[Any]]] = {}
    for name, length in ROW_LENGTHS.items():
        rows = part.get(name) or []
        if not isinstance(rows, list):
            raise bad_request(f"a chunk's {name} must be a list")
        for entry in rows:
            if (
                not is_plain_row(entry, length)
                or type(entry[0]) is not int
                or (name != "notes" and type(entry[1]) is not int)
            ):
                raise bad_request(
                    f"a row of {name} has {length} plain values (whole numbers of 64 bits), "
                    "its id first"
                )
        by_id = ids.cards_of(
            session,
            user_id,
            (e[1] if name == "revlog" else e[0] for e in rows),
            notes=name == "notes",
        )
        at = 1 if name == "revlog" else 0
        # Anki's rows have exactly `length` values: copied only if a device sent more. A
        # change by hand to one of our cards is kept too: no answer of ours stands for it.
        out[name] = [
            e if len(e) == length else e[:length]
            for e in rows
            if e[at] not in by_id or (name == "revlog" and by_hand(e))
        ]
    return out


def by_hand(row: list[Any]) -> bool:
    """Whether a revlog row (schema 11: ease at 3, type at 8) is a change by hand."""
    return device_marks.by_hand(row[3], row[8])


def take_rows(
    session: Session,
    user_id: int,
    unknown: dict[str, list[list[Any]]],
    *,
    usn: int,
    now: datetime,
) -> tuple[int, int, int]:
    """Keep the rows of `unknown_rows` still not of our cards: (new cards, new notes, rows
    taken)."""
    notes = unknown.get("notes", [])
    cards = unknown.get("cards", [])
    revlog = unknown.get("revlog", [])
    ours_n = ids.cards_of(session, user_id, (n[0] for n in notes), notes=True)
    ours_c = ids.cards_of(session, user_id, (c[0] for c in cards), notes=False)
    ours_r = ids.cards_of(session, user_id, (r[1] for r in revlog), notes=False)
    taken = {
        snapshot.NOTE: {n[0]: n for n in notes if n[0] not in ours_n},
        snapshot.CARD: {c[0]: c for c in cards if c[0] not in ours_c},
        REVLOG: {r[0]: r for r in revlog if r[1] not in ours_r or by_hand(r)},
    }
    new = {
        kind: keep(session, user_id, kind, rows, usn=usn, now=now) for kind, rows in taken.items()
    }
    return new[snapshot.CARD], new[snapshot.NOTE], sum(len(rows) for rows in taken.values())
