"""Golden scheduling: our engine against py-fsrs itself, and deterministic fuzz.

py-fsrs (`Scheduler(enable_fuzzing=False).review_card`) is the reference. Our engine must
give exactly its stability, difficulty, state, step and due with fuzz off; with fuzz on only
the due of Review-state outcomes may differ, and only within py-fsrs's own fuzz range. One
rule of Anki's is added: a review card's Good is due a day past its Hard, Easy past Good.
"""

from __future__ import annotations

from copy import copy
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from fsrs import Card as FsrsCard
from fsrs import Rating, Scheduler, State
from fsrs.scheduler import FUZZ_RANGES
from sqlalchemy import Engine, select

from flashcards.srs import state_rows, study
from flashcards.srs.days import Clock
from flashcards.srs.scheduling import (
    CardState,
    SchedulerConfig,
    fuzz_seed,
    fuzzed_days,
    last_review_for_fsrs,
    preview,
    review,
)
from flashcards.srs.settings import apply_user_settings
from flashcards.storage.engine import transaction
from flashcards.storage.models import ReviewLog

from . import factories as f
from .conftest import T0

# Answers at fixed times: learning steps, graduation, reviews on time and late, a lapse,
# relearning, then Hard and Easy.
SEQUENCE: list[tuple[Rating, timedelta]] = [
    (Rating.Good, timedelta(0)),
    (Rating.Good, timedelta(minutes=10)),
    (Rating.Good, timedelta(days=3)),
    (Rating.Good, timedelta(days=15)),
    (Rating.Again, timedelta(days=90)),
    (Rating.Good, timedelta(days=90, minutes=10)),
    (Rating.Hard, timedelta(days=95)),
    (Rating.Easy, timedelta(days=110)),
    (Rating.Easy, timedelta(days=200)),
]
OTHER_SEQUENCES: list[list[tuple[Rating, timedelta]]] = [
    [
        (Rating.Easy, timedelta(0)),
        (Rating.Easy, timedelta(days=20)),
        (Rating.Again, timedelta(days=80)),
    ],
    [
        (Rating.Again, timedelta(0)),
        (Rating.Hard, timedelta(minutes=1)),
        (Rating.Good, timedelta(minutes=7)),
    ],
]


def golden(
    sequence: list[tuple[Rating, timedelta]], start: datetime = T0, clock: Clock | None = None
) -> list[FsrsCard]:
    """py-fsrs's own cards after each answer; with a person's `clock`, each given its last
    review as a number of study days before (`last_review_for_fsrs`), as answers are."""
    scheduler = Scheduler(enable_fuzzing=False)
    card = FsrsCard(card_id=1, due=start)
    cards = []
    for rating, offset in sequence:
        seen = copy(card)
        seen.last_review = last_review_for_fsrs(card.last_review, start + offset, clock)
        card, _log = scheduler.review_card(seen, rating, start + offset)
        cards.append(card)
    return cards


# The factories' and the API tests' people: UTC, the study day starting at 4:00.
PEOPLES_CLOCK = Clock("UTC", 4)


def fuzz_bounds(interval_days: int, maximum_interval: int = 36500) -> tuple[int, int]:
    """Every interval py-fsrs's fuzz can produce (its draw is rounded, so max+1 is possible)."""
    if interval_days < 2.5:
        return interval_days, interval_days
    delta = 1.0
    for r in FUZZ_RANGES:
        delta += r["factor"] * max(min(float(interval_days), r["end"]) - r["start"], 0.0)
    low = max(2, round(interval_days - delta))
    high = min(round(interval_days + delta), maximum_interval)
    return min(low, high), min(high + 1, maximum_interval)


def assert_matches(ours: CardState, theirs: FsrsCard, when: datetime, *, fuzzed: bool) -> None:
    assert ours.state == theirs.state
    assert ours.step == theirs.step
    assert ours.stability == theirs.stability
    assert ours.difficulty == theirs.difficulty
    assert ours.last_review == when
    if fuzzed and theirs.state == State.Review:
        low, high = fuzz_bounds((theirs.due - when).days)
        assert (ours.due - when) in {timedelta(days=d) for d in range(low, high + 1)}
    else:
        assert ours.due == theirs.due


