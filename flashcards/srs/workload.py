"""A person's `load_balance.Workload`, read from the database: their settings and due counts.

Read only when an answer's interval is balanced (a review interval of 3 to 90 days), in one
statement with the settings, and each day once per request: a preview's three balanced
outcomes share the read. For a person who buries review siblings, a second statement reads
when the card's siblings fall due, once per request as well.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

from sqlalchemy.orm import Session

from ..hot_sql.due_counts import day_loads, sibling_dues
from ..hot_sql.rawsql import Executor, executor
from .days import Clock, day_start, study_date
from .load_balance import MAX_BALANCED_INTERVAL, NORMAL_WEEK, SIBLING_REACH, DayLoads, Workload

# Siblings due this far out still weigh on the last days a balanced interval may reach.
_SIBLINGS_UNTIL = MAX_BALANCED_INTERVAL * 11 // 10 + SIBLING_REACH


class PersonsLoads:
    """`load_balance.DueLoads` of one person, read lazily and kept for the request."""

    def __init__(
        self,
        conn: Executor,
        user_id: int,
        today: date,
        clock: Clock,
        card_id: int | None,
        bury_reviews: bool | None,
    ) -> None:
        self.conn, self.user_id, self.today, self.clock = conn, user_id, today, clock
        self.card_id = card_id
        self.counts: dict[int, int] = {}
        self.balancing: bool | None = None  # None: not read yet
        self.week: tuple[float, ...] = NORMAL_WEEK
        # None: learnt with the first counts read (an answer's own read already has it).
        self.bury_reviews = bury_reviews
        self.sibling_days: list[int] | None = None  # None: not read yet

    def __call__(self, low: int, high: int) -> DayLoads | None:
        missing = [d for d in range(low, high + 1) if d not in self.counts]
        if missing and self.balancing is not False:
            first, last = missing[0], missing[-1]
            start = day_start(self.today + timedelta(days=first), *self.clock)
            end = day_start(self.today + timedelta(days=last + 1), *self.clock)
            found = day_loads(self.conn, self.user_id, start, end, last - first + 1)
            self.balancing = found.load_balancing
            if self.bury_reviews is None:
                self.bury_reviews = found.bury_reviews
            if found.easy_days and len(found.easy_days) == 7:
                self.week = tuple(found.easy_days)
            self.counts.update(zip(range(first, last + 1), found.counts, strict=True))
        if not self.balancing:
            return None
        counts = [self.counts[d] for d in range(low, high + 1)]
        return DayLoads(counts, self.week, self.siblings())

    def siblings(self) -> list[int]:
        """The days from today on which the card's siblings fall due (Anki disperses them
        when review siblings are buried)."""
        if self.sibling_days is None:
            self.sibling_days = []
            if self.bury_reviews and self.card_id is not None:
                start = day_start(self.today, *self.clock)
                end = day_start(self.today + timedelta(days=_SIBLINGS_UNTIL), *self.clock)
                dues = sibling_dues(self.conn, self.user_id, self.card_id, start, end)
                self.sibling_days = [
                    (study_date(due, *self.clock) - self.today).days for due in dues
                ]
        return self.sibling_days


def workload(
    db: Session | Executor,
    user_id: int,
    now: datetime,
    clock: Clock,
    card_id: int | None = None,
    *,
    bury_reviews: bool | None = None,
) -> Workload:
    """The person's workload for answers at `now` (their settings say whether it balances);
    with the card answered, its siblings' days are kept apart as the person's options say
    (`bury_reviews`, when the caller has read it already)."""
    today = study_date(now, *clock)
    loads = PersonsLoads(executor(db), user_id, today, clock, card_id, bury_reviews)
    return Workload(today=today, loads=loads)
