"""FSRS scheduling: py-fsrs with deterministic fuzz, and the four-outcome preview.

Fuzz is seeded from the user, the card and its review count, as Anki seeds it from the card:
the interval shown on a button is exactly the one stored when it is pressed, and replaying a
log reproduces the state (with load balancing off: on, the day also depends on the cards
due at the time, `load_balance`). py-fsrs draws fuzz from the global `random`, so we schedule with
its fuzz off and apply the same fuzz ranges with our own seeded generator. Like Anki, a card
in review is never given the same day by two passing buttons (`_outcome`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache

from fsrs import Card as FsrsCard
from fsrs import Rating, Scheduler, State
from fsrs.scheduler import FUZZ_RANGES

from .days import Clock, study_date
from .load_balance import Workload, balanced_days

RATING_NAMES = {
    "again": Rating.Again,
    "hard": Rating.Hard,
    "good": Rating.Good,
    "easy": Rating.Easy,
}


_RATINGS = tuple(Rating)


@dataclass(frozen=True)
class SchedulerConfig:
    desired_retention: float = 0.9
    learning_steps: tuple[int, ...] = (60, 600)  # seconds
    relearning_steps: tuple[int, ...] = (600,)
    maximum_interval: int = 36500  # days
    parameters: tuple[float, ...] | None = None  # None: py-fsrs defaults (Anki's FSRS-6)


@dataclass(frozen=True)
class CardState:
    """A card's FSRS memory state for one person, plus Anki-style counters."""

    state: State
    step: int | None
    stability: float | None
    difficulty: float | None
    due: datetime
    last_review: datetime | None
    reps: int = 0
    lapses: int = 0


@lru_cache(maxsize=256)
def scheduler_for(config: SchedulerConfig) -> Scheduler:
    kwargs = {} if config.parameters is None else {"parameters": config.parameters}
    return Scheduler(
        desired_retention=config.desired_retention,
        learning_steps=tuple(timedelta(seconds=s) for s in config.learning_steps),
        relearning_steps=tuple(timedelta(seconds=s) for s in config.relearning_steps),
        maximum_interval=config.maximum_interval,
        enable_fuzzing=False,
        **kwargs,
    )


def new_card_state(now: datetime) -> CardState:
    return CardState(State.Learning, 0, None, None, now, None)


def fuzz_seed(user_id: int, card_id: int, reps: int) -> str:
    return f"{user_id}:{card_id}:{reps}"


def fuzz_range(interval_days: int, maximum_interval: int) -> tuple[int, int]:
    """py-fsrs's fuzz range of an interval of at least 3 days: the first and last day."""
    delta = 1.0
    for fuzz_range in FUZZ_RANGES:
        delta += fuzz_range["factor"] * max(
            min(float(interval_days), fuzz_range["end"]) - fuzz_range["start"], 0.0
        )
    min_ivl = max(2, round(interval_days - delta))
    max_ivl = min(round(interval_days + delta), maximum_interval)
    return min(min_ivl, max_ivl), max_ivl


def fuzzed_days(
    interval_days: int, maximum_interval: int, seed: str, workload: Workload | None = None
) -> int:
    """py-fsrs's fuzz ranges, drawn from a generator seeded per answer; with the person's
    `workload`, the day is the load balancer's pick, from the same seeded draw."""
    if interval_days < 2.5:
        return interval_days
    min_ivl, max_ivl = fuzz_range(interval_days, maximum_interval)
    if workload is not None:
        balanced = balanced_days(interval_days, min_ivl, max_ivl, workload, _fuzz_draw(seed))
        if balanced is not None:
            return balanced
    draw = _fuzz_draw(seed) * (max_ivl - min_ivl + 1) + min_ivl
    return min(round(draw), maximum_interval)


@lru_cache(maxsize=4096)
def _fuzz_draw(seed: str) -> float:
    """A uniform draw in [0, 1) from the seed: the same in every process and release.

    A hash, not `random.Random(seed)`: seeding the Mersenne Twister costs more than the rest
    of the fuzz. Cached: a preview's outcomes share one seed, and the answer that follows it
    uses the same one again.
    """
    digest = hashlib.blake2b(seed.encode(), digest_size=8).digest()
    return (int.from_bytes(digest, "big") >> 11) / 2**53  # 53 bits: a float below 1.0