@pytest.mark.parametrize("sequence", [SEQUENCE, *OTHER_SEQUENCES])
def test_engine_with_fuzz_off_equals_py_fsrs(sequence: list[tuple[Rating, timedelta]]) -> None:
    expected = golden(sequence)
    state: CardState | None = None
    for (rating, offset), theirs in zip(sequence, expected, strict=True):
        state = review(SchedulerConfig(), state, rating, T0 + offset, seed=None)
        assert_matches(state, theirs, T0 + offset, fuzzed=False)
    assert state is not None
    assert state.reps == len(sequence)


def test_counters_count_reps_and_lapses_from_review_only() -> None:
    state: CardState | None = None
    for rating, offset in SEQUENCE:
        state = review(SchedulerConfig(), state, rating, T0 + offset, seed=None)
    assert state is not None
    assert (state.reps, state.lapses) == (len(SEQUENCE), 1)
    # Again while still learning is not a lapse.
    learning = review(SchedulerConfig(), None, Rating.Again, T0, seed=None)
    assert learning.lapses == 0


@pytest.mark.parametrize("sequence", [SEQUENCE, *OTHER_SEQUENCES])
def test_answers_stored_by_study_answer_match_py_fsrs(
    engine: Engine, sequence: list[tuple[Rating, timedelta]]
) -> None:
    expected = golden(sequence, clock=PEOPLES_CLOCK)
    with transaction(engine) as s:
        user = f.make_user(s)
        deck = f.make_deck(s, "golden", 1)
        f.subscribe(s, user, deck)
        card = f.card_ids(s, deck.id)[0]
    fuzzed_any = False
    for (rating, offset), theirs in zip(sequence, expected, strict=True):
        when = T0 + offset
        with transaction(engine) as s:
            result = f.answer(s, user, card, rating, now=when)
        with transaction(engine) as s:
            stored = state_rows.card_state(s, user, card)
        assert stored == result.state
        assert_matches(stored, theirs, when, fuzzed=True)
        fuzzed_any |= stored.due != theirs.due
    # Not a proof, but with these intervals at least one of several fuzzed dues moves.
    if sequence is SEQUENCE:
        assert fuzzed_any


def test_fuzz_is_deterministic_per_seed_and_within_range() -> None:
    for days in (3, 7, 20, 45, 100, 400, 3000):
        low, high = fuzz_bounds(days)
        draws = {fuzzed_days(days, 36500, fuzz_seed(1, card, 3)) for card in range(200)}
        assert draws <= set(range(low, high + 1)), days
        assert len(draws) > 1, days
        assert fuzzed_days(days, 36500, "1:2:3") == fuzzed_days(days, 36500, "1:2:3")
    assert fuzzed_days(2, 36500, "x") == 2
    assert fuzzed_days(100, 90, "x") <= 90


def test_time_since_the_last_review_counts_in_study_days() -> None:
    # Reviewed at 21:00, answered at 09:00 the next morning: 12 hours, but the next study
    # day (it starts at 4:00), as Anki counts it; not a same-day review.
    evening = datetime(2026, 3, 2, 21, 0, tzinfo=UTC)
    morning = evening + timedelta(hours=12)
    card = CardState(
        state=State.Review, step=None, stability=3.0, difficulty=5.0, due=morning,
        last_review=evening, reps=3, lapses=0,
    )  # fmt: skip
    answered = review(SchedulerConfig(), card, Rating.Good, morning, seed=None, clock=PEOPLES_CLOCK)
    a_day_later = replace(card, last_review=morning - timedelta(days=1))
    expected = review(SchedulerConfig(), a_day_later, Rating.Good, morning, seed=None)
    in_hours = review(SchedulerConfig(), card, Rating.Good, morning, seed=None)
    assert answered.stability == expected.stability > in_hours.stability
    assert answered.due == expected.due > in_hours.due
    assert answered.last_review == morning
    # Within one study day nothing changes: 13:00 to 20:00 is a same-day review either way.
    noon = replace(card, last_review=evening - timedelta(hours=8))
    config = SchedulerConfig()
    same_day = review(config, noon, Rating.Good, evening, seed=None, clock=PEOPLES_CLOCK)
    assert same_day == review(config, noon, Rating.Good, evening, seed=None)
    # The choice buttons show what the answer gives.
    shown = preview(SchedulerConfig(), card, morning, seed=None, clock=PEOPLES_CLOCK)
    assert shown[Rating.Good] == answered


