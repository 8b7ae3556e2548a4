"""The load balancer's effect: simulated learners taking 20 new cards a day for three months.

Each learner (the same seeded answers in every run) studies every card due each day for 90
days, through the domain (`queue.next_card`, `study.answer`) on a SQLite file, twice: load
balancing off (the baseline) and on; the first learner once more with Sundays set to Minimum.
In the first month most reviews are of cards with intervals under 3 days, which are neither
fuzzed nor balanced, so the figures are printed for the first month and for the third (after
a two-month ramp-up), for all review answers and for the balanceable ones (a card whose
interval was 3 to 90 days, the balancer's range), and for the due forecast of the 30 days
after: the largest day, the largest day over the mean of its week (the peak without the
trend), and the day-to-day swing (the standard deviation of the change from one day to the
next: what balancing evens out, apart from the growing or falling trend), as ratios to the
same learner's run with balancing off.
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
from flashcards.srs.load_balance import MAX_BALANCED_INTERVAL
from flashcards.srs.settings import apply_user_settings
from flashcards.storage import migrate
from flashcards.storage.engine import make_engine, transaction
from flashcards.storage.models import ReviewState, SchedulerSettings
from tests import factories as f
from tests.bench.conftest import RUNS
from tests.bench.dataset import NOW, build

DAYS = 90
NEW_PER_DAY = 20
WINDOWS = {"month 1": range(0, 30), "month 3": range(60, 90)}
START = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)  # a Monday morning
CLOCK = Clock("UTC", 4)
SUNDAY = 6
FIRST_BALANCED = 3  # shorter intervals are neither fuzzed nor balanced


def mix(again: int, hard: int, good: int, easy: int) -> tuple[Rating, ...]:
    """Answers in these percentages, drawn per card and answer."""
    return (
        (Rating.Again,) * again + (Rating.Hard,) * hard + (Rating.Good,) * good
        + (Rating.Easy,) * easy
    )  # fmt: skip


@dataclass(frozen=True)
class Learner:
    name: str
    ratings: tuple[Rating, ...]


LEARNERS = (
    Learner("steady", mix(8, 7, 80, 5)),
    Learner("forgetful", mix(15, 10, 70, 5)),
    Learner("confident", mix(4, 6, 75, 15)),
)


def swing(counts: list[int]) -> float:
    """The standard deviation of the change from one day to the next."""
    return statistics.pstdev([b - a for a, b in itertools.pairwise(counts)])


def peak(counts: list[int]) -> float:
    """The largest excess of a day over the mean of the week around it: the largest day
    once the trend (a deck's growth, a forecast's fall) is taken out."""
    return max(
        counts[i] - statistics.mean(counts[i - 3 : i + 4]) for i in range(3, len(counts) - 3)
    )


@dataclass
class Run:
    reviews: list[int]  # review-card answers per day
    balanceable: list[int]  # of which, to cards whose interval was 3 to 90 days
    forecast: list[int]  # cards due on each of the 30 days after the last one

    def series(self) -> dict[str, list[int]]:
        found = {}
        for window, days in WINDOWS.items():
            found[f"{window}, all reviews"] = [self.reviews[d] for d in days]
            found[f"{window}, balanceable"] = [self.balanceable[d] for d in days]
        found["due on days 3-29 after"] = self.forecast[FIRST_BALANCED:]
        return found


def simulate(tmp: Path, name: str, learner: Learner, *, balancing: bool, easy: list[str]) -> Run:
    engine = make_engine(f"sqlite:///{tmp / name}.sqlite3")
    migrate.upgrade(engine)
    with transaction(engine) as s:
        user = f.make_user(s, new_per_day=NEW_PER_DAY, reviews_per_day=9999)
        apply_user_settings(s, user, {"load_balancing": balancing, "easy_days": easy})
        deck = f.make_deck(s, "months", NEW_PER_DAY * DAYS)
        f.subscribe(s, user, deck)
    reviews, balanceable = [], []
    for day in range(DAYS):
        now = START + timedelta(days=day)
        done = in_range = 0
        with transaction(engine) as s:
            while True:
                card, _counts = queue.next_card(s, user, now=now, clock=CLOCK)
                if card is None:
                    break
                state = card.state
                reps = state.reps if state else 0
                seed = f"{learner.name}:{card.card_id}:{reps}"
                rating = random.Random(seed).choice(learner.ratings)
                if card.kind == "review" and state and state.last_review:
                    done += 1
                    interval = study_date(state.due, *CLOCK) - study_date(state.last_review, *CLOCK)
                    in_range += FIRST_BALANCED <= interval.days <= MAX_BALANCED_INTERVAL
                study.answer(s, user, card.card_id, rating, str(uuid.uuid4()), now=now)
                now += timedelta(seconds=20)
        reviews.append(done)
        balanceable.append(in_range)
    end = study_date(START + timedelta(days=DAYS), *CLOCK)
    with transaction(engine) as s:
        dues = s.scalars(select(ReviewState.due).where(ReviewState.user_id == user)).all()
    days = Counter((study_date(due, *CLOCK) - end).days for due in dues)
    engine.dispose()
    return Run(reviews, balanceable, [days.get(d, 0) for d in range(30)])


def sunday_share(run: Run) -> float:
    """Sundays' share of the third month's reviews and of the forecast."""
    days = list(WINDOWS["month 3"])
    sundays = sum(run.reviews[d] for d in days if (START + timedelta(days=d)).weekday() == SUNDAY)
    first = study_date(START + timedelta(days=DAYS), *CLOCK)
    sundays += sum(
        n for d, n in enumerate(run.forecast) if (first + timedelta(days=d)).weekday() == SUNDAY
    )
    return sundays / max(1, sum(run.reviews[d] for d in days) + sum(run.forecast))


def test_load_balancing_flattens_months_of_reviews(tmp_path: Path) -> None:
    normal = ["normal"] * 7
    print(f"\n=== Load balancing: {DAYS} days, {NEW_PER_DAY} new cards a day ===")
    ratios: dict[str, list[tuple[float, float]]] = {}
    runs: dict[tuple[str, bool], Run] = {}
    for learner in LEARNERS:
        for balancing in (False, True):
            name = f"{learner.name}-{'on' if balancing else 'off'}"
            runs[learner.name, balancing] = simulate(
                tmp_path, name, learner, balancing=balancing, easy=normal
            )
        off, on = runs[learner.name, False], runs[learner.name, True]
        print(f"  {learner.name}: reviews per day, off: {off.reviews}")
        print(f"  {learner.name}: reviews per day, on:  {on.reviews}")
        print(f"  {learner.name}: balanceable, off: {off.balanceable}")
        print(f"  {learner.name}: balanceable, on:  {on.balanceable}")
        print(f"  {learner.name}: due, next 30 days, off: {off.forecast}")
        print(f"  {learner.name}: due, next 30 days, on:  {on.forecast}")
        for label, a in on.series().items():
            b = off.series()[label]
            ratio = (max(a) / max(b), peak(a) / peak(b), swing(a) / swing(b))
            ratios.setdefault(label, []).append(ratio)
            print(
                f"    {learner.name:<9} {label:<24} largest day off {max(b):4d} on {max(a):4d}"
                f" ({ratio[0]:.2f}) | over its week off {peak(b):5.1f} on {peak(a):5.1f}"
                f" ({ratio[1]:.2f}) | swing off {swing(b):5.1f} on {swing(a):5.1f}"
                f" ({ratio[2]:.2f})"
            )
    print("  Mean over the learners, on/off:")
    for label, found in ratios.items():
        largest, over, swings = (statistics.mean(r[i] for r in found) for i in range(3))
        print(
            f"    {label:<24} largest day {largest:.2f}, largest over its week {over:.2f},"
            f" day-to-day swing {swings:.2f}"
        )
    steady = LEARNERS[0]
    minimum = simulate(
        tmp_path, "sunday", steady, balancing=True, easy=["normal"] * 6 + ["minimum"]
    )
    print(f"  {steady.name}, on, Sunday Minimum: due, next 30 days: {minimum.forecast}")
    share_on, share_easy = sunday_share(runs[steady.name, True]), sunday_share(minimum)
    print(
        f"  Sunday's share of month 3's reviews and the due forecast: {share_on:.1%} with every"
        f" day Normal, {share_easy:.1%} with Sunday Minimum (ratio {share_easy / share_on:.2f})"
    )
    # What the feature is for, checked loosely (the figures above are the result).
    assert statistics.mean(r[2] for r in ratios["due on days 3-29 after"]) < 1
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
