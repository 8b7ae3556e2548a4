"""A normal sync, request by request (Anki's `start`, `applyGraves`, `applyChanges`,
`chunk`, `applyChunk`, `sanityCheck2`, `finish`), each its own transaction, what the next
needs kept in the sync's session row. No Flask.

The service is the source of truth. What the server sends is what changed in the collection
built from our data since the device's `minUsn` (`snapshot`), and the answers written since
(review-log rows past the device's mark). What the device sends: its answers (revlog rows),
applied once each (a review id derived from the row's id) and in time order through the same
answer path as the web and the API; its cards' suspensions, burials and flags
(`device_marks`); its notes' texts and tags, and notes it added to a deck the person may
edit (`device_notes`); and what it made that we do not model (its own note types, decks,
options groups and notes), kept as sent and passed to the person's other devices (`kept`).
Its cards' scheduling is not taken: our state, recomputed from the answers, reaches it on
its next sync; nor are its changes to our note type, options and decks, but renames of the
person's own decks (`device_decks`).
"""

from __future__ import annotations

import logging
from datetime import datetime
from http import HTTPStatus
from typing import Any

from sqlalchemy.orm import Session

from ..anki.collection_file import tags_of
from ..storage.models import (
    AnkiCollection,
    AnkiSyncSession,
)
from . import (
    adopted_changes,
    device_decks,
    device_notes,
    device_options,
    device_rows,
    download,
    ids,
    kept,
    sessions,
    snapshot,
)
from .devices import Device
from .projection import build
from .sessions import to_ms
from .wire import Refused, bad_request, is_whole

CHUNK_SIZE = 250
log = logging.getLogger(__name__)
GRAVE_KINDS = {snapshot.CARD: "cards", snapshot.NOTE: "notes", snapshot.DECK: "decks"}
# The protocol's name of each kind, in the order of the sanity check's counts.
WIRE_NAMES = {snapshot.CARD: "cards", snapshot.NOTE: "notes", snapshot.NOTETYPE: "models",
              snapshot.DECK: "decks", snapshot.DECK_CONFIG: "dconf"}  # fmt: skip


