"""A person's study day: it starts at their day-start hour (default 4:00) in their timezone."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import NamedTuple
from zoneinfo import ZoneInfo


class Clock(NamedTuple):
    """What a person's study day depends on: their timezone and the hour it starts."""

    timezone: str
    day_start_hour: int


def study_date(now: datetime, tz: str, day_start_hour: int) -> date:
    """The calendar date a study day is named after (before 4:00 it is still yesterday)."""
    local = now.astimezone(ZoneInfo(tz))
    return (local - timedelta(hours=day_start_hour)).date()


def day_bounds(now: datetime, tz: str, day_start_hour: int) -> tuple[datetime, datetime]:
    """The UTC start and end of the study day containing `now`."""
    day = study_date(now, tz, day_start_hour)
    return day_start(day, tz, day_start_hour), day_start(
        day + timedelta(days=1), tz, day_start_hour
    )


def day_start(day: date, tz: str, day_start_hour: int) -> datetime:
    # Combining with the zone (not adding hours to midnight) keeps 4:00 at 4:00 across DST.
    return datetime.combine(day, time(day_start_hour), tzinfo=ZoneInfo(tz)).astimezone(UTC)
