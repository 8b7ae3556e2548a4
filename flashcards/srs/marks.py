"""A person's marks on cards (`CardMark`: suspended, buried until a study day, flag, leech,
own tags) and the undo rows of the actions that change them (`CardAction`), written by
`card_actions` (actions a person takes) and `answer_effects` (what an answer brings), read
back by `revert` when `study.undo` undoes either. No Flask; functions never commit.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session, undefer

from ..decks.access import visible_decks
from ..hot_sql import marks as sql
from ..hot_sql.rawsql import Executor, executor
from ..storage.models import Card, CardAction, Deck
from ..storage.retry import LostRace
from . import card_moves
from .state_rows import STATE_COLUMNS, rs

LEECH_TAG = "leech"


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
    card_before: dict[str, Any] | None = None,
) -> None:
    """The undo row of one card's action: its marks (None: no row) and state before, and
    for a move where the card was (`card_moves.restore`)."""
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
            # Only a move's: the rows of every other action keep to the columns they had.
            **({"card_before": card_before} if card_before is not None else {}),
        },
    )


# With a forgotten card's place, so that undoing a second forget puts it back where the
# first one had.
_STATE_WRITTEN = (*STATE_COLUMNS, "introduced_at", "new_position")


def save_place(db: Executor, user_id: int, card_id: int, review_id: str, now: datetime) -> None:
    """Before the answer that starts a forgotten card over: its place among the new cards,
    which the answer clears, in an undo row of that answer (with the card's marks as they
    are, which undoing the answer writes back)."""
    place = {"new_position": sql.new_position(db, user_id, card_id)}
    row = sql.mark(db, user_id, card_id)
    record(db, user_id, card_id, str(uuid.uuid4()), "restart", now, row, place, review_id)


def state_json(state: Any) -> dict[str, Any]:
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


def write_state(
    session: Session, user_id: int, card_id: int, version: int | None, values: dict[str, Any]
) -> None:
    where = [rs.c.user_id == user_id, rs.c.card_id == card_id]
    if version is not None:
        where.append(rs.c.version == version)
    written = session.execute(update(rs).where(*where).values(version=rs.c.version + 1, **values))
    if getattr(written, "rowcount", 0) != 1:
        raise ConcurrentChange(f"card {card_id} changed while it was being changed")


# --- Undo ---


def recent_actions(session: Session, user_id: int, since: datetime, limit: int) -> list[Any]:
    """The person's latest `limit` actions since `since` (not ones that came with an answer)
    on decks they still see, latest first: each's `action_id`, `acted_at`, `action` (its
    name) and a `card_id`."""
    return list(
        session.execute(
            select(
                CardAction.action_id,
                CardAction.acted_at,
                CardAction.id,
                CardAction.action,
                CardAction.card_id,
            )
            .join(Card, Card.id == CardAction.card_id)
            .join(Deck, Deck.id == Card.deck_id)
            .where(
                CardAction.user_id == user_id,
                CardAction.acted_at >= since,
                CardAction.review_id.is_(None),
                visible_decks(user_id),
            )
            .order_by(CardAction.acted_at.desc(), CardAction.id.desc())
            .limit(limit)
        )
    )


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
            .options(undefer(CardAction.card_before))
        )
    )
    db = executor(session)
    for row in rows:
        if row.card_before is not None:  # a move: the card back in its deck first
            card_moves.restore(session, row.card_id, row.card_before)
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
            write_state(session, user_id, row.card_id, None, _state_values(row.state_before))
        session.delete(row)
    session.flush()
    return list(dict.fromkeys(row.card_id for row in reversed(rows)))