def _int(value: object, name: str) -> int:
    if not is_whole(value):
        raise bad_request(f"{name} must be a whole number of at most 64 bits")
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
    c = projection.collection
    ours = c.revlog[: len(projection.log_ids)]
    revlog = [
        [*entry[:2], usn, *entry[3:]]
        for entry, log_id in zip(ours, projection.log_ids, strict=True)
        if mark is None or log_id > mark
    ]
    taken = {entry[0] for entry in ours}  # a kept answer's id one of ours took: ours goes
    revlog += [
        [*r[:2], usn, *r[3:]]
        for r in kept.revlog_since(session, device.user_id, min_usn)
        if r[0] not in taken
    ]
    counts = [len(c.cards), len(c.notes), len(c.notetypes or ()), len(c.decks),
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


def apply_graves(
    session: Session, device: Device, session_key: str, body: dict[str, Any], now: datetime
) -> None:
    """The device deleted these. A note of a card the person may edit retires it here
    (`device_notes.delete`); everything else the collection keeps, and sends back."""
    row, state = _state(session, device, session_key)
    chunk = body.get("chunk")
    if not isinstance(chunk, dict):
        raise bad_request("applyGraves needs a chunk")
    graves: dict[int, list[int]] = {}
    for kind, name in GRAVE_KINDS.items():
        oids = chunk.get(name) or []
        if not isinstance(oids, list):
            raise bad_request(f"graves' {name} must be a list")
        graves[kind] = [_int(oid, name) for oid in oids]
    user_id, pending = device.user_id, state["pending"]
    # The sanity check counts what devices were given: kept notes with a card, when the sync
    # began (Anki sends graves 250 at a time: a note's cards may have gone a call before).
    earlier = set(state.get("adopted_notes", []))
    shown = adopted_changes.shown_notes(session, user_id, graves[snapshot.NOTE])
    shown |= earlier & set(graves[snapshot.NOTE])
    # What a device made and we kept simply goes, even if another device changed it since
    # this one's last sync (as on Anki's server, a deletion wins over an edit).
    dropped = {kind: kept.drop(session, user_id, kind, oids) for kind, oids in graves.items()}
    for kind, gone in dropped.items():
        queued = pending[WIRE_NAMES[kind]]
        queued[:] = [e for e in queued if (e["id"] if isinstance(e, dict) else e[0]) not in gone]
    sent_notes = {entry[0] for entry in pending["notes"]}
    notes = [oid for oid in graves[snapshot.NOTE] if oid not in dropped[snapshot.NOTE]]
    retired = device_notes.delete(session, user_id, notes, sent_notes, now)
    # A retired note's card goes with it (its grave comes too, under the card's own id).
    of_cards = ids.cards_of(session, user_id, graves[snapshot.CARD], notes=False)
    gone_cards = {oid for oid, card_id in of_cards.items() if card_id in retired.values()}
    # Cards of a device's own notes studied here go with their note or on their own, as
    # kept objects do.
    of_notes = adopted_changes.retire(
        session, user_id, notes=dropped[snapshot.NOTE], cards=graves[snapshot.CARD], now=now
    )
    state["adopted_notes"] = sorted(earlier | set(of_notes.values()))
    # A deck of theirs that a device deleted goes with its cards the same way.
    gone_adopted = set(of_notes)
    gone_adopted |= adopted_changes.forget_decks(session, user_id, graves[snapshot.DECK], now)
    gone_cards |= gone_adopted
    held = [
        (kind, oid)
        for kind, oids in graves.items()
        for oid in oids
        if oid not in dropped[kind]
        and not (kind == snapshot.NOTE and oid in retired)
        and not (kind == snapshot.CARD and oid in gone_cards)
    ]
    _send_again(session, device.user_id, state, held, now)
    cards, note_count, models, decks, dconf = state["counts"]
    state["counts"] = [
        cards - len(retired) - len(dropped[snapshot.CARD]) - len(gone_adopted),
        note_count - len(retired) - len(dropped[snapshot.NOTE] & shown),
        models,
        decks - len(dropped[snapshot.DECK]),
        dconf,
    ]
    state["retired"] = state.get("retired", 0) + len(retired) + sum(map(len, dropped.values()))
    row.state = state


def _send_again(
    session: Session, user_id: int, state: dict[str, Any], held: list[tuple[int, int]],
    now: datetime,
) -> None:  # fmt: skip
    """Objects the device deleted that the collection keeps go back to it in this sync's
    chunks (its sanity check counts them at the end); any not found now, at the next."""
    if not held:
        return
    of_notes = ids.cards_of(
        session, user_id, (oid for kind, oid in held if kind == snapshot.NOTE), notes=True
    )
    of_cards = ids.cards_of(
        session, user_id, (oid for kind, oid in held if kind == snapshot.CARD), notes=False
    )
    cards = {*of_notes.values(), *of_cards.values()}
    usn, pending = state["usn"], state["pending"]
    built = build(session, user_id, now=now, mod_ms=to_ms(now), usn=usn, only=cards)
    found = snapshot.objects(built.collection)
    missing = []
    for kind, oid in held:
        payload = found.payloads.get((kind, oid))
        if payload is None:
            missing.append((kind, oid))
            continue
        queued = pending[WIRE_NAMES[kind]]
        if kind == snapshot.DECK:
            queued[:] = [d for d in queued if d["id"] != oid]
        else:
            queued[:] = [entry for entry in queued if entry[0] != oid]
        queued.append(_stamped(kind, payload, usn))
    snapshot.forget(session, user_id, missing)


def apply_changes(
    session: Session, device: Device, session_key: str, body: dict[str, Any], now: datetime
) -> dict[str, Any]:
    """The device's own note types, decks and options groups are kept (`kept`); its renames
    of the person's own decks and its default options group's settings are taken
    (`device_decks`, `device_options`); its other changes to ours stay on it. Ours go back:
    what changed since its `minUsn`."""
    row, state = _state(session, device, session_key)
    changes = body.get("changes")
    if not isinstance(changes, dict):
        raise bad_request("applyChanges needs changes")
    user_id, pending, usn = device.user_id, state["pending"], state["usn"]
    pair = changes.get("decks")
    if isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], list):
        # Before they are kept: a rename is a name other than the one kept.
        adopted_changes.retitle(
            session, user_id, pair[0], {d["id"]: d.get("name") for d in pending["decks"]}
        )
    new, taken = kept.take_changes(session, user_id, changes, usn=usn, now=now)
    decks, options = changes.get("decks") or ([], [])  # the pair checked by take_changes
    renamed = device_decks.rename(session, user_id, decks, {d["id"] for d in pending["decks"]})
    held = [(snapshot.DECK, did) for did in renamed] + device_options.take_changes(
        session, user_id, options, {c["id"] for c in pending["dconf"]}
    )
    _record_as_held(session, user_id, usn, held, set(), now)
    # Its decks and note types of its own: a deck deleted here before its next sync reaches
    # it as a grave.
    models = changes.get("models")
    _record_kept_as_held(
        session, user_id, usn,
        decks=_kept(session, user_id, snapshot.DECK, decks, pending["decks"]),
        notetypes=_kept(session, user_id, snapshot.NOTETYPE, models, pending["models"]),
    )  # fmt: skip
    cards, notes, *others = state["counts"]
    state["counts"] = [cards, notes, *(n + k for n, k in zip(others, new, strict=True))]
    state["applied"] = state.get("applied", 0) + taken + len(renamed)
    row.state = state
    pending = state["pending"]
    return {
        "models": pending["models"],
        "decks": [pending["decks"], pending["dconf"]],
        # The tags of the notes this sync brings: Anki lists a tag in its browser only once
        # it is told of it, not when a note that has it arrives.
        "tags": sorted(tags_of(pending["notes"])),
    }


