"""A full upload (Anki's `upload`): a device sends its whole collection, to replace what the
person's devices share. No Flask.

The service stays the source of truth for its own decks, so an upload is taken as a device's
changes are in a normal sync, with the device's side winning every difference: its answers
to our cards become answers here, its marks and its edits of cards the person may edit are
taken, notes it added to their decks become cards; everything else it made (note types,
decks, options groups, notes of other kinds, their cards and answers) replaces what devices
had made before (`kept`), kept as it sent it. Then the device holds exactly what it sent
(`snapshot`): its next normal sync brings it what the service holds beyond that (our decks
it lacked, our recomputed states). The collection's schema time becomes the device's, so
the person's other devices are asked for a full sync, as AnkiWeb asks them.

A collection is untrusted: it is read with the `.apkg` reader's rules (a time budget, no
views or generated columns, rows counted before they are read) before anything is written.
"""

from __future__ import annotations

import sqlite3
import tempfile
from datetime import datetime
from http import HTTPStatus
from pathlib import Path
from typing import Any

from sqlalchemy import delete
from sqlalchemy.orm import Session

from ..anki import schema18
from ..anki.collection_file import Collection
from ..anki.errors import AnkiPackageError
from ..anki.gc_pause import gc_paused
from ..anki.protobuf import strict_json
from ..anki.reader import MAX_REVIEWS, count_rows, read_only
from ..anki.scheduling_in import LATEST_EPOCH
from ..anki.structure import json_value, reading, settings, stored_tables
from ..anki.timing import crt_of, day_shift_of
from ..storage.models import AnkiKeptObject, User
from . import (
    adopted_changes,
    device_decks,
    device_options,
    device_rows,
    kept,
    sessions,
    snapshot,
)
from .devices import Device
from .projection import build
from .sessions import to_ms
from .wire import Refused

WHAT = "the uploaded collection"
COLUMNS = {
    "notes": "id, guid, mid, mod, usn, tags, flds, sfld, csum, flags, data",
    "cards": "id, nid, did, ord, mod, usn, type, queue, due, ivl, factor, reps, lapses, left, "
    "odue, odid, flags, data",
    "revlog": "id, cid, usn, ease, ivl, lastIvl, factor, time, type",
}
DAY_MS = 86_400_000
SCHEMA18_TABLES = {"notetypes", "fields", "templates", "decks", "deck_config", "config"}


def read(data: bytes, now: datetime) -> Collection:
    """The uploaded file's collection in schema 11's wire forms (400 for one that is not a
    readable Anki collection, 413 for one past the limits)."""
    try:
        with tempfile.TemporaryDirectory(prefix="flashcards-upload-") as tmp:
            path = Path(tmp) / "collection.anki2"
            path.write_bytes(data)
            with read_only(path, WHAT) as conn:
                return _read(conn, to_ms(now))
    except AnkiPackageError as exc:
        raise Refused(HTTPStatus.BAD_REQUEST, str(exc)) from None


def _read(conn: sqlite3.Connection, now_ms: int) -> Collection:
    tables = stored_tables(conn)
    if not {"col", "notes", "cards", "revlog"} <= tables:
        raise AnkiPackageError(f"{WHAT} is not an Anki collection: its tables are missing")
    row = conn.execute("SELECT ver, crt, mod, scm, usn, conf, models, decks, dconf FROM col")
    found = row.fetchone()
    if found is None:
        raise AnkiPackageError(f"{WHAT} has no collection row")
    with reading("the collection row (col)"):
        ver, crt, mod, scm, usn = (int(v) for v in found[:5])
    if not 11 <= ver <= 18:
        raise AnkiPackageError(f"{WHAT} has schema {ver}; the service reads 11 to 18")
    # Both become the collection's stamps, which every later sync moves on from.
    if not (0 < mod <= now_ms + DAY_MS and 0 < scm <= now_ms + DAY_MS):
        raise AnkiPackageError(f"{WHAT} is damaged: its modification times are not times")
    counts = {name: count_rows(conn, name) for name in COLUMNS}
    if counts["notes"] + counts["cards"] > kept.LIMIT or counts["revlog"] > MAX_REVIEWS:
        raise Refused(
            HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
            f"{WHAT} has more notes and cards than {kept.LIMIT} or answers than {MAX_REVIEWS}",
        )
    if "notetypes" in tables:
        if not tables >= SCHEMA18_TABLES:
            raise AnkiPackageError(f"{WHAT} is damaged: tables are missing")
        conf = settings(conn)
        notetypes = schema18.notetypes(conn)
        decks = schema18.decks(conn)
        dconf = schema18.deck_configs(conn)
    else:
        conf = json_value(found[5], "the settings (col.conf)")  # not kept: ours go out
        notetypes = _objects(found[6], "the note types (col.models)")
        decks = _objects(found[7], "the decks (col.decks)")
        dconf = _objects(found[8], "the options groups (col.dconf)")
    rows = {
        name: conn.execute(f"SELECT {columns} FROM {name} ORDER BY id").fetchall()
        for name, columns in COLUMNS.items()
    }
    return Collection(conf, decks, dconf, mod, rows["notes"], rows["cards"], rows["revlog"],
                      scm, usn, notetypes, crt)  # fmt: skip


