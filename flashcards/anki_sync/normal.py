"""A normal sync, request by request (Anki's `start`, `applyGraves`, `applyChanges`,
`chunk`, `applyChunk`, `sanityCheck2`, `finish`), each its own transaction, what the next
needs kept in the sync's session row. No Flask.

The service is the source of truth. What the server sends is what changed in the collection
built from our data since the device's `minUsn` (`snapshot`), and the answers written since
(review-log rows past the device's mark). What the device sends: its answers (revlog rows),
applied once each (a review id derived from the row's id) and in time order through the same
answer path as the web and the API; its cards' suspensions, burials and flags
(`device_marks`); and its edits of the texts of cards the person may edit (`device_notes`).
The device's own notes, decks and options and its cards' scheduling are not taken (our
state, recomputed from the answers, reaches it on its next sync).
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import datetime
from http import HTTPStatus
from typing import Any

from fsrs import Rating
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from ..anki import schema
from ..anki.export import LOCALE_SLOTS
from ..errors import FlashcardsError
from ..srs import study
from ..storage.models import (
    AnkiCollection,
    AnkiSyncSession,
    Card,
    ReviewLog,
    ReviewState,
    Subscription,
)
from . import device_marks, device_notes, download, sessions, snapshot
from .devices import Device
from .projection import build
from .sessions import to_ms
from .wire import Refused, bad_request

CHUNK_SIZE = 250
log = logging.getLogger(__name__)
# A review id for a device's answer: the same answer (revlog id) sent twice is applied once.
REVIEW_NAMESPACE = uuid.UUID("6b2f0b0e-5d1c-4b8a-9c57-2a4a9a0f1e11")
GRAVE_KINDS = {snapshot.CARD: "cards", snapshot.NOTE: "notes", snapshot.DECK: "decks"}
# The protocol's name of each kind, in the order of the sanity check's counts.
WIRE_NAMES = {snapshot.CARD: "cards", snapshot.NOTE: "notes", snapshot.NOTETYPE: "models",
              snapshot.DECK: "decks", snapshot.DECK_CONFIG: "dconf"}  # fmt: skip


def _int(value: object, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise bad_request(f"{name} must be a whole number")
    return value


def start(
    session: Session, device: Device, session_key: str, body: dict[str, Any], now: datetime
) -> dict[str, list[int]]:
    """Begin the exchange: find what changed for the device, keep it for the chunks, answer
    the server's deletions since its `minUsn`."""
    row = sessions.current(session, device, session_key)
    min_usn = _int(body.get("minUsn"), "minUsn")
    stamps = sessions.collection(session, device.user_id, now)
    usn = stamps.usn
    if _up_to_date(session, device.user_id, stamps, min_usn):
        # The device syncs its own answers to a collection that did not change since it last
        # got it: nothing to send, so no build (a whole collection's, seconds for a big one).
        nothing: dict[str, list[Any]] = {name: [] for name in WIRE_NAMES.values()}
        counts = [snapshot.held(session, device.user_id, kind) for kind in WIRE_NAMES]
        row.state = _state_of(usn, min_usn, nothing, [], counts)
        row.updated_at = now
        session.flush()
        return {"cards": [], "notes": [], "decks": []}
    projection = build(session, device.user_id, now=now, mod_ms=to_ms(now), usn=usn)
    found = snapshot.objects(projection.collection)
    snapshot.record_changes(session, device.user_id, found, usn)
    graves: dict[str, list[int]] = {"cards": [], "notes": [], "decks": []}
    pending: dict[str, list[Any]] = {name: [] for name in WIRE_NAMES.values()}
    for kind, oid, deleted in snapshot.changed_since(session, device.user_id, min_usn):
        if deleted:
            if kind in GRAVE_KINDS:
                graves[GRAVE_KINDS[kind]].append(oid)
            continue
        payload = found.payloads.get((kind, oid))
        if payload is not None:
            pending[WIRE_NAMES[kind]].append(_stamped(kind, payload, usn))
    mark = stamps.log_marks.get(str(min_usn))
    revlog = [
        [*entry[:2], usn, *entry[3:]]
        for entry, log_id in zip(projection.collection.revlog, projection.log_ids, strict=True)
        if mark is None or log_id > mark
    ]
    c = projection.collection
    counts = [len(c.cards), len(c.notes), 1, len(c.decks),
              snapshot.held(session, device.user_id, snapshot.DECK_CONFIG)]  # fmt: skip
    row.state = _state_of(usn, min_usn, pending, revlog, counts)
    row.updated_at = now
    session.flush()
    return graves