def _kept(
    session: Session, user_id: int, kind: int, sent: object, ours: list[dict[str, Any]]
) -> list[Any]:
    """The objects of `kind` a device sent (`sent`: a list of them) kept as it sent them,
    but those we send it too (changed on both sides: ours goes again)."""
    if not isinstance(sent, list):
        return []
    wanted = {o["id"] for o in sent if isinstance(o, dict) and is_whole(o.get("id"))}
    wanted -= {o["id"] for o in ours}
    return list(kept.payloads(session, user_id, kind, wanted).values())


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
    found = device_rows.parse(session, device.user_id, part)
    answers = [*state["device_revlog"], *found.answers]
    cards = [*state["device_cards"], *found.cards]
    notes = [*state["device_notes"], *found.notes]
    unknown = state.get("device_unknown") or {}
    for name, rows in found.unknown.items():
        unknown[name] = [*unknown.get(name, []), *rows]
    kept.make_room(session, device.user_id, kept.counted(unknown))
    state["device_revlog"], state["device_cards"], state["device_notes"] = answers, cards, notes
    state["device_unknown"] = unknown
    if part.get("done"):
        user_id, pending, usn = device.user_id, state["pending"], state["usn"]
        everything = device_rows.DeviceRows(notes, cards, answers, unknown)
        crt, conf = sessions.day_numbers(session, user_id, now)
        taken = device_rows.take(
            session, user_id, everything, usn=usn, now=now, crt=crt, conf=conf,
            sent_notes={entry[0] for entry in pending["notes"]},
            sent_cards={entry[0] for entry in pending["cards"]},
        )  # fmt: skip
        card_count, note_count, *others = state["counts"]
        state["counts"] = [card_count + taken.cards, note_count + taken.notes, *others]
        state["replayed"] = taken.replayed
        state["applied"] = state.get("applied", 0) + taken.applied
        _settle(session, user_id, state, notes, cards, answers, unknown, now)
        state["device_revlog"], state["device_cards"], state["device_notes"] = [], [], []
        state["device_unknown"] = {}
    row.state = state
    row.updated_at = now


