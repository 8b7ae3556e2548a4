"""The load balancer's reads: how many of a person's cards fall due on each day of a range,
and when the siblings of the card being answered fall due.

One grouped statement on the (user_id, due) index alone, whatever the range's width, with two
times bound: the range's first day start and its end. Days are counted in whole 24 hours from
the first day's start; on a range across a daylight-saving change, a card due within that
hour of the day start may count on the neighbouring day, which a balancer's weighing of
a dozen days does not notice.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Integer, Table, bindparam, func, select, true
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.functions import FunctionElement

from ..srs.state_rows import rs
from ..storage.models import Card, SchedulerSettings, StudyOptions
from .rawsql import Executor, Statement


class _DaysSince(FunctionElement[int]):
    """Whole days from the second time to the first (both UTC)."""

    type = Integer()
    inherit_cache = True


@compiles(_DaysSince, "sqlite")
def _days_since_sqlite(element: Any, compiler: Any, **kw: Any) -> str:
    due, start = (compiler.process(arg, **kw) for arg in element.clauses)
    return f"CAST(julianday({due}) - julianday({start}) AS INTEGER)"


@compiles(_DaysSince, "postgresql")
def _days_since_postgresql(element: Any, compiler: Any, **kw: Any) -> str:
    due, start = (compiler.process(arg, **kw) for arg in element.clauses)
    return f"CAST(floor(extract(epoch FROM ({due} - {start})) / 86400) AS INTEGER)"


_SETTINGS = cast(Table, SchedulerSettings.__table__)
_START = bindparam("start", type_=rs.c.due.type)
_DAY = _DaysSince(rs.c.due, _START).label("day")
_PER_DAY = (
    select(_DAY, func.count().label("cards"))
    .where(
        rs.c.user_id == bindparam("user_id"),
        rs.c.due >= _START,
        rs.c.due < bindparam("end", type_=rs.c.due.type),
    )
    .group_by(_DAY)
    .subquery("per_day")
)
# The person's balancing settings with the counts: one round trip. Read when a previewed or
# (on SQLite) answered interval is balanced only; PostgreSQL's answers bring the counts with
# their own read (`srs.answer_loads`), and come here only for a range it did not cover.
_OPTIONS = cast(Table, StudyOptions.__table__)
_LOADS = Statement(
    select(
        _SETTINGS.c.load_balancing,
        _SETTINGS.c.easy_days,
        _OPTIONS.c.bury_reviews,  # NULL: no options row, Anki's default (off)
        _PER_DAY.c.day,
        _PER_DAY.c.cards,
    )
    .select_from(
        _SETTINGS.outerjoin(_PER_DAY, _SETTINGS.c.load_balancing.is_(true())).outerjoin(
            _OPTIONS, _OPTIONS.c.user_id == _SETTINGS.c.user_id
        )
    )
    .where(_SETTINGS.c.user_id == bindparam("user_id"))
)
# The card's siblings (its deck's other cards of its note) due in the range: from the card
# by its key, its siblings by (deck_id, note_key), their states by key. Read only for a
# person who buries review siblings.
_CARDS = cast(Table, Card.__table__)
_SIBLING = _CARDS.alias("sibling")
_SIBLING_DUES = Statement(
    select(rs.c.due)
    .select_from(
        _CARDS.join(
            _SIBLING,
            (_SIBLING.c.deck_id == _CARDS.c.deck_id) & (_SIBLING.c.note_key == _CARDS.c.note_key),
        ).join(rs, (rs.c.user_id == bindparam("user_id")) & (rs.c.card_id == _SIBLING.c.id))
    )
    .where(
        _CARDS.c.id == bindparam("card_id"),
        _SIBLING.c.id != bindparam("card_id"),
        _SIBLING.c.retired_at.is_(None),
        rs.c.due >= _START,
        rs.c.due < bindparam("end", type_=rs.c.due.type),
    )
)


@dataclass(frozen=True)
class Loads:
    load_balancing: bool
    easy_days: list[float] | None
    bury_reviews: bool
    counts: list[int]  # per day of the range read


def day_loads(db: Executor, user_id: int, start: datetime, end: datetime, days: int) -> Loads:
    """The person's balancing settings, and the cards due on each of the `days` days from
    `start` (a day start) to `end` when they balance (else no counts are read)."""
    counts = [0] * days
    rows = db.all(_LOADS, {"user_id": user_id, "start": start, "end": end})
    if not rows:  # no settings row: no answer either (its read joins them)
        return Loads(False, None, False, counts)
    for row in rows:
        if row.day is not None and 0 <= row.day < days:
            counts[row.day] += row.cards
    first = rows[0]
    return Loads(bool(first.load_balancing), first.easy_days, bool(first.bury_reviews), counts)


def sibling_dues(
    db: Executor, user_id: int, card_id: int, start: datetime, end: datetime
) -> list[datetime]:
    """When the person's states of the card's siblings fall due, from `start` to `end`."""
    params = {"user_id": user_id, "card_id": card_id, "start": start, "end": end}
    return [row.due for row in db.all(_SIBLING_DUES, params)]
