"""The load balancer's read: how many of a person's cards fall due on each day of a range.

One statement per range width (fuzz ranges are at most a dozen or so days wide), a column per
day, on the (user_id, due) index alone: the day boundaries are computed in Python in the
person's time zone, so days across a DST change are still their study days.
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache

from sqlalchemy import and_, bindparam, case, func, select

from ..srs.state_rows import rs
from .rawsql import Executor, Statement


@lru_cache(maxsize=128)
def _counts(width: int) -> Statement:
    bounds = [bindparam(f"b{i}", type_=rs.c.due.type) for i in range(width + 1)]
    return Statement(
        select(
            *(
                func.coalesce(
                    func.sum(case((and_(rs.c.due >= bounds[i], rs.c.due < bounds[i + 1]), 1))), 0
                ).label(f"d{i}")
                for i in range(width)
            )
        ).where(
            rs.c.user_id == bindparam("user_id"),
            rs.c.due >= bounds[0],
            rs.c.due < bounds[width],
        )
    )


def due_counts(db: Executor, user_id: int, bounds: list[datetime]) -> list[int]:
    """Cards due in each [bounds[i], bounds[i + 1]) of the person's."""
    width = len(bounds) - 1
    params = {"user_id": user_id, **{f"b{i}": bound for i, bound in enumerate(bounds)}}
    row = db.first(_counts(width), params)
    return [int(value or 0) for value in row]
