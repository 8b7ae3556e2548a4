"""The statements an answer runs when it buries siblings or marks a leech (`srs.card_actions`).

Run only for an answer that has such work: a card of a note with siblings, under a person's
burying options, or a lapse that reaches the leech threshold. Every other answer runs none.
"""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import Table, and_, bindparam, insert, select, update

from ..srs.state_rows import rs
from ..storage.models import Card, CardAction, CardMark
from .rawsql import Executor, Statement

marks = cast(Table, CardMark.__table__)
actions = cast(Table, CardAction.__table__)
_CARDS = cast(Table, Card.__table__)
MARK_COLUMNS = ("suspended", "buried_until", "flag", "leech", "tags")

_MARK = Statement(
    select(*(marks.c[n] for n in MARK_COLUMNS)).where(
        marks.c.user_id == bindparam("user_id"), marks.c.card_id == bindparam("card_id")
    )
)
# A note's other live cards, each with the person's state and marks (NULL: none).
_SIBLINGS = Statement(
    select(
        _CARDS.c.id.label("card_id"),
        rs.c.state,
        rs.c.due,
        rs.c.last_review,
        marks.c.card_id.label("marked"),
        *(marks.c[n] for n in MARK_COLUMNS),
    )
    .select_from(
        _CARDS.outerjoin(
            rs, and_(rs.c.user_id == bindparam("user_id"), rs.c.card_id == _CARDS.c.id)
        ).outerjoin(
            marks, and_(marks.c.user_id == bindparam("user_id"), marks.c.card_id == _CARDS.c.id)
        )
    )
    .where(
        _CARDS.c.deck_id == bindparam("deck_id"),
        _CARDS.c.note_key == bindparam("note_key"),
        _CARDS.c.id != bindparam("card_id"),
        _CARDS.c.retired_at.is_(None),
    )
    .order_by(_CARDS.c.id)
)
_INSERT_MARK = Statement(insert(marks))
# Bind names must differ from column names in UPDATE, hence the prefix.
_UPDATE_MARK = Statement(
    update(marks)
    .where(marks.c.user_id == bindparam("b_user_id"), marks.c.card_id == bindparam("b_card_id"))
    .values(**{n: bindparam(f"b_{n}") for n in MARK_COLUMNS})
)
_INSERT_ACTION = Statement(insert(actions))
_NEW_POSITION = Statement(
    select(rs.c.new_position).where(
        rs.c.user_id == bindparam("user_id"), rs.c.card_id == bindparam("card_id")
    )
)


def mark(db: Executor, user_id: int, card_id: int) -> Any:
    """The person's marks on the card, or None when they set none."""
    return db.first(_MARK, {"user_id": user_id, "card_id": card_id})


def new_position(db: Executor, user_id: int, card_id: int) -> int | None:
    """A forgotten card's place among its deck's new cards (None: not forgotten)."""
    row = db.first(_NEW_POSITION, {"user_id": user_id, "card_id": card_id})
    return None if row is None else row.new_position


def siblings(db: Executor, user_id: int, deck_id: int, note_key: str, card_id: int) -> list[Any]:
    params = {"user_id": user_id, "deck_id": deck_id, "note_key": note_key, "card_id": card_id}
    return db.all(_SIBLINGS, params)


def write_mark(db: Executor, values: dict[str, Any], *, exists: bool) -> None:
    """`values`: user_id, card_id, deck_id and every mark column."""
    if exists:
        params = {f"b_{n}": values[n] for n in ("user_id", "card_id", *MARK_COLUMNS)}
        db.execute(_UPDATE_MARK, params)
    else:
        db.execute(_INSERT_MARK, values)


def insert_action(db: Executor, values: dict[str, Any]) -> None:
    db.execute(_INSERT_ACTION, values)