def review(
    config: SchedulerConfig,
    before: CardState | None,
    rating: Rating,
    now: datetime,
    *,
    seed: str | None,
    clock: Clock | None = None,
    workload: Workload | None = None,
) -> CardState:
    """The state after answering `rating` at `now`; `seed=None` turns fuzz off. With the
    person's `clock`, the time since the last review counts in study days
    (`last_review_for_fsrs`); with their `workload`, the fuzzed day is load balanced."""
    current = before or new_card_state(now)
    card = _fsrs_card(current, now, clock)
    scheduler = scheduler_for(config)
    below = None  # the outcomes of the passing answers below this one bound it (`_outcome`)
    for lower in (Rating.Hard, Rating.Good):
        if lower < rating and _bounds(current, Rating(lower + 1)):
            below = _outcome(scheduler, config, current, card, lower, now, seed, workload,
                             below if _bounds(current, lower) else None)  # fmt: skip
    return _outcome(scheduler, config, current, card, rating, now, seed, workload, below)


def _bounds(current: CardState, rating: Rating) -> bool:
    """Whether the answer one below `rating` bounds its interval, as in Anki: Easy is past
    Good from any state (a relearned card's last step gives both a day), Good past Hard for
    a card in review."""
    return rating == Rating.Easy or (rating == Rating.Good and current.state == State.Review)


def _outcome(
    scheduler: Scheduler,
    config: SchedulerConfig,
    current: CardState,
    card: FsrsCard,
    rating: Rating,
    now: datetime,
    seed: str | None,
    workload: Workload | None,
    below: CardState | None = None,
) -> CardState:
    """One answer's outcome. `below` is the outcome of the passing answer one lower (Hard
    for Good, Good for Easy; `_bounds`): as Anki does, a button then schedules at least a
    day later than the one below it when both give days, so that for a short interval (no
    fuzz under 3 days) Hard, Good and Easy never all show "1 day"."""
    # py-fsrs copies the card it is given, so one FsrsCard serves all four outcomes.
    after, _log = scheduler.review_card(card, rating, now)
    due = after.due
    if after.state == State.Review:
        days = (after.due - now).days
        if seed is not None:
            days = fuzzed_days(days, config.maximum_interval, seed, workload)
        if below is not None and below.state == State.Review:
            days = min(max(days, (below.due - now).days + 1), config.maximum_interval)
        due = now + timedelta(days=days)
    lapsed = current.state == State.Review and rating == Rating.Again
    return CardState(
        state=after.state,
        step=after.step,
        stability=after.stability,
        difficulty=after.difficulty,
        due=due,
        last_review=now,
        reps=current.reps + 1,
        lapses=current.lapses + (1 if lapsed else 0),
    )


def preview(
    config: SchedulerConfig,
    before: CardState | None,
    now: datetime,
    *,
    seed: str | None,
    clock: Clock | None = None,
    workload: Workload | None = None,
) -> dict[Rating, CardState]:
    """All four outcomes, computed the same way `review` stores them (Anki's two-step answer)."""
    current = before or new_card_state(now)
    card = _fsrs_card(current, now, clock)
    scheduler = scheduler_for(config)
    outcomes: dict[Rating, CardState] = {}
    below = None  # each passing outcome bounds the next one's, as in `review`
    for rating in _RATINGS:
        outcome = _outcome(scheduler, config, current, card, rating, now, seed, workload,
                           below if _bounds(current, rating) else None)  # fmt: skip
        outcomes[rating] = below = outcome
    return outcomes


def retrievability(config: SchedulerConfig, state: CardState, now: datetime) -> float:
    return float(scheduler_for(config).get_card_retrievability(_fsrs_card(state), now))


def last_review_for_fsrs(
    last_review: datetime | None, now: datetime, clock: Clock | None
) -> datetime | None:
    """The last review as py-fsrs is to see it at `now`, so that the time since counts in
    the person's study days, as Anki counts it, not in whole 24-hour periods: a card
    reviewed last evening and answered this morning is a day later, not a same-day review
    whose stability barely grows."""
    if clock is None or last_review is None:
        return last_review
    days = (study_date(now, *clock) - study_date(last_review, *clock)).days
    return min(last_review, now - timedelta(days=days)) if days >= 1 else last_review


def _fsrs_card(
    state: CardState, now: datetime | None = None, clock: Clock | None = None
) -> FsrsCard:
    return FsrsCard(
        card_id=1,  # py-fsrs sleeps 1 ms to invent an id when given none
        state=state.state,
        step=state.step,
        stability=state.stability,
        difficulty=state.difficulty,
        due=state.due,
        last_review=state.last_review
        if now is None
        else last_review_for_fsrs(state.last_review, now, clock),
    )