def _settle(
    session: Session,
    user_id: int,
    state: dict[str, Any],
    notes: list[list[Any]],
    cards: list[list[Any]],
    answers: list[list[int]],
    unknown: dict[str, list[list[Any]]],
    now: datetime,
) -> None:
    """The device's notes and cards as we now hold them are recorded at this sync's usn, as
    Anki's server records a device's changes: this device is not sent them back, so its next
    change to them is not taken for one made on both sides; other devices get them; and one
    deleted here before its next sync reaches it as a grave. Not the ones we sent it
    (changed on both sides: ours goes again), nor cards answered on it, which get our
    recomputed state back."""
    pending = state["pending"]
    sent = {entry[0] for entry in pending["notes"]} | {entry[0] for entry in pending["cards"]}
    answered = {entry[1] for entry in answers if 1 <= entry[2] <= 4}  # not changes by hand
    of_notes = ids.cards_of(session, user_id, {n[0] for n in notes} - sent, notes=True)
    of_cards = ids.cards_of(session, user_id, {c[0] for c in cards} - sent - answered, notes=False)
    keys = [(snapshot.NOTE, nid) for nid in of_notes] + [(snapshot.CARD, cid) for cid in of_cards]
    only = {*of_notes.values(), *of_cards.values()}
    _record_as_held(session, user_id, state["usn"], keys, only, now)
    # Its notes and cards of its own, kept as it sent them (a card of them studied here is
    # ours, recorded above).
    own_notes = {n[0] for n in unknown.get("notes", [])} - sent
    own_cards = {c[0] for c in unknown.get("cards", [])} - sent - answered
    _record_kept_as_held(
        session, user_id, state["usn"],
        notes=kept.payloads(session, user_id, snapshot.NOTE, own_notes).values(),
        cards=kept.payloads(session, user_id, snapshot.CARD, own_cards).values(),
    )  # fmt: skip
    # The device holds its own state of a card it answered, not the one recorded at this
    # sync's start: ours goes at its next sync whatever it is by then, the recorded one
    # included (an answer undone here in between).
    snapshot.forget(session, user_id, [(snapshot.CARD, cid) for cid in answered])


def _record_kept_as_held(session: Session, user_id: int, usn: int, **rows: Any) -> None:
    """Objects a device sent that are kept as it sent them (`snapshot.of_rows`' arguments),
    recorded as `_record_as_held` records ours."""
    found = snapshot.of_rows(**rows)
    snapshot.record_some(session, user_id, found, list(found.digests), usn)


def _record_as_held(
    session: Session, user_id: int, usn: int, keys: list[tuple[int, int]], cards: set[int],
    now: datetime,
) -> None:  # fmt: skip
    """These objects (of `cards`, or decks) as we now hold them are what the device holds
    as of `usn` (`snapshot.record_some`): it changed them itself."""
    if not keys:
        return
    built = build(session, user_id, now=now, mod_ms=to_ms(now), usn=usn, only=cards)
    snapshot.record_some(session, user_id, snapshot.objects(built.collection), keys, usn)


def sanity_check(
    session: Session, device: Device, session_key: str, body: dict[str, Any]
) -> dict[str, Any]:
    """The device's counts against the collection's: cards, notes, note types, decks and
    options. Not its answers: Anki keeps the log of a card it deletes (a deck left, a card
    retired here), so a device holds answers the collection no longer has, and our log is
    the source of truth whatever it holds. Nor due counts and graves, as Anki's server."""
    _, state = _state(session, device, session_key)
    client = body.get("client")
    if not isinstance(client, list) or len(client) != 8:
        raise bad_request("sanityCheck2 needs the client's eight counts")
    cards, notes, models, decks, dconf = state["counts"]
    server = [[0, 0, 0], cards, notes, 0, 0, models, decks, dconf]
    compared = [[0, 0, 0], *client[1:3], 0, 0, *client[5:]]
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
    applied = state.get("applied", 0) + state.get("retired", 0)
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
