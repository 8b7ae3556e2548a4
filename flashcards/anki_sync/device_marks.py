"""What a device sends of its cards in a normal sync, beside its answers: the suspensions,
burials and flags set in Anki, and its Set Due Date and Forget, taken as the person's own
actions here (`card_actions`), so that the web, the API and the team dashboard see them and
undo can take them back. No Flask.

A card changed here since the device's last sync keeps our marks (see `apply`). Cards the
person does not study here are left alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date, datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..anki.timing import anki_day
from ..errors import FlashcardsError
from ..hot_sql import marks as sql
from ..hot_sql.rawsql import executor
from ..people.accounts import user_clock
from ..srs import card_actions, device_origin
from ..srs.card_actions import MAX_DUE_DAYS
from ..srs.days import study_date
from ..srs.marks import marks_from_row
from ..storage.models import CardAction, ReviewLog
from . import ids, snapshot
from .wire import bad_request

# A card row of the protocol (schema 11): id, nid, did, ord, mod (seconds), usn, type,
# queue, due, ivl, factor, reps, lapses, left, odue, odid, flags, data.
ROW_LENGTH = 18
ID, NID, DID, MOD, TYPE, QUEUE, DUE, REPS, ODUE, ODID, FLAGS = 0, 1, 2, 4, 6, 7, 8, 11, 14, 15, 16
SUSPENDED, BURIED = -1, (-2, -3)  # Anki's queues: buried by an answer (sibling) or by hand
NEW, REVIEW = 0, 2  # Anki's card types
# The revlog rows Anki writes for a change by hand, ease 0: type 4 for Set Due Date and Forget
# (a Forget's new interval is 0), type 5 for FSRS's rescheduling of every card when its
# parameters change (kept for the logs, not taken as one action a card).
MANUAL, RESCHEDULED = 4, 5


def by_hand(ease: int, revlog_type: int) -> bool:
    """Whether a revlog row is a change by hand rather than an answer."""
    return ease == 0 and revlog_type in (MANUAL, RESCHEDULED)


def is_manual(entry: list[int]) -> bool:
    """Whether an answer row (`device_rows.DeviceRows.answers`) is a Set Due Date or Forget."""
    return entry[2] == 0 and entry[4] == MANUAL


def is_forget(entry: list[int]) -> bool:
    return is_manual(entry) and entry[5] == 0


PARSED_REPS = 7  # where a parsed row (`parse_rows`) holds the card's review count


def parse_rows(entries: object) -> list[list[int]]:
    """[card id, queue, flag, note id, deck id, type, due, reps, mod] of each card row of a
    chunk (400 for a malformed one); `due` is the card's own in a filtered deck."""
    if not isinstance(entries, list):
        raise bad_request("a chunk's cards must be a list")
    out = []
    for entry in entries:
        if not isinstance(entry, list | tuple) or len(entry) < ROW_LENGTH:
            raise bad_request(f"a card row has {ROW_LENGTH} values")
        values = [entry[ID], entry[QUEUE], entry[FLAGS], entry[NID], entry[DID], entry[TYPE],
                  entry[ODUE] if entry[ODID] else entry[DUE], entry[REPS], entry[MOD]]  # fmt: skip
        # Not bools; 64 bits each (`kept.unknown_rows` checked every row first).
        if not all(type(v) is int for v in values):
            raise bad_request(
                "a card row's ids, type, queue, due, reps, flags and time are whole numbers"
            )
        values[2] &= 0b111  # Anki keeps other bits above the flag's colour
        out.append(values)
    return out


