"""The load balancer's effect: a simulated month of a learner taking 20 new cards a day.

The same learner (the same seeded answers) studies every card due each day for 30 days,
through the domain (`queue.next_card`, `study.answer`) on a SQLite file, three times: load
balancing off (the baseline), on, and on with Sundays set to Minimum. Printed: each run's
reviews per day, the largest day and the spread (standard deviation) over the month and over
the next 30 days' due forecast, as ratios to the run with balancing off, and the share of
reviews falling on Sundays with and without the easy day.
"""

from __future__ import annotations

import itertools
import random
import statistics
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from fsrs import Rating
from sqlalchemy import select, update

from flashcards.hot_sql.rawsql import DirectConnection
from flashcards.srs import queue, study
from flashcards.srs.days import Clock, study_date
from flashcards.srs.settings import apply_user_settings
from flashcards.storage import migrate
from flashcards.storage.engine import make_engine, transaction
from flashcards.storage.models import ReviewState, SchedulerSettings
from tests import factories as f
from tests.bench.conftest import RUNS
from tests.bench.dataset import NOW, build

DAYS = 30
NEW_PER_DAY = 20
START = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)  # a Monday morning
CLOCK = Clock("UTC", 4)
SUNDAY = 6
# How the learner answers, drawn per card and answer: mostly Good, as a real learner.
RATINGS = ([Rating.Again] * 8) + ([Rating.Hard] * 7) + ([Rating.Good] * 80) + ([Rating.Easy] * 5)


def roughness(counts: list[int]) -> float:
    """The standard deviation of the change from one day to the next: what balancing evens
    out, apart from the learner's growing (or, in a forecast, falling) trend."""
    return statistics.pstdev([b - a for a, b in itertools.pairwise(counts)])


@dataclass
class Month:
    reviews: list[int]  # review-card answers per day of the month
    forecast: list[int]  # cards due on each of the next 30 days after it

    @property
    def balanced_forecast(self) -> list[int]:
        # Intervals under 3 days are neither fuzzed nor balanced: days 3 on.
        return self.forecast[3:]

    def describe(self, name: str) -> str:
        month, ahead = self.reviews, self.balanced_forecast
        return (
            f"  {name:<20} month: max {max(month):3d}, sd {statistics.pstdev(month):5.1f},"
            f" day-to-day sd {roughness(month):5.1f} | due on days 3-29 after: max"
            f" {max(ahead):3d}, sd {statistics.pstdev(ahead):5.1f},"
            f" day-to-day sd {roughness(ahead):5.1f}"
        )


def simulate(tmp: Path, name: str, *, load_balancing: bool, easy_days: list[str]) -> Month:
    engine = make_engine(f"sqlite:///{tmp / name}.sqlite3")
    migrate.upgrade(engine)
    with transaction(engine) as s:
        user = f.make_user(s, new_per_day=NEW_PER_DAY, reviews_per_day=9999)
        apply_user_settings(s, user, {"load_balancing": load_balancing, "easy_days": easy_days})
        deck = f.make_deck(s, "month", NEW_PER_DAY * DAYS)
        f.subscribe(s, user, deck)
    reviews = []
    for day in range(DAYS):
        now = START + timedelta(days=day)
        done = 0
        with transaction(engine) as s:
            while True:
                card, _counts = queue.next_card(s, user, now=now, clock=CLOCK)
                if card is None:
                    break
                reps = card.state.reps if card.state else 0
                rating = random.Random(f"{card.card_id}:{reps}").choice(RATINGS)
                study.answer(s, user, card.card_id, rating, str(uuid.uuid4()), now=now)
                done += card.kind == "review"
                now += timedelta(seconds=20)
        reviews.append(done)
    end = study_date(START + timedelta(days=DAYS), *CLOCK)
    with transaction(engine) as s:
        dues = s.scalars(select(ReviewState.due).where(ReviewState.user_id == user)).all()
    days = Counter((study_date(due, *CLOCK) - end).days for due in dues)
    engine.dispose()
    return Month(reviews, [days.get(d, 0) for d in range(DAYS)])


