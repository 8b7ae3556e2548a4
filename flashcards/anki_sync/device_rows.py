"""The notes, cards and answers a device sends (a normal sync's chunks, or a whole uploaded
collection), read and then taken as the person's own actions, in the order that lets each
find what it needs. No Flask."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from ..anki.timing import CRT
from . import adopted, adopted_changes, device_answers, device_marks, device_notes, kept
from .wire import bad_request


@dataclass
class DeviceRows:
    notes: list[list[Any]] = field(default_factory=list)  # `device_notes.parse_rows`
    cards: list[list[int]] = field(default_factory=list)  # `device_marks.parse_rows`
    # [id, card id, ease, time, type, interval] of each revlog row (`device_answers.apply`)
    answers: list[list[int]] = field(default_factory=list)
    unknown: dict[str, list[list[Any]]] = field(default_factory=dict)  # `kept.unknown_rows`


def parse(session: Session, user_id: int, part: dict[str, Any]) -> DeviceRows:
    """A chunk's rows (400 for a malformed one)."""
    unknown = kept.unknown_rows(session, user_id, part)  # which checks every row's shape
    answers = []
    for entry in part.get("revlog") or []:
        values = [entry[0], entry[1], entry[3], entry[7], entry[8], entry[4]]
        if not all(type(v) is int for v in values):  # not a bool either
            raise bad_request(
                "a revlog row's id, card, ease, time, type and interval are whole numbers"
            )
        answers.append(values)
    return DeviceRows(
        device_notes.parse_rows(part.get("notes") or []),
        device_marks.parse_rows(part.get("cards") or []),
        answers,
        unknown,
    )


@dataclass(frozen=True)
class Taken:
    cards: int  # new cards the collection now holds (ours made from notes, or kept)
    notes: int
    applied: int  # how many changes were taken in all
    replayed: int  # cards whose state the answers rebuilt (`device_answers.apply`)


def take(
    session: Session,
    user_id: int,
    rows: DeviceRows,
    *,
    sent_notes: set[int],
    sent_cards: set[int],
    usn: int,
    now: datetime,
    crt: int = CRT,
    conf: dict[str, Any] | None = None,
    by_hand: bool = True,
) -> Taken:
    """New notes first, so that the answers and marks of their cards then find them; then
    what is not ours kept, the answers in time order, the cards' marks and the notes'
    texts. `sent_*`: what this sync sends the device, changed here since its last sync,
    which keeps ours. Last, what it made that can be studied here is (`adopted`).
    `by_hand`: whether its due dates set and cards forgotten are taken (not an upload's,
    whose log holds every one it ever made)."""
    added = device_notes.add(session, user_id, rows.notes, rows.cards, now)
    # Notes of the device's own note types edited there: their cards here take the text.
    adopted_changes.retext(session, user_id, rows.unknown.get("notes", []), now)
    # Cards of decks and note types the device made are studied here too (`adopted`), with
    # their answers; due days count from `crt` (`conf` has its day's rollover).
    taken = adopted.adopt(session, user_id, rows.unknown, now=now, crt=crt, conf=conf)
    unknown = {
        "notes": rows.unknown.get("notes", []),
        "cards": [c for c in rows.unknown.get("cards", []) if c[0] not in taken.cards],
        # A change by hand is no answer to replay: kept, for the other devices' logs.
        "revlog": [
            r for r in rows.unknown.get("revlog", []) if r[1] not in taken.cards or kept.by_hand(r)
        ],
    }
    new_cards, new_notes, kept_rows = kept.take_rows(session, user_id, unknown, usn=usn, now=now)
    # The collection holds those the chunk brought as new cards, kept or ours.
    sent = {c[0] for c in rows.unknown.get("cards", [])}
    new_cards += len((taken.cards & sent) - taken.were_kept)
    kept_rows += len(taken.cards & sent)
    # Answers to and marks of the cards just taken are theirs already.
    answers = sorted(a for a in rows.answers if a[1] not in taken.cards)
    marked = [c for c in rows.cards if c[0] not in taken.cards]
    device_reps = {c[0]: c[device_marks.PARSED_REPS] for c in marked} if by_hand else None
    applied, replayed = device_answers.apply(
        session, user_id, answers, now, device_reps=device_reps
    )
    # Each card whose latest change was by hand, with its time: a Set Due Date or a Forget
    # answered after is the answers' (`device_answers.apply`).
    latest = {a[1]: a for a in answers}
    changed_by_hand = {
        cid: a[0] for cid, a in latest.items() if by_hand and device_marks.is_manual(a)
    }
    marked_here, newer = device_marks.apply(
        session, user_id, marked, sent_cards, now, by_hand=changed_by_hand,
        day_shift=(crt - CRT) // 86_400,  # a collection's `crt` is `timing.crt_of` its shift
    )  # fmt: skip
    applied += marked_here
    # A card the device changed after we did moves as it moved it, as its marks are taken.
    applied += adopted_changes.move(session, user_id, marked, sent_cards - newer, now)
    applied += device_notes.apply(session, user_id, rows.notes, sent_notes, now)
    return Taken(added + new_cards, added + new_notes, applied + added + kept_rows, replayed)
