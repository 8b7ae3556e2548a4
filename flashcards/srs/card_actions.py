"""A person's actions on cards beside answering them: suspend, bury, flag, forget, set the due
date (what an answer may do to other cards, bury its siblings or mark a leech, is in
`answer_effects`, through the same marks and undo rows).

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

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..decks.access import visible_decks
from ..errors import CardNotFound, CardNotStudied, InvalidInput
from ..hot_sql import marks as sql
from ..hot_sql.rawsql import executor
from ..people.accounts import user_clock
from ..storage.models import Card, Deck
from ..storage.schema import MAX_ID
from . import card_moves
from .days import Clock, day_start, study_date
from .marks import LEECH_TAG, Marks, marks_from_row, record, state_json, write_marks, write_state
from .state_rows import NEW_STATE, rs

# Anki's flags: 0 none, then red, orange, green, blue, pink, turquoise, purple.
FLAGS = range(0, 8)
MAX_DUE_DAYS = 36500
MAX_SELECTION = 1000


@dataclass(frozen=True)
class ActionResult:
    action_id: str  # what `study.undo` takes to undo it
    card_ids: tuple[int, ...]


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
    restore_position: bool = False,
    reset_counts: bool = False,
    action_id: str | None = None,
) -> ActionResult:
    """Anki's Forget: the cards are new again (no memory state), their history kept, shown
    among their deck's new cards within the day's new-card limit. In the order given, each
    goes after every card new now (Anki's default), or with `restore_position` back to its
    own place in the deck; `reset_counts` sets its review and lapse counts to 0."""
    next_position: dict[int, int] = {}

    def place(state: Any) -> int:
        if restore_position:
            position = session.scalar(select(Card.position).where(Card.id == state.card_id))
            assert position is not None  # the state's card, found visible by `_act`
            return position
        if state.deck_id not in next_position:
            next_position[state.deck_id] = _after_new_cards(session, user_id, state.deck_id)
        position = next_position[state.deck_id]
        next_position[state.deck_id] = position + 1
        return position

    def change(state: Any, _clock: Clock) -> dict[str, Any]:
        values = {
            "state": NEW_STATE,
            "step": None,
            "stability": None,
            "difficulty": None,
            # A new card has no due date: the moment it was forgotten, which no day's
            # reviews or load count (both read days ahead), and which tells this start of
            # the card from its first (`web.study.review_id_at`).
            "due": now,
            "new_position": place(state),
        }
        if reset_counts:
            values.update(reps=0, lapses=0)
        return values

    return _act(session, user_id, card_ids, "forget", now, None, change, action_id)


def _after_new_cards(session: Session, user_id: int, deck_id: int) -> int:
    """The place after the deck's cards and the person's forgotten ones in it."""
    last_card = session.scalar(select(func.max(Card.position)).where(Card.deck_id == deck_id))
    last_forgotten = session.scalar(
        select(func.max(rs.c.new_position)).where(
            rs.c.user_id == user_id, rs.c.deck_id == deck_id, rs.c.new_position.is_not(None)
        )
    )
    return max(last_card or 0, last_forgotten or 0) + 1


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
    range, the same for a card at the same count of reviews). Cards still new (or new again,
    forgotten) have no schedule to move: CardNotStudied."""

    def change(state: Any, clock: Clock) -> dict[str, Any]:
        if state.state == NEW_STATE:
            raise CardNotStudied(f"card {state.card_id} was forgotten: it is new to you again")
        picked = random.Random(f"{user_id}:{state.card_id}:{state.reps}:due").randint(*days)
        today = study_date(now, *clock)
        due = day_start(today + timedelta(days=picked), *clock)
        return {"due": max(due, now) if picked == 0 else due}

    return _act(session, user_id, card_ids, "due", now, None, change, action_id)


MAX_TAG = 100


def check_tag(tag: object) -> str:
    """A tag as Anki allows it: one word (no spaces), at most MAX_TAG characters; `leech` is
    the leech mark's, set by answers."""
    cleaned = tag.strip() if isinstance(tag, str) else ""
    if not cleaned or len(cleaned) > MAX_TAG or any(c.isspace() or c == "\x00" for c in cleaned):
        raise InvalidInput(f"a tag is one word of at most {MAX_TAG} characters", field="tag")
    if cleaned.casefold() == LEECH_TAG:
        raise InvalidInput("the leech tag is set by leech detection", field="tag")
    return cleaned


def add_tag(
    session: Session,
    user_id: int,
    card_ids: Iterable[int],
    tag: str,
    *,
    now: datetime,
    action_id: str | None = None,
) -> ActionResult:
    """Add one of the person's own tags to the cards (their own: the card's are the deck's)."""
    tag = check_tag(tag)
    return _act(
        session,
        user_id,
        card_ids,
        "tag",
        now,
        lambda m, _c: m if tag in m.tags else replace(m, tags=(*m.tags, tag)),
        action_id=action_id,
    )


def remove_tag(
    session: Session,
    user_id: int,
    card_ids: Iterable[int],
    tag: str,
    *,
    now: datetime,
    action_id: str | None = None,
) -> ActionResult:
    tag = check_tag(tag)
    return _act(
        session,
        user_id,
        card_ids,
        "untag",
        now,
        lambda m, _c: replace(m, tags=tuple(t for t in m.tags if t != tag)),
        action_id=action_id,
    )


def move(
    session: Session,
    user_id: int,
    card_ids: Iterable[int],
    deck: object,
    *,
    now: datetime,
    action_id: str | None = None,
) -> ActionResult:
    """Move cards of the person's own decks to another of their own decks (by slug), with
    their progress and history (`card_moves`)."""
    decks = _visible(session, user_id, card_ids)
    card_moves.check_sources(session, user_id, set(decks.values()))
    target = card_moves.target_deck(session, user_id, deck)
    db = executor(session)
    action_id = action_id or str(uuid.uuid4())
    for card_id in decks:
        before = card_moves.move_card(session, card_id, target, now=now)
        if before is not None:
            row = sql.mark(db, user_id, card_id)
            record(db, user_id, card_id, action_id, "move", now, row, card_before=before)
    return ActionResult(action_id, tuple(decks))


BULK_ACTIONS = (
    "suspend", "unsuspend", "bury", "unbury", "flag", "add_tag", "remove_tag", "forget", "due",
    "move",
)  # fmt: skip


def act(
    session: Session,
    user_id: int,
    card_ids: Iterable[int],
    action: str,
    *,
    now: datetime,
    flag: int | None = None,
    tag: str | None = None,
    due: object = None,
    restore_position: bool = False,
    reset_counts: bool = False,
    deck: str | None = None,
) -> ActionResult:
    """One of BULK_ACTIONS by name, with the value it needs (`flag`, `tag`, `due` as
    `parse_due_days` reads it, the `deck` to move to; forget's options): the card
    browser's, on the web and in the API."""
    ids = list(card_ids)

    def needed(name: str, value: Any) -> Any:
        if value is None:
            raise InvalidInput(f"{name} is required for {action}", field=name)
        return value

    match action:
        case "suspend" | "unsuspend":
            return suspend(session, user_id, ids, now=now, on=action == "suspend")
        case "bury":
            return bury(session, user_id, ids, now=now)
        case "unbury":
            return unbury(session, user_id, ids, now=now)
        case "flag":
            return set_flag(session, user_id, ids, needed("flag", flag), now=now)
        case "add_tag":
            return add_tag(session, user_id, ids, needed("tag", tag), now=now)
        case "remove_tag":
            return remove_tag(session, user_id, ids, needed("tag", tag), now=now)
        case "forget":
            return forget(
                session,
                user_id,
                ids,
                now=now,
                restore_position=restore_position,
                reset_counts=reset_counts,
            )
        case "due":
            days = parse_due_days(needed("due", due))
            return set_due(session, user_id, ids, days, now=now)
        case "move":
            return move(session, user_id, ids, needed("deck", deck), now=now)
    raise InvalidInput(f"action is one of {', '.join(BULK_ACTIONS)}", field="action")


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
            state_before = state_json(state)
            write_state(session, user_id, card_id, state.version, values)
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
