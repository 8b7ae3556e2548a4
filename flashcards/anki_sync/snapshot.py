"""What devices last got of a person's collection, object by object (`AnkiSyncObject`), and
how a collection built now differs from it: Anki's usn bookkeeping for a server whose
collection is built from its own data. No Flask.

Each object's digest leaves out its `mod` and `usn` (stamps, not content): a card whose
state did not change keeps its digest however often the collection is built.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import bindparam, delete, func, insert, or_, select, update
from sqlalchemy.orm import Session

from ..anki import schema
from ..anki.collection_file import Collection
from ..anki.tables import table
from ..storage.models import AnkiSyncObject
from . import ids

CARD, NOTE, DECK, DECK_CONFIG, NOTETYPE = 1, 2, 3, 4, 5
# Positions of `mod` and `usn` in a note's and a card's row.
NOTE_MOD, NOTE_USN = 3, 4
CARD_MOD, CARD_USN = 4, 5
MANY_OIDS = 5_000  # ids in one IN list at the most (PostgreSQL binds 65,535 values)


def note_entry(row: tuple[Any, ...]) -> list[Any]:
    """A note row as the protocol sends it: its sort field and checksum empty (the client
    computes them)."""
    entry = list(row)
    entry[7], entry[8] = "", ""
    return entry


# One encoder for every digest (`json.dumps` with options makes one per call).
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"))


def _digest(content: Any) -> str:
    text = _CANONICAL.encode(content)
    return hashlib.sha1(text.encode(), usedforsecurity=False).hexdigest()


def _without_stamps_row(row: list[Any], mod: int, usn: int) -> list[Any]:
    return [*row[:mod], *row[mod + 1 : usn], *row[usn + 1 :]]  # mod before usn


def _without_stamps(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in ("mod", "usn")}


@dataclass
class Objects:
    """A built collection's objects by (kind, Anki id): their digest and wire form."""

    digests: dict[tuple[int, int], str] = field(default_factory=dict)
    payloads: dict[tuple[int, int], Any] = field(default_factory=dict)

    # The bookkeeping as read while finding them, if it was (`record_all` reuses it).
    recorded: dict[tuple[int, int], tuple[str | None, int]] | None = None

    def add(self, kind: int, oid: int, digest: str, payload: Any) -> None:
        self.digests[(kind, oid)] = digest
        self.payloads[(kind, oid)] = payload


