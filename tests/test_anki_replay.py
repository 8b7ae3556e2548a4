"""The replay of a package's review log (`anki.scheduling_in.convert_revlog`), which
remembers py-fsrs's outcomes, against py-fsrs called for every answer."""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from fsrs import Card as FsrsCard
from fsrs import Rating

from flashcards.anki.reader import Revlog
from flashcards.anki.scheduling_in import (
    Answer,
    ImportTiming,
    Replay,
    convert_revlog,
    scheduler_for,
)
from flashcards.anki.schema import memory_value
from flashcards.srs.days import Clock
from flashcards.srs.scheduling import last_review_for_fsrs
from flashcards.storage.models import SchedulerSettings

START = datetime(2025, 1, 1, 9, tzinfo=UTC)


def history(chance: random.Random, card_id: int) -> list[Revlog]:
    """A card's revlog as Anki keeps it: answers minutes apart while learning and days apart
    after, Anki's own intervals (days, or seconds when negative, or none), now and then a
    manual change (type 4) or an answer logged out of order."""
    rows = []
    when = START + timedelta(minutes=chance.randrange(0, 60 * 24 * 30))
    for _ in range(chance.randrange(1, 16)):
        rating = chance.choices([1, 2, 3, 4], [10, 10, 70, 10])[0]
        kind = chance.choices([0, 1, 2, 4], [30, 60, 8, 2])[0]
        ivl = chance.choice([0, -600, chance.randrange(1, 40)])
        rows.append(Revlog(int(when.timestamp() * 1000), card_id, rating, ivl, 0, 0, 5000, kind))
        if chance.random() < 0.05:
            rows.append(Revlog(rows[-1].id - 3_600_000, card_id, 3, 0, 0, 0, 100, 1))
        when += (
            timedelta(minutes=chance.randrange(1, 30))
            if chance.random() < 0.4
            else timedelta(days=chance.randrange(1, 30), minutes=chance.randrange(0, 24 * 60))
        )
    return rows


def replayed_one_by_one(
    rows: list[Revlog], settings: SchedulerSettings | None, clock: Clock
) -> list[tuple[object, ...]]:
    """Every answer through py-fsrs's `review_card`, without anything remembered."""
    scheduler = scheduler_for(settings)
    out: list[tuple[object, ...]] = []
    card: FsrsCard | None = None
    for r in rows:
        if not (1 <= r.ease <= 4 and r.type in (0, 1, 2, 3)):
            continue
        when = datetime.fromtimestamp(r.id / 1000, UTC)
        if card is None:
            card = FsrsCard(card_id=1, due=when)
            before: tuple[object, ...] = (None, None, None, None, None, None)
        else:
            if card.last_review is not None and when < card.last_review:
                continue
            before = (int(card.state), card.step, card.stability, card.difficulty, card.due,
                      card.last_review)  # fmt: skip
        card.last_review = last_review_for_fsrs(card.last_review, when, clock)
        after, _ = scheduler.review_card(card, Rating(r.ease), when)
        assert after.stability is not None and after.difficulty is not None
        after.stability = memory_value(after.stability)
        after.difficulty = memory_value(after.difficulty)
        if r.ivl > 0:
            after.due = when + timedelta(days=r.ivl)
        elif r.ivl < 0:
            after.due = when + timedelta(seconds=-r.ivl)
        out.append((r.id, r.ease, when, *before, int(after.state), after.step, after.stability,
                    after.difficulty, after.due))  # fmt: skip
        card = after
    return out


def compared(answer: Answer) -> tuple[object, ...]:
    return (answer.revlog_id, answer.rating, answer.reviewed_at, answer.state_before,
            answer.step_before, answer.stability_before, answer.difficulty_before,
            answer.due_before, answer.last_review_before, answer.state, answer.step,
            answer.stability, answer.difficulty, answer.due)  # fmt: skip


SETTINGS = {
    "default": None,
    "three steps, no relearning": SchedulerSettings(
        desired_retention=0.85, learning_steps=[30, 300, 1200], relearning_steps=[],
        maximum_interval=365, parameters=None,
    ),
    "one step each": SchedulerSettings(
        desired_retention=0.95, learning_steps=[600], relearning_steps=[300],
        maximum_interval=36500, parameters=None,
    ),
}  # fmt: skip


@pytest.mark.parametrize("settings_name", list(SETTINGS))
@pytest.mark.parametrize(
    ("tz", "day_start_hour"), [("UTC", 4), ("America/New_York", 2), ("Asia/Kolkata", 0)]
)
def test_the_replay_is_py_fsrs_answer_by_answer(
    settings_name: str, tz: str, day_start_hour: int
) -> None:
    settings = SETTINGS[settings_name]
    timing = ImportTiming(tz, day_start_hour, date(2026, 1, 1), 0, START)
    replay = Replay.of(settings, timing)
    calls = 0
    review_card = replay.scheduler.review_card

    def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        return review_card(*args, **kwargs)

    replay.scheduler.review_card = counted  # type: ignore[method-assign]
    chance = random.Random(f"{settings_name}/{tz}")
    answers = 0
    for card_id in range(400):
        rows = history(chance, card_id)
        got = [compared(a) for a in convert_revlog(rows, replay)]
        assert got == replayed_one_by_one(rows, settings, Clock(tz, day_start_hour)), card_id
        answers += len(got)
    # What it is for: py-fsrs computed each outcome once, and the outcomes the histories
    # share (every card's first answer is one of four) were remembered.
    assert 0 < calls == len(replay.outcomes) <= answers - 400 + 4
