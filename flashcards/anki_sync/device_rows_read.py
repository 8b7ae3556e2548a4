"""A device's schema-11 rows (notes, cards, answers, note types) read as the `.apkg`
reader's objects, for the cards of its own decks studied here (`adopted`). No Flask."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from ..anki import schema
from ..anki.planning import PlannedCard
from ..anki.reader import AnkiCard, Note, Revlog
from ..anki.structure import notetype_of
from ..storage.models import Deck, Subscription
from . import kept, snapshot

FIELD_SEPARATOR = "\x1f"
IMAGE_OCCLUSION = 6  # a note type's `originalStockKind`: Anki's Image Occlusion


def text_of(p: PlannedCard) -> tuple[str, str, str]:
    """The one language's text of a planned card of a device's note."""
    (text,) = p.texts.values()
    return text


def device_decks(user_id: int) -> Select[int]:
    """The person's decks standing for a device's, studied or left."""
    return select(Deck.id).where(Deck.owner_user_id == user_id, Deck.anki_deck_id.is_not(None))


def studied_decks(user_id: int) -> Select[int]:
    """The person's decks standing for a device's that they study: those devices get."""
    return select(Deck.id).where(
        Deck.owner_user_id == user_id,
        Deck.anki_deck_id.is_not(None),
        Deck.id.in_(select(Subscription.deck_id).where(Subscription.user_id == user_id)),
    )


def notetypes(session: Session, user_id: int, mids: set[int]) -> dict[int, Any]:
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


def note_of(row: Any) -> Note | None:
    """A kept schema-11 note row (id, guid, mid, mod, usn, tags, flds, ...)."""
    try:
        nid, guid, mid, mod, _usn, tags, fields = row[:7]
        if not (isinstance(guid, str) and isinstance(tags, str) and isinstance(fields, str)):
            return None
        return Note(int(nid), guid, int(mid), int(mod), tags.split(), fields.split(FIELD_SEPARATOR))
    except (TypeError, ValueError):
        return None


def card_of(row: Any) -> AnkiCard | None:
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


def revlog_of(row: Any) -> Revlog | None:
    """A kept schema-11 revlog row (id, cid, usn, ease, ivl, lastIvl, factor, time, type)."""
    try:
        rid, cid, _usn, ease, ivl, last_ivl, factor, time, kind = (int(v) for v in row[:9])
    except (TypeError, ValueError):
        return None
    return Revlog(rid, cid, ease, ivl, last_ivl, factor, time, kind)