def objects(built: Collection) -> Objects:
    return of_rows(
        notes=built.notes, cards=built.cards, decks=built.decks, dconf=built.dconf,
        notetypes=built.notetypes or [schema.notetype(built.mod_ms // 1000)],
    )  # fmt: skip


def of_rows(
    *,
    notes: Iterable[Any] = (),
    cards: Iterable[Any] = (),
    decks: Iterable[dict[str, Any]] = (),
    dconf: Iterable[dict[str, Any]] = (),
    notetypes: Iterable[dict[str, Any]] = (),
) -> Objects:
    """The objects of these rows (a collection's, or some kept as a device sent them)."""
    found = Objects()
    for note in notes:
        entry = note_entry(note)
        found.add(NOTE, entry[0], _digest(_without_stamps_row(entry, NOTE_MOD, NOTE_USN)), entry)
    for card in cards:
        entry = list(card)
        found.add(CARD, entry[0], _digest(_without_stamps_row(entry, CARD_MOD, CARD_USN)), entry)
    for deck in decks:
        found.add(DECK, deck["id"], _digest(_without_stamps(deck)), deck)
    for group in dconf:
        found.add(DECK_CONFIG, group["id"], _digest(_without_stamps(group)), group)
    for notetype in notetypes:
        found.add(NOTETYPE, notetype["id"], _digest(_without_stamps(notetype)), notetype)
    return found


def record_all(
    session: Session, user_id: int, found: Objects, usn: int, was: Recorded | None = None
) -> None:
    """After a full download: the device holds exactly these objects, as of `usn`.

    Written as a difference from what is recorded (`was`, if read already): objects new or
    changed take `usn`, objects gone go; the others keep theirs, which is below it (the
    device's next sync asks from above `usn`, another device's finds only what changed). A
    download after a few answers rewrites a few rows. `found` and `was` may both be a part
    of the collection (the same part): the objects outside it keep their rows.
    """
    objs = table(AnkiSyncObject)
    if was is None:
        was = recorded(session, user_id)
    known = {key: digest for key, (digest, _) in was.items()}
    gone = [{"k": kind, "o": oid} for kind, oid in known.keys() - found.digests.keys()]
    changed, added = [], []
    for (kind, oid), digest in found.digests.items():
        if (kind, oid) not in known:
            added.append(
                {"user_id": user_id, "kind": kind, "oid": oid, "usn": usn, "digest": digest}
            )
        elif known[(kind, oid)] != digest:
            changed.append({"k": kind, "o": oid, "d": digest})
    mine = (objs.c.user_id == user_id, objs.c.kind == bindparam("k"), objs.c.oid == bindparam("o"))
    if gone:
        session.execute(delete(objs).where(*mine), gone)
    if changed:
        session.execute(update(objs).where(*mine).values(digest=bindparam("d"), usn=usn), changed)
    if added:
        session.execute(insert(objs), added)


def record_changes(session: Session, user_id: int, found: Objects, usn: int) -> None:
    """Objects new or changed since devices last got them take `usn`; objects gone become
    graves at `usn`."""
    objs = table(AnkiSyncObject)
    known = {
        (r.kind, r.oid): r.digest
        for r in session.execute(
            select(objs.c.kind, objs.c.oid, objs.c.digest).where(objs.c.user_id == user_id)
        )
    }
    added = []
    for key, digest in found.digests.items():
        if key not in known:
            added.append(
                {"user_id": user_id, "kind": key[0], "oid": key[1], "usn": usn, "digest": digest}
            )
        elif known[key] != digest:
            _set(session, user_id, key, usn, digest)
    for key, digest in known.items():
        # Anki has no graves for options groups: one a device got stays there (unused).
        if digest is not None and key not in found.digests and key[0] != DECK_CONFIG:
            _set(session, user_id, key, usn, None)
    if added:
        session.execute(insert(objs), added)


def record_some(
    session: Session, user_id: int, found: Objects, keys: Iterable[tuple[int, int]], usn: int
) -> None:
    """These objects of `found` (a part of the collection) are what devices hold as of
    `usn`: a device's own change, taken as it is. One forgotten (`forget`) stays so: it is
    to be sent again."""
    known = recorded_of(session, user_id, oids={oid for _, oid in keys}, since=usn + 1)
    added = []
    for key in keys:
        digest = found.digests.get(key)
        if digest is None or (key in known and known[key][0] == ""):
            continue
        if key in known:
            _set(session, user_id, key, usn, digest)
        else:
            added.append(
                {"user_id": user_id, "kind": key[0], "oid": key[1], "usn": usn, "digest": digest}
            )
    if added:
        session.execute(insert(table(AnkiSyncObject)), added)


def _set(
    session: Session, user_id: int, key: tuple[int, int], usn: int, digest: str | None
) -> None:
    objs = table(AnkiSyncObject)
    session.execute(
        update(objs)
        .where(objs.c.user_id == user_id, objs.c.kind == key[0], objs.c.oid == key[1])
        .values(usn=usn, digest=digest)
    )


def forget(session: Session, user_id: int, keys: Iterable[tuple[int, int]]) -> None:
    """Objects a device deleted, or holds otherwise than we do: the next sync sends them
    again (we hold them)."""
    objs = table(AnkiSyncObject)
    by_kind: dict[int, list[int]] = {}
    for kind, oid in keys:
        by_kind.setdefault(kind, []).append(oid)
    # A few hundred a statement: a sync can carry thousands of answered cards.
    for kind, oids in by_kind.items():
        for i in range(0, len(oids), ids.BATCH):
            session.execute(
                update(objs)
                .where(objs.c.user_id == user_id, objs.c.kind == kind,
                       objs.c.oid.in_(oids[i : i + ids.BATCH]))
                .values(usn=-1, digest="")
            )  # fmt: skip


Recorded = dict[tuple[int, int], tuple[str | None, int]]


def recorded(session: Session, user_id: int) -> Recorded:
    """Each object's recorded digest and usn (a grave's digest is None, a forgotten one's
    empty)."""
    objs = table(AnkiSyncObject)
    rows = session.execute(
        select(objs.c.kind, objs.c.oid, objs.c.digest, objs.c.usn).where(objs.c.user_id == user_id)
    )
    return {(kind, oid): (digest, usn) for kind, oid, digest, usn in rows}


def recorded_of(session: Session, user_id: int, *, oids: Iterable[int], since: int) -> Recorded:
    """`recorded` of some objects only: the notes and cards `oids`, every object of the
    other kinds (a handful), and every object whose usn is `since` or above, or forgotten.
    Many `oids` (a sync that brings a shared deck's tens of thousands): all of them, in one
    read rather than a list of ids past a database's limit on bound values."""
    wanted = sorted(set(oids))
    if len(wanted) > MANY_OIDS:
        return recorded(session, user_id)
    objs = table(AnkiSyncObject)
    rows = session.execute(
        select(objs.c.kind, objs.c.oid, objs.c.digest, objs.c.usn).where(
            objs.c.user_id == user_id,
            or_(
                objs.c.kind.not_in((NOTE, CARD)),
                objs.c.usn >= since,
                objs.c.usn < 0,
                objs.c.oid.in_(wanted),
            ),
        )
    )
    return {(kind, oid): (digest, usn) for kind, oid, digest, usn in rows}


def forgotten(session: Session, user_id: int) -> bool:
    """Whether a device deleted objects we hold (`forget`), which the next sync sends."""
    objs = table(AnkiSyncObject)
    return (
        session.scalar(
            select(objs.c.oid).where(objs.c.user_id == user_id, objs.c.digest == "").limit(1)
        )
        is not None
    )


def changed_since(session: Session, user_id: int, min_usn: int) -> list[tuple[int, int, bool]]:
    """(kind, oid, deleted) of each object changed at or after `min_usn`."""
    objs = table(AnkiSyncObject)
    rows = session.execute(
        select(objs.c.kind, objs.c.oid, objs.c.digest)
        .where(objs.c.user_id == user_id, objs.c.usn >= min_usn)
        .order_by(objs.c.kind, objs.c.oid)
    )
    return [(r.kind, r.oid, r.digest is None) for r in rows]


def held(session: Session, user_id: int, kind: int) -> int:
    """How many objects of `kind` devices hold (graves aside)."""
    objs = table(AnkiSyncObject)
    return int(
        session.scalar(
            select(func.count())
            .select_from(objs)
            .where(objs.c.user_id == user_id, objs.c.kind == kind, objs.c.digest.is_not(None))
        )
        or 0
    )