def _up_to_date(session: Session, user_id: int, stamps: AnkiCollection, min_usn: int) -> bool:
    """Whether the device holds the collection as it is: it changed in nothing since the
    bookkeeping last recorded it (same fingerprint), no object changed since the device's
    `minUsn` or was deleted by a device, and no answer was written past its mark."""
    mark = stamps.log_marks.get(str(min_usn))
    return (
        mark is not None
        and bool(stamps.fingerprint)
        and stamps.fingerprint == sessions.fingerprint(session, user_id)
        and not snapshot.changed_since(session, user_id, min_usn)
        and not snapshot.forgotten(session, user_id)
        and download.newest_log_id(session, user_id) <= mark
    )


def _state_of(usn: int, min_usn: int, pending: dict[str, list[Any]], revlog: list[Any],
              counts: list[int]) -> dict[str, Any]:  # fmt: skip
    return {"usn": usn, "min_usn": min_usn, "pending": pending, "revlog": revlog, "sent": 0,
            "device_revlog": [], "device_cards": [], "device_notes": [],
            "counts": counts}  # fmt: skip


def _stamped(kind: int, payload: Any, usn: int) -> Any:
    if kind == snapshot.CARD:
        return [*payload[: snapshot.CARD_USN], usn, *payload[snapshot.CARD_USN + 1 :]]
    if kind == snapshot.NOTE:
        return [*payload[: snapshot.NOTE_USN], usn, *payload[snapshot.NOTE_USN + 1 :]]
    return {**payload, "usn": usn}


def _state(
    session: Session, device: Device, session_key: str
) -> tuple[AnkiSyncSession, dict[str, Any]]:
    row = sessions.current(session, device, session_key)
    if "usn" not in row.state:
        raise Refused(HTTPStatus.CONFLICT, "the sync was not started")
    return row, dict(row.state)


def apply_graves(session: Session, device: Device, session_key: str, body: dict[str, Any]) -> None:
    """The device deleted these; we hold them still, so its next sync sends them again."""
    _state(session, device, session_key)
    chunk = body.get("chunk")
    if not isinstance(chunk, dict):
        raise bad_request("applyGraves needs a chunk")
    keys: list[tuple[int, int]] = []
    for kind, name in GRAVE_KINDS.items():
        ids = chunk.get(name) or []
        if not isinstance(ids, list):
            raise bad_request(f"graves' {name} must be a list")
        keys.extend((kind, _int(oid, name)) for oid in ids)
    snapshot.forget(session, device.user_id, keys)


def apply_changes(
    session: Session, device: Device, session_key: str, body: dict[str, Any]
) -> dict[str, Any]:
    """The device's note types, decks, options and tags are not taken (part 2 adds a
    device's own decks); ours go back: what changed since its `minUsn`."""
    _, state = _state(session, device, session_key)
    if not isinstance(body.get("changes"), dict):
        raise bad_request("applyChanges needs changes")
    pending = state["pending"]
    return {
        "models": pending["models"],
        "decks": [pending["decks"], pending["dconf"]],
        "tags": [],
    }


def chunk(session: Session, device: Device, session_key: str, now: datetime) -> dict[str, Any]:
    """The next 250 changed rows: answers first, then cards, then notes."""
    row, state = _state(session, device, session_key)
    queue = [("revlog", r) for r in state["revlog"]]
    queue += [("cards", r) for r in state["pending"]["cards"]]
    queue += [("notes", r) for r in state["pending"]["notes"]]
    sent = int(state["sent"])
    part = queue[sent : sent + CHUNK_SIZE]
    out: dict[str, Any] = {"done": sent + len(part) >= len(queue)}
    for name, entry in part:
        out.setdefault(name, []).append(entry)
    state["sent"] = sent + len(part)
    row.state = state
    row.updated_at = now
    return out