def test_preview_gives_what_review_gives() -> None:
    before = review(SchedulerConfig(), None, Rating.Easy, T0, seed=None)
    now = T0 + timedelta(days=30)
    seed = fuzz_seed(7, 11, before.reps)
    outcomes = preview(SchedulerConfig(), before, now, seed=seed)
    assert set(outcomes) == set(Rating)
    for rating, outcome in outcomes.items():
        assert outcome == review(SchedulerConfig(), before, rating, now, seed=seed)


def test_preview_interval_of_each_rating_is_what_answer_stores(engine: Engine) -> None:
    with transaction(engine) as s:
        user = f.make_user(s)
        deck = f.make_deck(s, "preview", 1)
        f.subscribe(s, user, deck)
        card = f.card_ids(s, deck.id)[0]
        f.answer(s, user, card, Rating.Easy, now=T0)
        f.answer(s, user, card, Rating.Good, now=T0 + timedelta(days=15))
    now = T0 + timedelta(days=60)
    with transaction(engine) as s:
        before = state_rows.card_state(s, user, card)
    assert before is not None and before.state == State.Review
    outcomes = preview(SchedulerConfig(), before, now, seed=fuzz_seed(user, card, before.reps))
    for rating in Rating:
        with transaction(engine) as s:
            stored = f.answer(s, user, card, rating, now=now).state
        assert stored == outcomes[rating], rating
        with transaction(engine) as s:
            study.undo(s, user, now=now)
        with transaction(engine) as s:
            assert state_rows.card_state(s, user, card) == before


def test_replaying_the_log_reproduces_every_state_with_fuzz_on(engine: Engine) -> None:
    ratings = [Rating.Good, Rating.Easy, Rating.Hard, Rating.Again]
    with transaction(engine) as s:
        user = f.make_user(s)
        # The balancer's pick depends on the other cards due at the time, which a replay
        # of one card's log does not know: the fuzz alone replays.
        apply_user_settings(s, user, {"load_balancing": False})
        deck = f.make_deck(s, "replay", 4)
        f.subscribe(s, user, deck)
        cards = f.card_ids(s, deck.id)
    # Several cards interleaved, answered over half a year with every rating.
    for i in range(24):
        when = T0 + timedelta(days=8 * i, minutes=i)
        with transaction(engine) as s:
            for j, card in enumerate(cards):
                f.answer(s, user, card, ratings[(i + j) % 4], now=when + timedelta(seconds=j))
    with transaction(engine) as s:
        logs = s.execute(
            select(ReviewLog.card_id, ReviewLog.rating, ReviewLog.reviewed_at)
            .where(ReviewLog.user_id == user)
            .order_by(ReviewLog.reviewed_at, ReviewLog.id)
        ).all()
        stored = {card: state_rows.card_state(s, user, card) for card in cards}
    replayed: dict[int, CardState | None] = dict.fromkeys(cards)
    for card_id, rating, reviewed_at in logs:
        before = replayed[card_id]
        seed = fuzz_seed(user, card_id, before.reps if before else 0)
        replayed[card_id] = review(
            SchedulerConfig(), before, Rating(rating), reviewed_at, seed=seed
        )
    assert replayed == stored
    # Fuzz was really on: without the seeds the replay differs.
    unfuzzed: dict[int, CardState | None] = dict.fromkeys(cards)
    for card_id, rating, reviewed_at in logs:
        unfuzzed[card_id] = review(
            SchedulerConfig(), unfuzzed[card_id], Rating(rating), reviewed_at, seed=None
        )
    assert unfuzzed != stored


