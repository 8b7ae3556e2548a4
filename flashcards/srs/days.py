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


UNIX_EPOCH = date(1970, 1, 1).toordinal()
SECONDS_A_DAY = 86_400
UNKNOWN = 1 << 40  # no zone's offset: a UTC day not looked at yet


class StudyDates:
    """`study_date` of many moments, each given as a POSIX timestamp, as date ordinals.

    An export, a sync's collection or a replayed package asks for the study dates of a whole
    review log (a hundred thousand answers): converting each moment to the zone costs about
    ten times the arithmetic. A UTC day whose offset is the same at its start, middle and end
    has that offset throughout (no zone changes its offset twice within 12 hours), so its
    moments' dates are arithmetic on the timestamp; a day with a change of offset in it is
    converted moment by moment. `tests/test_days.py` holds it to `study_date`.
    """

    def __init__(self, tz: str, day_start_hour: int) -> None:
        self.clock = Clock(tz, day_start_hour)
        self.zone = ZoneInfo(tz)
        self.offsets: dict[int, int | None] = {}  # by UTC day: its seconds east, or None

    def ordinal(self, timestamp: float) -> int:
        utc_day = int(timestamp // SECONDS_A_DAY)
        offset = self.offsets.get(utc_day, UNKNOWN)
        if offset == UNKNOWN:
            offset = self.offsets[utc_day] = self._steady_offset(utc_day)
        if offset is None:
            moment = datetime.fromtimestamp(timestamp, UTC)
            return study_date(moment, *self.clock).toordinal()
        seconds = timestamp + offset - self.clock.day_start_hour * 3600
        return UNIX_EPOCH + int(seconds // SECONDS_A_DAY)

    def _steady_offset(self, utc_day: int) -> int | None:
        start = utc_day * SECONDS_A_DAY
        found = {
            datetime.fromtimestamp(moment, self.zone).utcoffset()
            for moment in (start, start + SECONDS_A_DAY // 2, start + SECONDS_A_DAY - 1)
        }
        if len(found) != 1:
            return None
        (offset,) = found
        # Historical local mean times have offsets in seconds: still whole seconds.
        return int(offset.total_seconds()) if offset is not None else None