def apply_chunk(
    session: Session, device: Device, session_key: str, body: dict[str, Any], now: datetime
) -> None:
    """Keep the device's answers, cards and notes until its last chunk; then apply the
    answers in time order (its chunks come newest first), the cards' marks and the notes'
    texts."""
    row, state = _state(session, device, session_key)
    part = body.get("chunk")
    if not isinstance(part, dict):
        raise bad_request("applyChunk needs a chunk")
    entries = part.get("revlog") or []
    if not isinstance(entries, list):
        raise bad_request("a chunk's revlog must be a list")
    kept = list(state["device_revlog"])
    for entry in entries:
        if not isinstance(entry, list) or len(entry) < 9:
            raise bad_request("a revlog row has nine values")
        kept.append([_int(v, "revlog") for v in (entry[0], entry[1], entry[3], entry[7], entry[8])])
    state["device_revlog"] = kept
    cards = [*state["device_cards"], *device_marks.parse_rows(part.get("cards") or [])]
    notes = [*state["device_notes"], *device_notes.parse_rows(part.get("notes") or [])]
    state["device_cards"], state["device_notes"] = cards, notes
    if part.get("done"):
        user_id, pending = device.user_id, state["pending"]
        state["applied"], state["replayed"] = _apply_answers(session, user_id, kept, now)
        sent_cards = {entry[0] for entry in pending["cards"]}
        state["applied"] += device_marks.apply(session, user_id, cards, sent_cards, now)
        sent_notes = {entry[0] for entry in pending["notes"]}
        state["applied"] += device_notes.apply(session, user_id, notes, sent_notes, now)
        state["device_revlog"], state["device_cards"], state["device_notes"] = [], [], []
    row.state = state
    row.updated_at = now


def _apply_answers(
    session: Session, user_id: int, entries: list[list[int]], now: datetime
) -> tuple[int, bool]:
    """Each answer through `srs.study.answer`, oldest first. Rows that are no answer (Anki's
    manual rescheduling: ease 0, types 4 and 5) and answers to cards the person does not
    study here are not answers to apply. Returns how many were new here, and whether a
    card's log was given again (`answer_in_time_order`)."""
    applied, replayed = 0, False
    for revlog_id, cid, ease, taken_ms, kind in sorted(entries):
        if not 1 <= ease <= 4 or kind not in (0, 1, 2, 3):
            continue
        card_id, slot = divmod(cid - schema.ID_BASE, LOCALE_SLOTS)
        if card_id <= 0 or slot < 0:
            continue
        reviewed_at = datetime.fromtimestamp(revlog_id / 1000, tz=now.tzinfo)
        review_id = str(uuid.uuid5(REVIEW_NAMESPACE, f"{user_id}:{revlog_id}"))
        given = Given(review_id, ease, reviewed_at, max(0, taken_ms))
        try:
            # Every refusal is raised while reading, before anything is written.
            outcome = answer_in_time_order(session, user_id, card_id, given, now=now)
        except FlashcardsError:
            continue  # not one of their cards, or a retired one: left on the device
        applied += outcome != NOT_NEW
        replayed = replayed or outcome == REPLAYED
    return applied, replayed


@dataclass(frozen=True)
class Given:
    """An answer as a device gave it."""

    review_id: str
    rating: int
    reviewed_at: datetime
    duration_ms: int | None


NOT_NEW, APPLIED, REPLAYED = 0, 1, 2


