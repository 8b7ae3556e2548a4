"""A person's actions on cards beside answering them: suspend, bury, flag, forget, set the due
date; and what an answer may do to other cards (bury its siblings, mark a leech).

Every function takes a selection of card ids, so that the review page (one card) and a card
browser (many) act through the same code; one call is one action, undone as a whole by
`study.undo` like an answer. Each card's marks (`CardMark`) and, for forget and set-due, its
state are saved in a `CardAction` row before they change: undoing restores them. No Flask;
functions take a session and `now` and never commit.
"""

from __future__ import annotations

import random
import re
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from ..decks.access import visible_decks
from ..errors import CardNotFound, CardNotStudied, InvalidInput
from ..hot_sql import marks as sql
from ..hot_sql.rawsql import Executor, executor
from ..people.accounts import user_clock
from ..storage.models import Card, CardAction, Deck, StudyOptions
from ..storage.retry import LostRace
from ..storage.schema import MAX_ID
from .days import Clock, day_bounds, day_start, study_date
from .state_rows import STATE_COLUMNS, rs

# Anki's flags: 0 none, then red, orange, green, blue, pink, turquoise, purple.
FLAGS = range(0, 8)
LEECH_TAG = "leech"
MAX_DUE_DAYS = 36500
MAX_SELECTION = 1000
MAX_LEECH_THRESHOLD = 99
LEARNING_STATES = (1, 3)
REVIEW_STATE = 2


class ConcurrentChange(LostRace):
    """An answer changed the card's state between our read and our write."""


@dataclass(frozen=True)
class Marks:
    """What a person set on a card; the defaults are what no row means."""

    suspended: bool = False
    buried_until: date | None = None  # the study day it shows again
    flag: int = 0
    leech: bool = False
    tags: tuple[str, ...] = ()

    def buried(self, today: date) -> bool:
        return self.buried_until is not None and self.buried_until > today

    def hidden(self, today: date) -> bool:
        """Kept out of the queue today."""
        return self.suspended or self.buried(today)

    def all_tags(self, card_tags: Iterable[str]) -> list[str]:
        """The card's tags, the person's own, and `leech`: as Anki shows (and exports) them."""
        tags = dict.fromkeys([*card_tags, *self.tags, *([LEECH_TAG] if self.leech else [])])
        return list(tags)


@dataclass(frozen=True)
class ActionResult:
    action_id: str  # what `study.undo` takes to undo it
    card_ids: tuple[int, ...]


@dataclass(frozen=True)
class Options:
    bury_new: bool = False
    bury_reviews: bool = False
    bury_interday: bool = False
    leech_threshold: int = 8
    leech_suspend: bool = False


