"""The load balancer's due counts, read with the answer on PostgreSQL instead of after it.

On PostgreSQL a read is a round trip, and an answer whose interval is balanced would pay a
second one for the person's due counts (`srs.workload`). So the answer's read brings them
along (`hot_sql.answers.answer_read`): how many of the person's cards fall due in each hour
of the days any balanced interval can reach. Hours, because where the person's days begin
is known only from that same row; every time zone's day start is a whole hour in UTC but for
a few (India's, Nepal's...), whose answers read their days apart as before.

The counts given to the balancer are exactly `hot_sql.due_counts.day_loads`'s: whole 24
hours from the range's first day start, up to the last day's end. A range the hours do not
cover (an answer given days ago, a zone off the hour) falls back to that read.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from .days import Clock, day_start
from .load_balance import MAX_BALANCED_INTERVAL, NORMAL_WEEK, DayLoads, DueLoads, Workload
from .workload import PersonsLoads

_HOUR = 3600
_DAY_HOURS = 24
# The fuzz range of a balanced interval (at most 90 days) ends by its 97th day: prefetched
# from the start of a study day after tomorrow (at least 22 hours from now, a 23-hour day
# included) to the end of the 97th (at most 3 hours past 97 days from now).
_FIRST_HOURS = 22
_LAST_HOURS = (MAX_BALANCED_INTERVAL + 7) * _DAY_HOURS + 3


def prefetch_range(now: datetime) -> tuple[datetime, datetime]:
    """The whole hours whose due counts the answer's read brings for an answer at `now`."""
    hour = now.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    return hour + timedelta(hours=_FIRST_HOURS), hour + timedelta(hours=_LAST_HOURS)


class PrefetchedLoads:
    """`load_balance.DueLoads` from the hourly counts the answer's read brought (`row`)."""

    def __init__(
        self,
        row: Any,
        prefetched: tuple[datetime, datetime],
        workload: Workload,
        clock: Clock,
    ) -> None:
        self.today, self.clock, self.fallback = workload.today, clock, workload.loads
        # The card's siblings' days, read apart (rarely: for people who bury review siblings).
        self.persons = workload.loads if isinstance(workload.loads, PersonsLoads) else None
        self.balancing = bool(row.load_balancing)
        easy_days = row.easy_days
        self.week = tuple(easy_days) if easy_days and len(easy_days) == 7 else NORMAL_WEEK
        self.first = _hour_number(prefetched[0])
        self.last = _hour_number(prefetched[1])  # the first hour past the counts
        self.counts = dict(zip(row.due_hours or (), row.due_cards or (), strict=True))

    def __call__(self, low: int, high: int) -> DayLoads | None:
        if not self.balancing:
            return None
        start = day_start(self.today + timedelta(days=low), *self.clock)
        end = day_start(self.today + timedelta(days=high + 1), *self.clock)
        if start.timestamp() % _HOUR or end.timestamp() % _HOUR:
            return self.fallback(low, high)
        first, last = _hour_number(start), _hour_number(end)
        if first < self.first or last > self.last:
            return self.fallback(low, high)
        days = [0] * (high - low + 1)
        for hour, cards in self.counts.items():
            if first <= hour < last:
                day = (hour - first) // _DAY_HOURS
                if day < len(days):  # past the range's last day (a 25-hour day's last hour)
                    days[day] += cards
        siblings = self.persons.siblings() if self.persons is not None else []
        return DayLoads(days, self.week, siblings)


def prefetched_workload(
    row: Any, prefetched: tuple[datetime, datetime], workload: Workload, clock: Clock
) -> Workload:
    """`workload` (read lazily), answering from the counts in `row` where they reach."""
    loads: DueLoads = PrefetchedLoads(row, prefetched, workload, clock)
    return Workload(today=workload.today, loads=loads)


def _hour_number(moment: datetime) -> int:
    return int(moment.timestamp()) // _HOUR
