"""What a device sends of its cards in a normal sync, beside its answers: the suspensions,
burials and flags set in Anki, taken as the person's own actions here (`card_actions`), so
that the web, the API and the team dashboard see them and undo can take them back. No Flask.

A card changed here since the device's last sync keeps our marks (see `apply`). Cards the
person does not study here are left alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime

from sqlalchemy.orm import Session

from ..errors import FlashcardsError
from ..hot_sql import marks as sql
from ..hot_sql.rawsql import executor
from ..people.accounts import user_clock
from ..srs import card_actions
from ..srs.days import study_date
from ..srs.marks import marks_from_row
from . import ids, snapshot
from .wire import bad_request

# A card row of the protocol (schema 11): id, nid, did, ord, mod (seconds), usn, type,
# queue, due, ivl, factor, reps, lapses, left, odue, odid, flags, data.
ROW_LENGTH = 18
ID, NID, DID, QUEUE, FLAGS = 0, 1, 2, 7, 16
SUSPENDED, BURIED = -1, (-2, -3)  # Anki's queues: buried by an answer (sibling) or by hand


def parse_rows(entries: object) -> list[list[int]]:
    """[card id, queue, flag, note id, deck id] of each card row of a chunk (400 for a
    malformed one)."""
    if not isinstance(entries, list):
        raise bad_request("a chunk's cards must be a list")
    out = []
    for entry in entries:
        if not isinstance(entry, list | tuple) or len(entry) < ROW_LENGTH:
            raise bad_request(f"a card row has {ROW_LENGTH} values")
        values = [entry[ID], entry[QUEUE], entry[FLAGS], entry[NID], entry[DID]]
        # Not bools; 64 bits each (`kept.unknown_rows` checked every row first).
        if not all(type(v) is int for v in values):
            raise bad_request("a card row's ids, queue and flags are whole numbers")
        values[2] &= 0b111  # Anki keeps other bits above the flag's colour
        out.append(values)
    return out


def apply(
    session: Session, user_id: int, rows: Iterable[list[int]], sent: set[int], now: datetime
) -> int:
    """Each device card's suspension, burial and flag; how many cards changed here.

    `sent`: the Anki ids of the cards this sync sent the device, changed here since its last
    sync. As on Anki's own server, a card changed on one side only takes the device's marks;
    one changed on both keeps ours, and is sent again on the next sync (the device kept its
    own, as Anki keeps the newer by modification time, which a flag does not change)."""
    theirs: dict[int, tuple[int, int]] = {}
    both: list[tuple[int, int]] = []
    rows = list(rows)
    ours = ids.cards_of(session, user_id, (row[0] for row in rows), notes=False)
    for cid, queue, flag, *_ in rows:
        card_id = ours.get(cid)
        if card_id is None:
            continue
        if cid in sent:
            both.append((snapshot.CARD, cid))
        else:
            theirs[card_id] = (queue, flag)
    snapshot.forget(session, user_id, both)
    if not theirs:
        return len(both)
    today = study_date(now, *user_clock(session, user_id))
    changed = 0
    for card_id, (queue, flag) in theirs.items():
        try:
            changed += _apply_one(session, user_id, card_id, queue, flag, today, now)
        except FlashcardsError:
            continue  # not one of their cards here: left on the device
    return changed + len(both)


def _apply_one(
    session: Session, user_id: int, card_id: int, queue: int, flag: int, today: date,
    now: datetime,
) -> int:  # fmt: skip
    marks = marks_from_row(sql.mark(executor(session), user_id, card_id))
    changes = 0
    if marks.suspended != (queue == SUSPENDED):
        card_actions.suspend(session, user_id, [card_id], now=now, on=queue == SUSPENDED)
        changes = 1
    buried = marks.buried(today)
    if buried != (queue in BURIED):
        if queue in BURIED:
            card_actions.bury(session, user_id, [card_id], now=now)
        else:
            card_actions.unbury(session, user_id, [card_id], now=now)
        changes = 1
    if marks.flag != flag:
        card_actions.set_flag(session, user_id, [card_id], flag, now=now)
        changes = 1
    return changes
