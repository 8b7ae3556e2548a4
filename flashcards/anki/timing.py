"""Anki's day numbers, matched to a person's study day (timezone and day-start hour).

Anki counts days since the collection's creation date `crt`; with `creationOffset` set, that
date is `crt` read at the given offset and a day begins at the `rollover` hour. We always
write `crt` = midnight UTC of DAY0 with `creationOffset` 0, so day N is DAY0 + N, and a
moment's day number is its study date (local time minus the day-start hour) minus DAY0.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from ..srs.days import study_date

DAY0 = date(2020, 1, 1)
CRT = int(datetime.combine(DAY0, time(0), tzinfo=UTC).timestamp())
DAY = timedelta(days=1)


def anki_day(when: datetime, tz: str, day_start_hour: int) -> int:
    return (study_date(when, tz, day_start_hour) - DAY0).days


def source_today(
    crt: int, creation_offset: int | None, rollover: int, now: datetime, tz: str
) -> int:
    """The day number a package's collection has at `now`, as Anki computes it on import.

    With `creationOffset` (minutes west) the count is calendar dates between creation and now,
    less one before the rollover hour (`scheduler/timing.rs`, v2 "new" timing). Without it,
    Anki's legacy timing counts whole days since `crt` moved to its rollover hour.
    """
    local_now = now.astimezone(ZoneInfo(tz))
    if creation_offset is not None:
        created = (datetime.fromtimestamp(crt, UTC) - timedelta(minutes=creation_offset)).date()
        days = (local_now.date() - created).days
        if local_now.hour < rollover:
            days -= 1
        return max(days, 0)
    created_local = datetime.fromtimestamp(crt, UTC).astimezone(ZoneInfo(tz))
    start = created_local.replace(hour=rollover, minute=0, second=0, microsecond=0)
    return max(int((now - start).total_seconds() // 86400), 0)


def crt_of(day_shift: int) -> int:
    """The `crt` (with `creationOffset` 0) whose day numbers are ours less `day_shift`."""
    return CRT + day_shift * 86_400


def day_shift_of(
    crt: int, creation_offset: int | None, rollover: int, now: datetime, tz: str,
    day_start_hour: int,
) -> int:  # fmt: skip
    """How many days a collection's day numbers (`source_today`) lag ours, today. Counted at
    a moment of today when both days have begun (halfway from the later of the two day
    starts to midnight): where the device's day starts at another hour than the person's,
    `now` can fall in one's new day and the other's old one."""
    today = study_date(now, tz, day_start_hour)
    minutes = (max(rollover, day_start_hour) * 60 + 24 * 60) // 2
    moment = datetime.combine(today, time(minutes // 60, minutes % 60), tzinfo=ZoneInfo(tz))
    return anki_day(moment, tz, day_start_hour) - source_today(
        crt, creation_offset, rollover, moment, tz
    )


def to_epoch_ms(when: datetime) -> int:
    return int(when.timestamp() * 1000)


def from_epoch(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)
