"""The load balancer's read: how many of a person's cards fall due on each day of a range.

One grouped statement on the (user_id, due) index alone, whatever the range's width, with two
times bound: the range's first day start and its end. Days are counted in whole 24 hours from
the first day's start; on a range across a daylight-saving change, a card due within that
hour of the day start may count on the neighbouring day, which a balancer's weighing of
a dozen days does not notice.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Integer, bindparam, func, select
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.functions import FunctionElement

from ..srs.state_rows import rs
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


_START = bindparam("start", type_=rs.c.due.type)
_DAY = _DaysSince(rs.c.due, _START).label("day")
_COUNTS = Statement(
    select(_DAY, func.count().label("cards"))
    .where(
        rs.c.user_id == bindparam("user_id"),
        rs.c.due >= _START,
        rs.c.due < bindparam("end", type_=rs.c.due.type),
    )
    .group_by(_DAY)
)


def due_counts(db: Executor, user_id: int, start: datetime, end: datetime, days: int) -> list[int]:
    """Cards due on each of the `days` days from `start` (a day start) to `end`."""
    counts = [0] * days
    for row in db.all(_COUNTS, {"user_id": user_id, "start": start, "end": end}):
        if 0 <= row.day < days:
            counts[row.day] += row.cards
    return counts