def as_fsrs_card(state: CardState) -> FsrsCard:
    return FsrsCard(
        card_id=1, state=state.state, step=state.step, stability=state.stability,
        difficulty=state.difficulty, due=state.due, last_review=state.last_review,
    )  # fmt: skip


def test_a_review_cards_passing_buttons_are_each_a_day_apart() -> None:
    # A card relearned today, so its stability is short: py-fsrs alone gives Hard and Good
    # the same 1 day (fuzz starts at 3 days), where Anki shows Good a day past Hard and Easy
    # a day past Good.
    config = SchedulerConfig()
    state: CardState | None = None
    for rating, offset in [(Rating.Good, timedelta(0)), (Rating.Good, timedelta(minutes=10)),
                           (Rating.Again, timedelta(days=2)),
                           (Rating.Good, timedelta(days=2, minutes=10))]:  # fmt: skip
        state = review(config, state, rating, T0 + offset, seed=None)
    assert state is not None and state.state == State.Review
    now = T0 + timedelta(days=3)
    card = as_fsrs_card(state)
    raw = {
        r: (Scheduler(enable_fuzzing=False).review_card(copy(card), r, now)[0].due - now).days
        for r in (Rating.Hard, Rating.Good, Rating.Easy)
    }
    assert raw[Rating.Hard] == raw[Rating.Good]  # the case this is about
    for seed in (None, "1:2:3"):
        outcomes = preview(config, state, now, seed=seed)
        days = [(outcomes[r].due - now).days for r in (Rating.Hard, Rating.Good, Rating.Easy)]
        assert days[0] < days[1] < days[2], days
        assert days[0] == raw[Rating.Hard]  # the lowest passing button is py-fsrs's own
        for rating, outcome in outcomes.items():  # an answer stores what its button showed
            assert review(config, state, rating, now, seed=seed) == outcome
        # Memory is FSRS's whatever the day: only the due moves.
        assert (
            outcomes[Rating.Good].stability
            == Scheduler(enable_fuzzing=False)
            .review_card(copy(card), Rating.Good, now)[0]
            .stability
        )
    # At the maximum interval the buttons may meet: the cap wins.
    capped = replace(config, maximum_interval=raw[Rating.Hard])
    top = preview(capped, state, now, seed=None)
    assert {(top[r].due - now).days for r in (Rating.Hard, Rating.Good, Rating.Easy)} == {
        raw[Rating.Hard]
    }


def test_a_relearned_cards_easy_is_a_day_past_its_good() -> None:
    # At its last relearning step, py-fsrs gives Good and Easy the same day; Anki keeps Easy a
    # day past Good from every state (Good past Hard only for a card in review).
    config = SchedulerConfig()
    state: CardState | None = None
    for rating, offset in [(Rating.Good, timedelta(0)), (Rating.Good, timedelta(minutes=10)),
                           (Rating.Again, timedelta(days=2))]:  # fmt: skip
        state = review(config, state, rating, T0 + offset, seed=None)
    assert state is not None and state.state == State.Relearning
    now = T0 + timedelta(days=2, minutes=10)
    card = as_fsrs_card(state)
    raw = {r: Scheduler(enable_fuzzing=False).review_card(copy(card), r, now)[0] for r in Rating}
    assert raw[Rating.Good].due == raw[Rating.Easy].due  # the case this is about
    for seed in (None, "4:5:6"):
        outcomes = preview(config, state, now, seed=seed)
        good, easy = (outcomes[r].due - now for r in (Rating.Good, Rating.Easy))
        assert easy == good + timedelta(days=1)
        assert outcomes[Rating.Hard].due == raw[Rating.Hard].due  # a step: minutes, untouched
        for rating, outcome in outcomes.items():
            assert review(config, state, rating, now, seed=seed) == outcome
    # A new card's Hard and Good are learning steps, its Easy days: nothing to bound.
    fresh = preview(config, None, T0, seed=None)
    assert (
        fresh[Rating.Easy].due
        == Scheduler(enable_fuzzing=False)
        .review_card(FsrsCard(card_id=1, due=T0), Rating.Easy, T0)[0]
        .due
    )
