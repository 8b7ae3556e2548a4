"""Study days: they start at the person's hour in their timezone, DST included."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from fsrs import State
from sqlalchemy import Engine

from flashcards.srs import queue
from flashcards.srs.days import StudyDates, day_bounds, study_date
from flashcards.storage.engine import transaction

from . import factories as f


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


@pytest.mark.parametrize(
    ("now", "tz", "hour", "day", "start", "end"),
    [
        # UTC: before 4:00 it is still yesterday's study day.
        (utc(2026, 3, 2, 12), "UTC", 4, date(2026, 3, 2), utc(2026, 3, 2, 4), utc(2026, 3, 3, 4)),
        (
            utc(2026, 3, 2, 3, 59),
            "UTC",
            4,
            date(2026, 3, 1),
            utc(2026, 3, 1, 4),
            utc(2026, 3, 2, 4),
        ),
        (utc(2026, 3, 2, 4), "UTC", 4, date(2026, 3, 2), utc(2026, 3, 2, 4), utc(2026, 3, 3, 4)),
        (utc(2026, 3, 2, 0), "UTC", 0, date(2026, 3, 2), utc(2026, 3, 2), utc(2026, 3, 3)),
        # Los Angeles (UTC-8 in winter): 12:00 UTC is 4:00 local.
        (
            utc(2026, 3, 2, 12),
            "America/Los_Angeles",
            4,
            date(2026, 3, 2),
            utc(2026, 3, 2, 12),
            utc(2026, 3, 3, 12),
        ),
        (
            utc(2026, 3, 2, 11, 59),
            "America/Los_Angeles",
            4,
            date(2026, 3, 1),
            utc(2026, 3, 1, 12),
            utc(2026, 3, 2, 12),
        ),
        # Seoul (UTC+9), day starting at 6:00: 21:00 UTC is 6:00 next morning local.
        (
            utc(2026, 3, 2, 20, 59),
            "Asia/Seoul",
            6,
            date(2026, 3, 2),
            utc(2026, 3, 1, 21),
            utc(2026, 3, 2, 21),
        ),
        (
            utc(2026, 3, 2, 21),
            "Asia/Seoul",
            6,
            date(2026, 3, 3),
            utc(2026, 3, 2, 21),
            utc(2026, 3, 3, 21),
        ),
        # Kiritimati (UTC+14): the local date is a day ahead of UTC's for most of the day.
        (
            utc(2026, 3, 2, 12),
            "Pacific/Kiritimati",
            4,
            date(2026, 3, 2),
            utc(2026, 3, 1, 14),
            utc(2026, 3, 2, 14),
        ),
        (
            utc(2026, 3, 2, 14),
            "Pacific/Kiritimati",
            4,
            date(2026, 3, 3),
            utc(2026, 3, 2, 14),
            utc(2026, 3, 3, 14),
        ),
        (
            utc(2026, 3, 2, 10),
            "Pacific/Kiritimati",
            0,
            date(2026, 3, 3),
            utc(2026, 3, 2, 10),
            utc(2026, 3, 3, 10),
        ),
        # DST: Los Angeles springs forward on 2026-03-08, so the study day of the 7th is 23 h.
        (
            utc(2026, 3, 8, 10, 30),
            "America/Los_Angeles",
            4,
            date(2026, 3, 7),
            utc(2026, 3, 7, 12),
            utc(2026, 3, 8, 11),
        ),
        # ... and falls back on 2026-11-01, so the study day of 10-31 is 25 h.
        (
            utc(2026, 11, 1, 11, 30),
            "America/Los_Angeles",
            4,
            date(2026, 10, 31),
            utc(2026, 10, 31, 11),
            utc(2026, 11, 1, 12),
        ),
    ],
)
def test_day_bounds(
    now: datetime, tz: str, hour: int, day: date, start: datetime, end: datetime
) -> None:
    assert study_date(now, tz, hour) == day
    assert day_bounds(now, tz, hour) == (start, end)


@pytest.mark.parametrize("tz", ["UTC", "America/Los_Angeles", "Asia/Seoul", "Pacific/Kiritimati"])
@pytest.mark.parametrize("hour", [0, 1, 2, 4, 23])
@pytest.mark.parametrize("around", [utc(2026, 3, 8), utc(2026, 11, 1), utc(2026, 6, 15)])
def test_days_tile_time_across_dst(tz: str, hour: int, around: datetime) -> None:
    """Every instant is in exactly one study day; days are contiguous and 23-25 h long."""
    now = around - timedelta(days=2)
    while now < around + timedelta(days=2):
        start, end = day_bounds(now, tz, hour)
        assert start <= now < end, now
        assert timedelta(hours=23) <= end - start <= timedelta(hours=25)
        assert day_bounds(end, tz, hour)[0] == end
        assert study_date(start, tz, hour) == study_date(now, tz, hour)
        assert start.tzinfo is UTC and end.tzinfo is UTC
        now += timedelta(minutes=15)


@pytest.mark.parametrize(
    ("tz", "hour", "now", "day_end"),
    [
        ("UTC", 4, utc(2026, 3, 2, 12), utc(2026, 3, 3, 4)),
        ("America/Los_Angeles", 4, utc(2026, 3, 2, 20), utc(2026, 3, 3, 12)),
        ("Asia/Seoul", 6, utc(2026, 3, 2, 12), utc(2026, 3, 2, 21)),
        ("Pacific/Kiritimati", 4, utc(2026, 3, 2, 12), utc(2026, 3, 2, 14)),
        ("Pacific/Kiritimati", 0, utc(2026, 3, 2, 9), utc(2026, 3, 2, 10)),
        ("America/Los_Angeles", 4, utc(2026, 3, 8, 10), utc(2026, 3, 8, 11)),  # DST day
    ],
)
def test_reviews_due_before_the_end_of_the_users_day_are_queued(
    engine: Engine, tz: str, hour: int, now: datetime, day_end: datetime
) -> None:
    with transaction(engine) as s:
        user = f.make_user(s, timezone=tz, day_start_hour=hour)
        deck = f.make_deck(s, "days", 2)
        f.subscribe(s, user, deck, new_per_day=0)
        before_end, after_end = f.card_ids(s, deck.id)
        intro = now - timedelta(days=10)
        f.set_state(
            s,
            user,
            before_end,
            state=State.Review,
            due=day_end - timedelta(seconds=1),
            introduced_at=intro,
        )
        f.set_state(s, user, after_end, state=State.Review, due=day_end, introduced_at=intro)
    with transaction(engine) as s:
        card, counts = queue.next_card(s, user, now=now)
    assert card is not None and card.card_id == before_end and card.kind == "review"
    assert (counts.review, counts.new, counts.learning) == (1, 0, 0)
    # Once the next study day has begun, the other card is due too.
    with transaction(engine) as s:
        _card, counts = queue.next_card(s, user, now=day_end)
    assert counts.review == 2


@pytest.mark.parametrize(
    "tz",
    [
        "UTC",
        "Asia/Seoul",
        "Europe/Madrid",  # DST at 2:00 and 3:00 local
        "America/Santiago",  # DST at midnight: a day start at 0:00 is skipped or repeated
        "Asia/Kathmandu",  # +5:45
        "Australia/Lord_Howe",  # a DST change of half an hour
        "Pacific/Apia",  # skipped a whole date (30 December 2011)
        "Europe/Amsterdam",  # +0:19:32 until 1937: an offset in seconds
    ],
)
@pytest.mark.parametrize("hour", [0, 4, 23])
def test_study_dates_of_many_moments_are_study_date_s(tz: str, hour: int) -> None:
    """`StudyDates` (arithmetic on UTC days of one offset) gives `study_date`'s date for
    moments every 47 minutes and 13 seconds across years with changes of offset."""
    dates = StudyDates(tz, hour)
    wrong = []
    for first in (utc(1936, 1, 1), utc(2011, 1, 1), utc(2025, 1, 1)):
        moment = first
        while moment < first + timedelta(days=366):
            if dates.ordinal(moment.timestamp()) != study_date(moment, tz, hour).toordinal():
                wrong.append(moment)
            moment += timedelta(minutes=47, seconds=13)
    assert not wrong, f"{len(wrong)} wrong, first {wrong[0]}"
    # Each UTC day is looked at once, however many moments fall in it.
    assert len(dates.offsets) <= 3 * 367