def is_leech(lapses: int, threshold: int) -> bool:
    """Anki's rule: at the threshold, then again every half-threshold (8, 12, 16...)."""
    if lapses < threshold:
        return False
    return (lapses - threshold) % max(threshold // 2, 1) == 0


def marks_from_row(row: Any) -> Marks:
    if row is None or getattr(row, "suspended", None) is None:
        return Marks()
    return Marks(
        suspended=bool(row.suspended),
        buried_until=row.buried_until,
        flag=int(row.flag),
        leech=bool(row.leech),
        tags=tuple(row.tags or ()),
    )


def card_marks(db: Session | Executor, user_id: int, card_id: int) -> Marks:
    return marks_from_row(sql.mark(executor(db), user_id, card_id))


def options(session: Session, user_id: int) -> Options:
    row = session.get(StudyOptions, user_id)
    if row is None:
        return Options()
    return Options(
        row.bury_new, row.bury_reviews, row.bury_interday, row.leech_threshold, row.leech_suspend
    )


# --- Actions on a selection ---


def suspend(
    session: Session,
    user_id: int,
    card_ids: Iterable[int],
    *,
    now: datetime,
    on: bool = True,
    action_id: str | None = None,
) -> ActionResult:
    """`action_id` (here and in each action): the id of an action this one joins, so that
    several changes (a PATCH of several fields) are undone as one."""
    action = "suspend" if on else "unsuspend"
    return _act(
        session,
        user_id,
        card_ids,
        action,
        now,
        lambda m, _c: replace(m, suspended=on),
        action_id=action_id,
    )


def bury(
    session: Session,
    user_id: int,
    card_ids: Iterable[int],
    *,
    now: datetime,
    until: date | None = None,
    action_id: str | None = None,
) -> ActionResult:
    """Keep the cards out of the queue until the study day `until` (default: the next one)."""

    def change(marks: Marks, clock: Clock) -> Marks:
        today = study_date(now, *clock)
        if until is not None and until <= today:
            raise InvalidInput(
                "a card is buried until a study day after today", field="buried_until"
            )
        return replace(marks, buried_until=until or today + timedelta(days=1))

    return _act(session, user_id, card_ids, "bury", now, change, action_id=action_id)


def unbury(
    session: Session,
    user_id: int,
    card_ids: Iterable[int],
    *,
    now: datetime,
    action_id: str | None = None,
) -> ActionResult:
    return _act(
        session,
        user_id,
        card_ids,
        "unbury",
        now,
        lambda m, _c: replace(m, buried_until=None),
        action_id=action_id,
    )


def set_flag(
    session: Session,
    user_id: int,
    card_ids: Iterable[int],
    flag: int,
    *,
    now: datetime,
    action_id: str | None = None,
) -> ActionResult:
    if isinstance(flag, bool) or not isinstance(flag, int) or flag not in FLAGS:
        raise InvalidInput("flag must be 0 (none) to 7", field="flag")
    return _act(
        session,
        user_id,
        card_ids,
        "flag",
        now,
        lambda m, _c: replace(m, flag=flag),
        action_id=action_id,
    )


def forget(
    session: Session,
    user_id: int,
    card_ids: Iterable[int],
    *,
    now: datetime,
    action_id: str | None = None,
) -> ActionResult:
    """Start the cards over, as if new (no memory state), their history kept. As Anki's
    default, the review and lapse counts stay. They are shown again at once."""

    def change(state: Any, _clock: Clock) -> dict[str, Any]:
        return {
            "state": LEARNING_STATES[0],
            "step": 0,
            "stability": None,
            "difficulty": None,
            "due": now,
            "last_review": None,
            "introduced_at": now,
        }

    return _act(session, user_id, card_ids, "forget", now, None, change, action_id)


def parse_due_days(value: object) -> tuple[int, int]:
    """Anki's "set due date" days: `N` (0 is today) or a range `N-M`, picked per card."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    match = (
        re.fullmatch(r"\s*(\d{1,5})\s*(?:-\s*(\d{1,5})\s*)?", value)
        if isinstance(value, str)
        else None
    )
    if match is None:
        raise InvalidInput(
            "due is a number of days (0 is today) or a range such as 1-7", field="due"
        )
    first = int(match.group(1))
    last = int(match.group(2)) if match.group(2) is not None else first
    if not first <= last <= MAX_DUE_DAYS:
        raise InvalidInput(f"due days must be in order and at most {MAX_DUE_DAYS}", field="due")
    return first, last


def set_due(
    session: Session,
    user_id: int,
    card_ids: Iterable[int],
    days: tuple[int, int],
    *,
    now: datetime,
    action_id: str | None = None,
) -> ActionResult:
    """Make studied cards due at the start of a study day `days` from today (a day of the
    range, the same for a card at the same count of reviews). Cards still new have no
    schedule to move: CardNotStudied."""

    def change(state: Any, clock: Clock) -> dict[str, Any]:
        picked = random.Random(f"{user_id}:{state.card_id}:{state.reps}:due").randint(*days)
        today = study_date(now, *clock)
        due = day_start(today + timedelta(days=picked), *clock)
        return {"due": max(due, now) if picked == 0 else due}

    return _act(session, user_id, card_ids, "due", now, None, change, action_id)


def _visible(session: Session, user_id: int, card_ids: Iterable[int]) -> dict[int, int]:
    """The cards' decks, if the person may see every card; CardNotFound for the first not."""
    ids = list(dict.fromkeys(card_ids))
    if not ids:
        raise InvalidInput("no cards given", field="card_ids")
    if len(ids) > MAX_SELECTION:
        raise InvalidInput(f"at most {MAX_SELECTION} cards at once", field="card_ids")
    for card_id in ids:
        if not isinstance(card_id, int) or not 1 <= card_id <= MAX_ID:
            raise CardNotFound(f"no card {card_id}")
    found = {
        row.id: row.deck_id
        for row in session.execute(
            select(Card.id, Card.deck_id)
            .join(Deck, Deck.id == Card.deck_id)
            .where(Card.id.in_(ids), visible_decks(user_id))
        )
    }
    for card_id in ids:
        if card_id not in found:
            raise CardNotFound(f"no card {card_id}")
    return {card_id: found[card_id] for card_id in ids}


def _act(
    session: Session,
    user_id: int,
    card_ids: Iterable[int],
    action: str,
    now: datetime,
    change_marks: Callable[[Marks, Clock], Marks] | None,
    change_state: Callable[[Any, Clock], dict[str, Any]] | None = None,
    action_id: str | None = None,
) -> ActionResult:
    decks = _visible(session, user_id, card_ids)
    clock = user_clock(session, user_id)
    db = executor(session)
    action_id = action_id or str(uuid.uuid4())
    for card_id, deck_id in decks.items():
        row = sql.mark(db, user_id, card_id)
        before = marks_from_row(row)
        state_before = None
        if change_state is not None:
            state = session.execute(
                select(rs).where(rs.c.user_id == user_id, rs.c.card_id == card_id)
            ).first()
            if state is None:
                raise CardNotStudied(f"card {card_id} is still new to you: it has no schedule")
            values = change_state(state, clock)
            state_before = _state_json(state)
            _write_state(session, user_id, card_id, state.version, values)
        changed = state_before is not None
        if change_marks is not None:
            after = change_marks(before, clock)
            if after != before:
                write_marks(db, user_id, card_id, deck_id, after, exists=row is not None)
                changed = True
        # A card the action leaves as it was gets no undo row: nothing to take back.
        if changed:
            record(db, user_id, card_id, action_id, action, now, row, state_before)
    return ActionResult(action_id, tuple(decks))


def write_marks(
    db: Executor, user_id: int, card_id: int, deck_id: int, marks: Marks, *, exists: bool
) -> None:
    values = {
        "user_id": user_id,
        "card_id": card_id,
        "deck_id": deck_id,
        "suspended": marks.suspended,
        "buried_until": marks.buried_until,
        "flag": marks.flag,
        "leech": marks.leech,
        "tags": list(marks.tags),
    }
    sql.write_mark(db, values, exists=exists)


def record(
    db: Executor,
    user_id: int,
    card_id: int,
    action_id: str,
    action: str,
    now: datetime,
    marks_row: Any,
    state_before: dict[str, Any] | None = None,
    review_id: str | None = None,
) -> None:
    """The undo row of one card's action: its marks (None: no row) and state before."""
    marks_before = None
    if marks_row is not None:
        marks_before = {n: getattr(marks_row, n) for n in sql.MARK_COLUMNS}
        if marks_before["buried_until"] is not None:
            marks_before["buried_until"] = marks_before["buried_until"].isoformat()
    sql.insert_action(
        db,
        {
            "action_id": action_id,
            "user_id": user_id,
            "card_id": card_id,
            "action": action,
            "acted_at": now,
            "review_id": review_id,
            "marks_before": marks_before,
            "state_before": state_before,
        },
    )


_STATE_WRITTEN = (*STATE_COLUMNS, "introduced_at")


def _state_json(state: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in _STATE_WRITTEN:
        value = getattr(state, name)
        out[name] = value.isoformat() if isinstance(value, datetime) else value
    return out


def _state_values(saved: dict[str, Any]) -> dict[str, Any]:
    times = ("due", "last_review", "introduced_at")
    return {
        n: datetime.fromisoformat(v) if n in times and v is not None else v
        for n, v in saved.items()
    }


def _write_state(
    session: Session, user_id: int, card_id: int, version: int | None, values: dict[str, Any]
) -> None:
    where = [rs.c.user_id == user_id, rs.c.card_id == card_id]
    if version is not None:
        where.append(rs.c.version == version)
    written = session.execute(update(rs).where(*where).values(version=rs.c.version + 1, **values))
    if getattr(written, "rowcount", 0) != 1:
        raise ConcurrentChange(f"card {card_id} changed while it was being changed")


# --- Undo ---


def latest_action(session: Session, user_id: int, since: datetime) -> Any:
    """The person's latest action since `since` (not one that came with an answer) on a deck
    they still see: its `action_id` and `acted_at`; None when there is none."""
    return session.execute(
        select(CardAction.action_id, CardAction.acted_at, CardAction.id)
        .join(Card, Card.id == CardAction.card_id)
        .join(Deck, Deck.id == Card.deck_id)
        .where(
            CardAction.user_id == user_id,
            CardAction.acted_at >= since,
            CardAction.review_id.is_(None),
            visible_decks(user_id),
        )
        .order_by(CardAction.acted_at.desc(), CardAction.id.desc())
        .limit(1)
    ).first()


def exists(session: Session, user_id: int, action_id: str) -> bool:
    named = select(CardAction.id).where(
        CardAction.action_id == action_id, CardAction.user_id == user_id
    )
    return session.scalar(named.limit(1)) is not None


def revert(
    session: Session, user_id: int, *, action_id: str | None = None, review_id: str | None = None
) -> list[int]:
    """Undo an action (by `action_id`), or what came with an answer (by its `review_id`):
    each card's marks and state as they were. The cards, in the order acted on."""
    where = (
        CardAction.action_id == action_id if action_id is not None
        else CardAction.review_id == review_id
    )  # fmt: skip
    rows = list(
        session.scalars(
            select(CardAction)
            .where(CardAction.user_id == user_id, where)
            .order_by(CardAction.id.desc())
        )
    )
    db = executor(session)
    for row in rows:
        deck_id = session.scalar(select(Card.deck_id).where(Card.id == row.card_id))
        assert deck_id is not None  # the action row goes with its card
        saved = row.marks_before
        if saved is None:
            session.execute(
                delete(sql.marks).where(
                    sql.marks.c.user_id == user_id, sql.marks.c.card_id == row.card_id
                )
            )
        else:
            until = saved["buried_until"]
            marks = Marks(
                suspended=bool(saved["suspended"]),
                buried_until=date.fromisoformat(until) if until else None,
                flag=int(saved["flag"]),
                leech=bool(saved["leech"]),
                tags=tuple(saved["tags"] or ()),
            )
            exists = sql.mark(db, user_id, row.card_id) is not None
            write_marks(db, user_id, row.card_id, deck_id, marks, exists=exists)
        if row.state_before is not None:
            _write_state(session, user_id, row.card_id, None, _state_values(row.state_before))
        session.delete(row)
    session.flush()
    return list(dict.fromkeys(row.card_id for row in reversed(rows)))


# --- What an answer does to other cards ---


@dataclass(frozen=True)
class AnswerEffects:
    """Work an answer brings beyond its own state and log, decided when it is prepared."""

    user_id: int
    card_id: int
    deck_id: int
    review_id: str
    when: datetime
    clock: Clock
    leech: bool  # the answer's lapse makes the card a leech (again)
    suspend_leech: bool
    note_key: str | None  # siblings to look at, under these options
    bury_new: bool
    bury_reviews: bool
    bury_interday: bool


def answer_effects(
    user_id: int, row: Any, review_id: str, when: datetime, lapses_before: int, after: Any
) -> AnswerEffects | None:
    """What the answer read in `row` (the card's note, the person's options) brings, or None."""
    threshold = row.leech_threshold if row.leech_threshold is not None else Options.leech_threshold
    leech = after.lapses > lapses_before and is_leech(after.lapses, threshold)
    bury = bool(row.bury_new or row.bury_reviews or row.bury_interday)
    if not leech and not (bury and row.note_key is not None):
        return None
    return AnswerEffects(
        user_id=user_id,
        card_id=row.card_id,
        deck_id=row.deck_id,
        review_id=review_id,
        when=when,
        clock=Clock(row.timezone, row.day_start_hour),
        leech=leech,
        suspend_leech=bool(row.leech_suspend),
        note_key=row.note_key if bury else None,
        bury_new=bool(row.bury_new),
        bury_reviews=bool(row.bury_reviews),
        bury_interday=bool(row.bury_interday),
    )


def apply_answer_effects(db: Executor, effects: AnswerEffects) -> None:
    """Mark the leech and bury the siblings, in the answer's transaction; each change is
    recorded under the answer's review id, so that undoing the answer undoes it too."""
    user_id, now = effects.user_id, effects.when
    if effects.leech:
        row = sql.mark(db, user_id, effects.card_id)
        before = marks_from_row(row)
        after = replace(before, leech=True, suspended=before.suspended or effects.suspend_leech)
        write_marks(db, user_id, effects.card_id, effects.deck_id, after, exists=row is not None)
        record(db, user_id, effects.card_id, effects.review_id, "leech", now, row,
               review_id=effects.review_id)  # fmt: skip
    if effects.note_key is None:
        return
    today = study_date(now, *effects.clock)
    start, end = day_bounds(now, *effects.clock)
    tomorrow = today + timedelta(days=1)
    for sibling in sql.siblings(db, user_id, effects.deck_id, effects.note_key, effects.card_id):
        marks = marks_from_row(sibling if sibling.marked is not None else None)
        if marks.hidden(today) or not _buried_with(sibling, effects, start, end):
            continue
        after = replace(marks, buried_until=tomorrow)
        exists = sibling.marked is not None
        write_marks(db, user_id, sibling.card_id, effects.deck_id, after, exists=exists)
        record(db, user_id, sibling.card_id, effects.review_id, "bury_sibling", now,
               sibling if exists else None, review_id=effects.review_id)  # fmt: skip


def _buried_with(sibling: Any, effects: AnswerEffects, start: datetime, end: datetime) -> bool:
    """Whether the options bury this sibling: a new one; a review due today; one in learning
    from an earlier day (interday) due today. Learning begun today is never buried, as in
    Anki."""
    if sibling.state is None:
        return effects.bury_new
    if sibling.due >= end:
        return False
    if sibling.state == REVIEW_STATE:
        return effects.bury_reviews
    interday = sibling.last_review is not None and sibling.last_review < start
    return effects.bury_interday and interday


def set_options(session: Session, user_id: int, **values: Any) -> Options:
    """Change some of the person's burying and leech options (validated here)."""
    current = options(session, user_id)
    for name, value in values.items():
        if name not in Options.__dataclass_fields__:
            raise InvalidInput(f"unknown option {name}", field=name)
        if name == "leech_threshold":
            if (
                isinstance(value, bool)
                or not isinstance(value, int)
                or not 1 <= value <= MAX_LEECH_THRESHOLD
            ):
                raise InvalidInput(f"leech_threshold must be 1-{MAX_LEECH_THRESHOLD}", field=name)
        elif not isinstance(value, bool):
            raise InvalidInput(f"{name} must be true or false", field=name)
    updated = replace(current, **values)
    row = session.get(StudyOptions, user_id)
    if row is None:
        row = StudyOptions(user_id=user_id)
        session.add(row)
    for name in Options.__dataclass_fields__:
        setattr(row, name, getattr(updated, name))
    session.flush()
    return updated
