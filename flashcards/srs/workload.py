"""A person's `load_balance.Workload`, read from the database: their settings and due counts.

Read only when an answer's interval is balanced (a review interval of 3 to 90 days), in one
statement with the settings, and each day once per request: a preview's three balanced
outcomes share the read.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

from sqlalchemy.orm import Session

from ..hot_sql.due_counts import day_loads
from ..hot_sql.rawsql import Executor, executor
from .days import Clock, day_start, study_date
from .load_balance import NORMAL_WEEK, DayLoads, Workload


class _PersonsLoads:
    """`load_balance.DueLoads` of one person, read lazily and kept for the request."""

    def __init__(self, conn: Executor, user_id: int, today: date, clock: Clock) -> None:
        self.conn, self.user_id, self.today, self.clock = conn, user_id, today, clock
        self.counts: dict[int, int] = {}
        self.balancing: bool | None = None  # None: not read yet
        self.week: tuple[float, ...] = NORMAL_WEEK

    def __call__(self, low: int, high: int) -> DayLoads | None:
        missing = [d for d in range(low, high + 1) if d not in self.counts]
        if missing and self.balancing is not False:
            first, last = missing[0], missing[-1]
            start = day_start(self.today + timedelta(days=first), *self.clock)
            end = day_start(self.today + timedelta(days=last + 1), *self.clock)
            found = day_loads(self.conn, self.user_id, start, end, last - first + 1)
            self.balancing = found.load_balancing
            if found.easy_days and len(found.easy_days) == 7:
                self.week = tuple(found.easy_days)
            self.counts.update(zip(range(first, last + 1), found.counts, strict=True))
        if not self.balancing:
            return None
        return DayLoads([self.counts[d] for d in range(low, high + 1)], self.week)


def workload(db: Session | Executor, user_id: int, now: datetime, clock: Clock) -> Workload:
    """The person's workload for answers at `now` (their settings say whether it balances)."""
    today = study_date(now, *clock)
    return Workload(today=today, loads=_PersonsLoads(executor(db), user_id, today, clock))
