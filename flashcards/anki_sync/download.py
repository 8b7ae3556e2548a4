"""A full download: the person's collection file (`projection.build`, written as a schema-11
SQLite file), kept in the database and sent again while nothing changed, or patched when
answers alone changed since it was made. No Flask."""

from __future__ import annotations

import json
import sqlite3
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..anki.collection_file import read_collection, write_collection, write_rows
from ..anki.export import LOCALE_SLOTS, note_id
from ..anki.tables import table
from ..storage.models import (
    AnkiCollection,
    AnkiCollectionFile,
    Card,
    ReviewLog,
)
from . import sessions, snapshot
from .projection import SERVER_USN, build
from .wire import compress_file, decompress


def newest_log_id(session: Session, user_id: int) -> int:
    return int(
        session.scalar(select(func.max(ReviewLog.id)).where(ReviewLog.user_id == user_id)) or 0
    )


@dataclass(frozen=True)
class Download:
    compressed: bytes  # zstd, as the protocol sends it
    size: int  # uncompressed bytes (`anki-original-size`)


def collection_file(session: Session, user_id: int, *, now: datetime) -> Download:
    """The person's collection file, every row marked as the server's; from here on the
    device holds it (the usn bookkeeping of `snapshot` starts again from it).

    The file last downloaded is sent again while nothing changed since (same fingerprint,
    same usn): the bookkeeping it began still holds. When only answers were given since (on
    the web or the API), that file gets the rows of the cards answered again (`patched`).
    Else it is built. Either way it is kept.
    """
    stamps = sessions.collection(session, user_id, now)
    print_ = sessions.fingerprint(session, user_id)
    kept = session.get(AnkiCollectionFile, user_id)
    if (
        kept is not None
        and kept.fingerprint == print_ == stamps.fingerprint
        and kept.usn == stamps.usn
    ):
        return Download(kept_data(session, user_id), kept.size)
    mod = sessions.current_mod(stamps, print_, now)
    held_at = stamps.usn
    # The file carries the next usn: what changes from now on is above what it holds.
    made = patched(session, user_id, kept, stamps, print_, now=now, mod_ms=mod)
    if made is None:
        made = built(session, user_id, now=now, mod_ms=mod, usn=held_at + 1)
    data, found = made
    snapshot.record_all(session, user_id, found, held_at, found.recorded)
    stamps.usn = held_at + 1
    stamps.mod = mod
    stamps.fingerprint = print_
    # The newest answer the fingerprint saw: one written since is sent by the next sync.
    read = sessions.Fingerprint.parse(print_)
    newest = read.newest_log if read is not None else newest_log_id(session, user_id)
    stamps.log_marks = {str(held_at + 1): newest}
    out = Download(compress_file(data), len(data))
    if kept is None:
        kept = AnkiCollectionFile(user_id=user_id)
        session.add(kept)
    kept.fingerprint, kept.usn = print_, stamps.usn
    kept.size, kept.data = out.size, out.compressed
    session.flush()
    return out


def kept_data(session: Session, user_id: int) -> bytes:
    """The kept file's bytes. PostgreSQL sends them in binary: as text a bytea comes
    hex-encoded, twice its size, and is decoded in Python (several times slower)."""
    files = table(AnkiCollectionFile)
    connection = session.connection()
    if connection.dialect.name != "postgresql":
        return bytes(
            session.execute(select(files.c.data).where(files.c.user_id == user_id)).one()[0]
        )
    driver: Any = connection.connection.driver_connection
    with driver.cursor(binary=True) as cursor:
        cursor.execute(f"SELECT data FROM {files.name} WHERE user_id = %s", (user_id,))
        (data,) = cursor.fetchone()
    return bytes(data)


def built(
    session: Session, user_id: int, *, now: datetime, mod_ms: int, usn: int
) -> tuple[bytes, snapshot.Objects]:
    """The whole collection file, and all its objects."""
    projection = build(session, user_id, now=now, mod_ms=mod_ms, usn=usn)
    found = snapshot.objects(projection.collection)
    with tempfile.TemporaryDirectory(prefix="flashcards-sync-") as tmp:
        path = Path(tmp) / "collection.anki2"
        write_collection(path, projection.collection)
        _as_servers(path)
        return path.read_bytes(), found


# Beyond this many cards answered since the kept file, building it all again is as quick.
PATCH_LIMIT = 500
# How many answers since the kept file are read to find those cards, at most.
PATCH_LOG_LIMIT = 10 * PATCH_LIMIT