def apply(
    session: Session, user_id: int, rows: Iterable[list[int]], sent: set[int], now: datetime,
    *, by_hand: Mapping[int, int] | None = None, day_shift: int = 0,
) -> tuple[int, set[int]]:  # fmt: skip
    """Each device card's suspension, burial and flag, and for the cards of `by_hand` (the
    Anki ids of cards a revlog row says were changed by hand, `is_manual`, and that row's
    time in ms) its due date set or its Forget: how many cards changed here, and which of
    `sent` the device changed later than we did (its change wins). `day_shift`: how far the
    device's day numbers lag ours (`timing.crt_of`).

    `sent`: the Anki ids of the cards this sync sent the device, changed here since its last
    sync. As on Anki's own server, a card changed on one side only takes the device's marks;
    one changed on both keeps the newer: the device's when nothing changed it here since
    the device did (a card sent back only with our state of the device's own answer, say),
    else ours, which is sent again on the next sync (the device kept its own, as Anki keeps
    the newer by modification time)."""
    by_hand = by_hand or {}
    theirs: dict[int, list[int]] = {}
    both: list[tuple[int, int]] = []
    newer: set[int] = set()
    rows = list(rows)
    ours = ids.cards_of(session, user_id, (row[0] for row in rows), notes=False)
    disputed = [card_id for row in rows if row[0] in sent and (card_id := ours.get(row[0]))]
    changed_here = _last_changed(session, user_id, disputed)
    for row in rows:
        card_id = ours.get(row[0])
        if card_id is None:
            continue
        # The device's change (its card's modification, or a change by hand) is the newer
        # when nothing changed the card here since: then it wins, as Anki's own rule has it.
        changed_at = max(row[8] * 1000 + 999, by_hand.get(row[0], 0))
        if row[0] not in sent:
            theirs[card_id] = row
        elif changed_here.get(card_id, 0) <= changed_at:
            theirs[card_id] = row
            newer.add(row[0])
        else:
            both.append((snapshot.CARD, row[0]))
    snapshot.forget(session, user_id, both)
    if not theirs:
        return len(both), newer
    tz, day_start_hour = user_clock(session, user_id)
    today = study_date(now, tz, day_start_hour)
    # Today in the device's day numbers, which its due days count in.
    device_today = anki_day(now, tz, day_start_hour) - day_shift
    changed = 0
    for card_id, (cid, queue, flag, _nid, _did, kind, due, reps, _mod) in theirs.items():
        try:
            changed += _apply_one(session, user_id, card_id, queue, flag, today, now)
            if cid in by_hand:
                changed += _by_hand(session, user_id, card_id, kind, due - device_today,
                                    reps, now)  # fmt: skip
        except FlashcardsError:
            continue  # not one of their cards here, or one new here: left on the device
    return changed + len(both), newer


def _last_changed(session: Session, user_id: int, card_ids: list[int]) -> dict[int, float]:
    """When the person last answered or acted on each of these cards here (epoch ms); two
    grouped reads a batch of cards, not two a card."""
    found: dict[int, float] = {}
    for i in range(0, len(card_ids), ids.BATCH):
        part = card_ids[i : i + ids.BATCH]
        for model, at in ((ReviewLog, ReviewLog.reviewed_at), (CardAction, CardAction.acted_at)):
            query = (
                select(model.card_id, func.max(at))
                .where(model.user_id == user_id, model.card_id.in_(part))
                .group_by(model.card_id)
            )
            for card_id, when in session.execute(query):
                if when is not None:
                    found[card_id] = max(found.get(card_id, 0), when.timestamp() * 1000)
    return found


def _by_hand(
    session: Session, user_id: int, card_id: int, kind: int, days: int, reps: int,
    now: datetime,
) -> int:  # fmt: skip
    """A device's Set Due Date (a review card, due `days` from today) or Forget (a new card)
    as the same action here."""
    act = device_origin.action_id(user_id, card_id, now)
    if kind == REVIEW:
        days = min(max(days, 0), MAX_DUE_DAYS)
        card_actions.set_due(session, user_id, [card_id], (days, days), now=now, action_id=act)
        return 1
    if kind == NEW:
        card_actions.forget(session, user_id, [card_id], now=now, reset_counts=reps == 0,
                            action_id=act)  # fmt: skip
        return 1
    return 0


def _apply_one(
    session: Session, user_id: int, card_id: int, queue: int, flag: int, today: date,
    now: datetime,
) -> int:  # fmt: skip
    marks = marks_from_row(sql.mark(executor(session), user_id, card_id))
    changes = 0
    # One action of the device's for the card: not undone on the web (`device_origin`).
    act = device_origin.action_id(user_id, card_id, now)
    if marks.suspended != (queue == SUSPENDED):
        card_actions.suspend(session, user_id, [card_id], now=now, on=queue == SUSPENDED,
                             action_id=act)  # fmt: skip
        changes = 1
    buried = marks.buried(today)
    if buried != (queue in BURIED):
        if queue in BURIED:
            card_actions.bury(session, user_id, [card_id], now=now, action_id=act)
        else:
            card_actions.unbury(session, user_id, [card_id], now=now, action_id=act)
        changes = 1
    if marks.flag != flag:
        card_actions.set_flag(session, user_id, [card_id], flag, now=now, action_id=act)
        changes = 1
    return changes