def _objects(text: Any, what: str) -> list[dict[str, Any]]:
    """A schema-11 column's objects: JSON of an object of objects, or the upload is refused
    (an import may skip a damaged one; an upload would lose it for every device)."""
    try:
        value = strict_json(text)
    except (TypeError, ValueError, RecursionError):
        raise AnkiPackageError(f"{WHAT} is damaged: {what} is not JSON") from None
    with reading(what):
        objects = list(value.values())
        if not all(isinstance(o, dict) for o in objects):
            raise TypeError
    return objects


def _day_shift(session: Session, user_id: int, uploaded: Collection, now: datetime) -> int:
    user = session.get(User, user_id)
    assert user is not None
    offset, rollover = (uploaded.conf.get(k) for k in ("creationOffset", "rollover"))
    return day_shift_of(
        min(max(uploaded.crt, 0), LATEST_EPOCH),  # as the cards' own times are read
        offset if type(offset) is int and abs(offset) <= 24 * 60 else None,
        rollover if type(rollover) is int and 0 <= rollover <= 23 else 4,
        now,
        user.timezone,
        user.day_start_hour,
    )


def take(session: Session, device: Device, uploaded: Collection, now: datetime) -> None:
    """The device's collection, taken (see the module's doc); one transaction."""
    # A whole collection's rows read, built and kept until written (`gc_pause`).
    with gc_paused():
        _take(session, device, uploaded, now)


def _take(session: Session, device: Device, uploaded: Collection, now: datetime) -> None:
    user_id = device.user_id
    stamps = sessions.collection(session, user_id, now)
    # Another device's sync under way would interleave with this one: it ends, and waits.
    session.refresh(stamps, with_for_update=True)
    sessions.end_all(session, user_id)
    usn = stamps.usn
    made_here = adopted_changes.made_here(session, user_id, uploaded.usn)  # before notes go
    # What devices made before is replaced by what this one holds.
    session.execute(delete(AnkiKeptObject).where(AnkiKeptObject.user_id == user_id))
    adopted_changes.retitle(session, user_id, uploaded.decks, {})  # the device's names win
    changes = {"models": uploaded.notetypes or [], "decks": [uploaded.decks, uploaded.dconf]}
    kept.take_changes(session, user_id, changes, usn=usn, now=now)
    device_decks.rename(session, user_id, uploaded.decks, set())
    device_options.take_defaults(session, user_id, uploaded.dconf)
    # The device keeps counting days from its own creation: so do the collection's days.
    stamps.crt = crt_of(_day_shift(session, user_id, uploaded, now))
    # The answers it got from here come back in its log: not answers again.
    built = build(session, user_id, now=now, mod_ms=to_ms(now), usn=usn)
    ours = {entry[0] for entry in built.collection.revlog[: len(built.log_ids)]}
    # Rows as read (tuples): a hundred thousand copies into lists would cost more than all
    # of their checks.
    part = {
        "notes": uploaded.notes,
        "cards": uploaded.cards,
        "revlog": [r for r in uploaded.revlog if r[0] not in ours],
    }
    found = device_rows.parse(session, user_id, part)
    kept.make_room(session, user_id, kept.counted(found.unknown))
    device_rows.take(
        session, user_id, found, sent_notes=set(), sent_cards=set(), usn=usn, now=now,
        crt=uploaded.crt, conf=uploaded.conf, by_hand=False,
    )  # fmt: skip
    adopted_changes.match_upload(
        session, user_id, {d["id"] for d in uploaded.decks}, {c[0] for c in uploaded.cards}, now,
        made_here,
    )  # fmt: skip
    snapshot.record_all(session, user_id, snapshot.objects(uploaded), usn)
    stamps.scm = uploaded.scm_ms or to_ms(now)
    stamps.usn = usn + 1
    # Not the device's: its next sync is a normal one, which brings what it lacks, every
    # answer here included (no mark: it may lack answers given on the web).
    stamps.mod = max(to_ms(now), uploaded.mod_ms + 1)
    stamps.fingerprint = ""
    stamps.log_marks = {}