def patched(
    session: Session,
    user_id: int,
    kept: AnkiCollectionFile | None,
    stamps: AnkiCollection,
    print_: str,
    *,
    now: datetime,
    mod_ms: int,
) -> tuple[bytes, snapshot.Objects] | None:
    """The kept file with the rows of the cards answered since it was built made again,
    when answers are all that changed since (else None): its fingerprint differs from
    today's in the answers alone, no sync finished since (a device's answers can give a
    card's log again), no answer it holds was undone, and few cards were answered. A card's
    rows depend on its own state and log only, so the other rows stand.

    Returns the file, and the objects whose bookkeeping may have changed (with what is
    recorded of them, for `snapshot.record_all`): the answered cards' notes and cards, those
    a sync or a device touched since the file (recorded at its usn or above, or forgotten),
    and the decks, options and note type. The others are as the kept file recorded them."""
    if kept is None or kept.usn != stamps.usn or kept.fingerprint != stamps.fingerprint:
        return None
    before, after = sessions.Fingerprint.parse(kept.fingerprint), sessions.Fingerprint.parse(print_)
    if before is None or after is None or before.rest != after.rest:
        return None
    answered = answered_since(session, user_id, before, after)
    if answered is None or _any_retired(session, answered):
        # A retired card's answers are built with the whole collection alone (`projection`).
        return None
    # In memory: the file never touches the disk, and `serialize` gives it back whole.
    conn = sqlite3.connect(":memory:")
    try:
        conn.deserialize(decompress(kept_data(session, user_id), kept.size))
        # Every copy of an answered card (one note per language) goes, with its log; a card
        # made from a device's note has that note's ids.
        ranges = [(note_id(card), note_id(card, LOCALE_SLOTS - 1)) for card in answered]
        device_ids = session.execute(
            select(Card.anki_note_id, Card.anki_card_id, Card.anki_ord).where(
                Card.id.in_(answered), Card.anki_note_id.is_not(None)
            )
        ).all()
        # A note of the device's own note type stays (`adopted`): only its card is rebuilt.
        note_ranges: list[tuple[int, int]] = ranges + [
            (nid, nid) for nid, _, o in device_ids if nid is not None and o is None
        ]
        card_ranges: list[tuple[int, int]] = ranges + [
            (cid, cid) for _, cid, _ in device_ids if cid is not None
        ]
        held: set[int] = set()
        by_table = [("notes", "id", note_ranges), ("cards", "id", card_ranges),
                    ("revlog", "cid", card_ranges)]  # fmt: skip
        for name, _column, of_table in by_table[:2]:
            select_ids = f"SELECT id FROM {name} WHERE id BETWEEN ? AND ?"
            for low, high in of_table:
                held.update(oid for (oid,) in conn.execute(select_ids, (low, high)))
        for name, column, of_table in by_table:
            conn.executemany(f"DELETE FROM {name} WHERE {column} BETWEEN ? AND ?", of_table)
        taken = TakenInFile(conn)
        projection = build(session, user_id, now=now, mod_ms=mod_ms, usn=stamps.usn + 1,
                           only=answered, taken=taken)  # fmt: skip
        write_rows(conn, projection.collection)
        conn.execute("UPDATE col SET mod = ?, usn = ?", (mod_ms, stamps.usn + 1))
        conn.commit()
        made = {row[0] for row in projection.collection.notes}
        made.update(row[0] for row in projection.collection.cards)
        was = snapshot.recorded_of(session, user_id, oids=held | made, since=kept.usn)
        touched = {oid for kind, oid in was if kind in (snapshot.NOTE, snapshot.CARD)}
        found = snapshot.objects(read_collection(conn, only=made | touched))
        found.recorded = was
        return conn.serialize(), found
    finally:
        conn.close()


def _any_retired(session: Session, card_ids: set[int]) -> bool:
    found = session.scalar(
        select(Card.id).where(Card.id.in_(card_ids), Card.retired_at.is_not(None)).limit(1)
    )
    return found is not None


def answered_since(
    session: Session, user_id: int, before: sessions.Fingerprint, after: sessions.Fingerprint
) -> set[int] | None:
    """The cards answered since the fingerprint `before`, if the log changed by new answers
    alone since (`after` is today's): the rows up to its newest are as many, and their
    latest time the same, as then (an undone answer and a new one can leave the newest id
    as it was, as SQLite gives a freed id again). None if not, or if too many."""
    logs = table(ReviewLog)
    new = session.scalars(
        select(logs.c.card_id)
        .where(logs.c.user_id == user_id, logs.c.id > before.newest_log)
        .limit(PATCH_LOG_LIMIT + 1)
    ).all()
    answered = set(new)
    if not answered or len(new) > PATCH_LOG_LIMIT or len(answered) > PATCH_LIMIT:
        return None
    latest = session.scalar(
        select(logs.c.reviewed_at)
        .where(logs.c.user_id == user_id, logs.c.id <= before.newest_log)
        .order_by(logs.c.reviewed_at.desc())
        .limit(1)
    )
    held = after.logs - len(new)
    if sessions.answers_digest(before.newest_log or None, held, latest) != before.answers:
        return None
    return answered


class TakenInFile(dict[int, int]):
    """The revlog ids an open collection file holds, as `SchedulingContext.next_free` wants
    them: looked up as they are probed, not read all (a log can have a hundred thousand)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        super().__init__()
        self.conn = conn

    def __contains__(self, key: object) -> bool:
        return super().__contains__(key) or (
            self.conn.execute("SELECT 1 FROM revlog WHERE id = ?", (key,)).fetchone() is not None
        )

    def __missing__(self, key: int) -> int:
        return key + 1  # a taken id's next candidate


def _as_servers(path: Path) -> None:
    """Objects a package marks as "not yet synced" (usn -1) become the server's: a device
    that downloaded them must not send them back as its own changes. (Rows are built with
    the server's usn.)"""
    conn = sqlite3.connect(path)
    try:
        models, decks, dconf = conn.execute("SELECT models, decks, dconf FROM col").fetchone()
        blobs = []
        for blob in (models, decks, dconf):
            objects = json.loads(blob)
            for value in objects.values():
                value["usn"] = SERVER_USN
            blobs.append(json.dumps(objects))
        conn.execute("UPDATE col SET models = ?, decks = ?, dconf = ?", blobs)
        conn.commit()
    finally:
        conn.close()