def answer_in_time_order(
    session: Session, user_id: int, card_id: int, given: Given, *, now: datetime
) -> int:
    """Apply a device's answer through `srs.study.answer`: NOT_NEW if it was applied before,
    else APPLIED, or REPLAYED when the card's log was given again.

    An answer older than the card's last one here (two devices, or the web and a device,
    answered it between syncs) is kept too: the card's answers are given again, merged in
    time order, through the same path, so its state is the replay of the merged log and
    every answer keeps its review id, time and duration.
    """
    state = session.get(ReviewState, (user_id, card_id))
    known = session.scalar(select(ReviewLog.id).where(ReviewLog.review_id == given.review_id))
    late = (
        known is None
        and state is not None
        and state.last_review is not None
        and given.reviewed_at < state.last_review
    )
    if not late:
        result = study.answer(
            session, user_id, card_id, Rating(given.rating), given.review_id,
            now=now, reviewed_at=given.reviewed_at, duration_ms=given.duration_ms,
        )  # fmt: skip
        return APPLIED if result.created else NOT_NEW
    logs = session.scalars(
        select(ReviewLog)
        .where(ReviewLog.user_id == user_id, ReviewLog.card_id == card_id)
        .order_by(ReviewLog.reviewed_at, ReviewLog.id)
    ).all()
    merged = sorted(
        [Given(g.review_id, g.rating, g.reviewed_at, g.duration_ms) for g in logs] + [given],
        key=lambda g: g.reviewed_at,
    )
    # The card's log and state go, and come back answer by answer.
    for model in (ReviewLog, ReviewState):
        session.execute(delete(model).where(model.user_id == user_id, model.card_id == card_id))
    session.expire_all()
    for g in merged:
        study.answer(
            session, user_id, card_id, Rating(g.rating), g.review_id,
            now=now, reviewed_at=g.reviewed_at, duration_ms=g.duration_ms,
        )  # fmt: skip
    return REPLAYED


def server_revlog_count(session: Session, user_id: int) -> int:
    """Review-log rows the person's collection holds: those of live cards of decks they study."""
    return int(
        session.scalar(
            select(func.count())
            .select_from(ReviewLog)
            .join(Card, Card.id == ReviewLog.card_id)
            .join(
                Subscription,
                (Subscription.deck_id == Card.deck_id) & (Subscription.user_id == user_id),
            )
            .where(ReviewLog.user_id == user_id, Card.retired_at.is_(None))
        )
        or 0
    )


def sanity_check(
    session: Session, device: Device, session_key: str, body: dict[str, Any]
) -> dict[str, Any]:
    """The device's counts against the collection's: cards, notes, answers, note types,
    decks and options (due counts and graves are not compared, as Anki's server does)."""
    _, state = _state(session, device, session_key)
    client = body.get("client")
    if not isinstance(client, list) or len(client) != 8:
        raise bad_request("sanityCheck2 needs the client's eight counts")
    cards, notes, models, decks, dconf = state["counts"]
    server = [[0, 0, 0], cards, notes, server_revlog_count(session, device.user_id), 0,
              models, decks, dconf]  # fmt: skip
    compared = [[0, 0, 0], *client[1:4], 0, *client[5:]]
    status = "ok" if compared == server else "bad"
    if status == "bad":
        # The device will be asked for a full sync: what differed is for the operator.
        log.warning("sanity check failed for user %d: device %s, server %s",
                    device.user_id, compared, server)  # fmt: skip
    return {"status": status, "c": compared, "s": server}


def finish(session: Session, device: Device, session_key: str, now: datetime) -> int:
    """The sync is done: the collection's usn moves on, the device's mark is set, and the
    new `mod` is what the device keeps (and what meta gives while nothing changes)."""
    _, state = _state(session, device, session_key)
    stamps = sessions.collection(session, device.user_id, now)
    stamps.usn += 1
    stamps.mod = max(to_ms(now), stamps.mod + 1)
    # The device's answers changed our states, which it has not got yet (its own cards
    # carry its own scheduling): no fingerprint, so its next meta asks for a sync.
    applied = state.get("applied", 0)
    stamps.fingerprint = "" if applied else sessions.fingerprint(session, device.user_id)
    # A log given again has new row ids, which need not be above the marks (SQLite reuses
    # freed ids): other devices then get every answer again (Anki skips the ones it has).
    replayed = state.get("replayed", False)
    marks = (
        {} if replayed else {k: v for k, v in stamps.log_marks.items() if int(k) > stamps.usn - 20}
    )
    marks[str(stamps.usn)] = download.newest_log_id(session, device.user_id)
    stamps.log_marks = marks
    sessions.end(session, device)
    return stamps.mod