def sunday_share(month: Month) -> float:
    sundays = [
        n for d, n in enumerate(month.reviews) if (START + timedelta(days=d)).weekday() == SUNDAY
    ]
    first = study_date(START + timedelta(days=DAYS), *CLOCK)
    sundays += [
        n for d, n in enumerate(month.forecast) if (first + timedelta(days=d)).weekday() == SUNDAY
    ]
    return sum(sundays) / max(1, sum(month.reviews) + sum(month.forecast))


def test_load_balancing_flattens_a_month_of_reviews(tmp_path: Path) -> None:
    normal = ["normal"] * 7
    off = simulate(tmp_path, "off", load_balancing=False, easy_days=normal)
    on = simulate(tmp_path, "on", load_balancing=True, easy_days=normal)
    sunday_minimum = simulate(
        tmp_path, "easy", load_balancing=True, easy_days=["normal"] * 6 + ["minimum"]
    )
    print(f"\n=== Load balancing: {DAYS} days, {NEW_PER_DAY} new cards a day ===")
    print("  reviews per day, off:", off.reviews)
    print("  reviews per day, on: ", on.reviews)
    print("  due, next 30 days, off:", off.forecast)
    print("  due, next 30 days, on: ", on.forecast)
    print("  due, next 30 days, on, Sunday Minimum:", sunday_minimum.forecast)
    for name, month in (
        ("off (baseline)", off),
        ("on", on),
        ("on, Sunday Minimum", sunday_minimum),
    ):
        print(month.describe(name))
    for label, a, b in (
        ("month's reviews", on.reviews, off.reviews),
        ("due on days 3-29 after", on.balanced_forecast, off.balanced_forecast),
    ):
        print(
            f"  {label}, on/off: largest day {max(a) / max(b):.2f},"
            f" sd {statistics.pstdev(a) / statistics.pstdev(b):.2f},"
            f" day-to-day sd {roughness(a) / roughness(b):.2f}"
        )
    share_on, share_easy = sunday_share(on), sunday_share(sunday_minimum)
    print(
        f"  Sunday's share of reviews and due cards: {share_on:.1%} with every day Normal,"
        f" {share_easy:.1%} with Sunday Minimum (ratio {share_easy / share_on:.2f})"
    )
    # What the feature is for, checked loosely (the figures above are the result).
    assert roughness(on.balanced_forecast) < roughness(off.balanced_forecast)
    assert share_easy < share_on


def test_the_due_counts_read_on_the_answer(tmp_path: Path) -> None:
    """What balancing adds to the answer's hot path, in process (no HTTP, so that a busy
    machine's noise stays out): `prepare_answer` (the answer's read and computation, which
    writes nothing and so can be repeated) with load balancing off and on, interleaved."""
    url = f"sqlite:///{tmp_path / 'answers.sqlite3'}"
    engine = make_engine(url)
    data = build(url, engine, users=100, cards=100, states_per_user=100)
    rng = random.Random(3)
    calls = [(rng.randint(1, 100), rng.choice(data.card_ids)) for _ in range(2000)]
    connection = DirectConnection(engine)
    timings: dict[bool, list[float]] = {False: [], True: []}
    for _round in range(RUNS):
        for balancing in (False, True):
            with transaction(engine) as s:
                s.execute(update(SchedulerSettings).values(load_balancing=balancing))
            started = time.perf_counter()
            for user, card in calls:
                study.prepare_answer(
                    connection, user, card, Rating.Good, str(uuid.uuid4()), now=NOW
                )
            timings[balancing].append((time.perf_counter() - started) / len(calls) * 1e6)
    connection.close()
    off, on = statistics.median(timings[False]), statistics.median(timings[True])
    print(f"\n=== The answer's read and computation ({len(calls)} answers x {RUNS} runs) ===")
    print(f"  load balancing off: {off:.0f} µs per answer (runs {timings[False]})")
    print(f"  load balancing on:  {on:.0f} µs per answer (runs {timings[True]})")
    print(f"  on/off: {on / off:.2f}")
