"""The lag between a collection's day numbers and ours (`anki.timing.day_shift_of`), which a
device that uploads its own collection keeps: the same whatever the hour of the upload, when
the device's day starts at another hour than the person's, in summer and in winter."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from flashcards.anki.timing import CRT, crt_of, day_shift_of, source_today

LA = "America/Los_Angeles"


def _crt(day: str, tz: str) -> int:
    """A collection made on `day` at 4:00 local time (Anki's crt)."""
    return int(datetime.fromisoformat(f"{day}T04:00").replace(tzinfo=ZoneInfo(tz)).timestamp())


@pytest.mark.parametrize(
    ("offset", "rollover", "day_start"),
    [(480, 4, 0), (480, 0, 4), (None, 4, 4), (None, 4, 0), (-540, 4, 4), (420, 23, 0)],
)
@pytest.mark.parametrize("season", ["2026-07-15", "2026-12-06"])
def test_the_lag_is_the_same_at_every_hour_of_a_day(
    offset: int | None, rollover: int, day_start: int, season: str
) -> None:
    tz = "Asia/Seoul" if offset == -540 else LA
    crt = _crt("2023-03-01", tz)  # made in winter (LA): a summer upload is an hour apart
    start = datetime.fromisoformat(f"{season}T00:00").replace(tzinfo=ZoneInfo(tz))
    lags = {
        day_shift_of(
            crt, offset, rollover, (start + timedelta(minutes=m)).astimezone(UTC), tz, day_start
        )
        for m in range(0, 48 * 60, 20)
    }
    assert len(lags) == 1


def test_with_the_lag_our_day_numbers_are_the_devices() -> None:
    """At an hour when both days have begun, our number less the lag is the device's."""
    crt, now = _crt("2024-01-10", LA), datetime(2026, 12, 6, 20, 0, tzinfo=UTC)  # noon in LA
    lag = day_shift_of(crt, 480, 4, now, LA, 4)
    ours = (datetime(2026, 12, 6).date() - datetime(2020, 1, 1).date()).days
    assert ours - lag == source_today(crt, 480, 4, now, LA)
    assert crt_of(lag) - CRT == lag * 86_400
