"""The load balancer's due counts read with the answer on PostgreSQL (`srs.answer_loads`):
the same counts as the read apart (`srs.workload`) in every time zone, daylight-saving
changes within the range included, and an API answer in two round trips."""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from flask.testing import FlaskClient
from fsrs import Rating, State
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from flashcards.hot_sql import answers as sql
from flashcards.hot_sql.libpq import LibpqRunner
from flashcards.hot_sql.rawsql import DirectConnection, Executor, executor
from flashcards.srs.answer_loads import PrefetchedLoads, prefetch_range
from flashcards.srs.days import Clock, day_start, study_date
from flashcards.srs.load_balance import DayLoads, Workload
from flashcards.srs.scheduling import CardState, SchedulerConfig, fuzz_range, review
from flashcards.srs.workload import workload
from flashcards.storage.engine import transaction
from flashcards.storage.models import ReviewState
from flashcards.storage.schema import utcnow

from . import factories as f


@pytest.fixture(autouse=True)
def postgresql_only(engine: Engine) -> None:
    if engine.dialect.name != "postgresql":
        pytest.skip("SQLite reads the due counts apart, when asked (a local call)")


def a_person(
    session: Session, clock: Clock, now: datetime, *, load_balancing: bool = True
) -> tuple[int, int]:
    """A person whose cards fall due all over the next 100 days, many on the hour or a
    moment before it and on day starts; and one card of theirs."""
    user = f.make_user(
        session, timezone=clock.timezone, day_start_hour=clock.day_start_hour,
        load_balancing=load_balancing,
    )  # fmt: skip
    deck = f.make_deck(session, f"d{user}", 400)
    f.subscribe(session, user, deck)
    cards = f.card_ids(session, deck.id)
    draw = random.Random(user)
    today = study_date(now, *clock)
    for number, card in enumerate(cards[1:]):
        day = day_start(today + timedelta(days=draw.randrange(0, 100)), *clock)
        kind = number % 4
        if kind == 0:
            due = day  # a day start
        elif kind == 1:
            due = day + timedelta(hours=draw.randrange(24)) - timedelta(microseconds=1)
        else:
            due = day + timedelta(seconds=draw.randrange(86400), microseconds=draw.randrange(10**6))
        f.set_state(session, user, card, state=State.Review, due=due)
    return user, cards[0]


def never(_low: int, _high: int) -> DayLoads | None:
    raise AssertionError("the prefetched counts should have answered")


def ranges() -> Iterator[tuple[int, int]]:
    for low in range(2, 91):
        for width in (0, 2, 7, 13):
            yield low, min(low + width, 96)


CLOCKS = [
    (Clock("UTC", 4), datetime(2026, 3, 2, 12, 30, tzinfo=UTC), True),
    # Daylight saving ends on November 1 in New York, within the range.
    (Clock("America/New_York", 4), datetime(2026, 10, 20, 3, 15, tzinfo=UTC), True),
    # And begins on March 29 in Berlin; day starts at midnight.
    (Clock("Europe/Berlin", 0), datetime(2026, 3, 10, 22, 59, 59, tzinfo=UTC), True),
    (Clock("Asia/Seoul", 6), datetime(2026, 7, 1, 20, 0, tzinfo=UTC), True),
    # Day starts off the UTC hour: the counts are read apart, as before.
    (Clock("Asia/Kolkata", 4), datetime(2026, 5, 5, 5, 5, tzinfo=UTC), False),
]


@pytest.mark.parametrize(("clock", "now", "prefetched"), CLOCKS)
def test_the_prefetched_counts_are_those_read_apart(
    engine: Engine, session: Session, clock: Clock, now: datetime, prefetched: bool
) -> None:
    with transaction(engine) as s:
        user, card = a_person(s, clock, now)
    direct = DirectConnection(engine)
    try:
        for db in (direct, executor(session)):
            loads = prefetched_loads(db, user, card, now, clock, fallback=None)
            only = prefetched_loads(db, user, card, now, clock, fallback=never)
            for low, high in ranges():
                apart = workload(session, user, now, clock).loads(low, high)
                assert apart is not None
                if prefetched:
                    assert only(low, high) == apart, (low, high)
                else:
                    with pytest.raises(AssertionError, match="prefetched"):
                        only(low, high)
                assert loads(low, high) == apart, (low, high)
    finally:
        direct.close()


def prefetched_loads(
    db: Executor, user: int, card: int, now: datetime, clock: Clock, fallback: Any
) -> PrefetchedLoads:
    window = prefetch_range(now)
    row = sql.answer_read(db, user, card, str(uuid.uuid4()), window)
    lazily = workload(db, user, now, clock)
    today = study_date(now, *clock)
    return PrefetchedLoads(row, window, Workload(today, fallback or lazily.loads), clock)


def test_no_counts_are_read_for_a_person_who_does_not_balance(
    engine: Engine, session: Session
) -> None:
    clock, now = Clock("UTC", 4), datetime(2026, 3, 2, 12, 30, tzinfo=UTC)
    with transaction(engine) as s:
        user, card = a_person(s, clock, now, load_balancing=False)
    row = sql.answer_read(executor(session), user, card, "r", prefetch_range(now))
    assert row.due_hours is None and row.due_cards is None
    loads = PrefetchedLoads(row, prefetch_range(now), Workload(date(2026, 3, 2), never), clock)
    assert loads(3, 9) is None


def test_an_answer_through_the_api_is_two_round_trips(
    client: FlaskClient, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = utcnow()
    clock = Clock("Europe/Madrid", 4)
    with transaction(engine) as s:
        user, card = a_person(s, clock, now)
        token = f.make_token(s, user)
        before = CardState(
            State.Review, None, 20.0, 5.0, now - timedelta(hours=1), now - timedelta(days=20),
            reps=3,
        )  # fmt: skip
        f.set_state(
            s, user, card, state=State.Review, due=before.due, stability=20.0, difficulty=5.0,
            last_review=before.last_review, reps=3, introduced_at=now - timedelta(days=40),
        )  # fmt: skip
    plain = review(SchedulerConfig(), before, Rating.Good, now, seed=None, clock=clock)
    low, _high = fuzz_range((plain.due - now).days, 36500)
    assert 3 <= low <= 90  # the balancer is asked for the due counts
    sent: list[str] = []
    run = LibpqRunner.run

    def counted(runner: LibpqRunner, statement: str, params: Any) -> Any:
        sent.append(statement)
        return run(runner, statement, params)

    monkeypatch.setattr(LibpqRunner, "run", counted)
    body = {"card_id": card, "rating": "good", "review_id": str(uuid.uuid4())}
    response = client.post(
        "/api/v1/reviews", json=body, headers={"Authorization": f"Bearer {token}"}
    )
    assert response.status_code == 201, response.get_json()
    # The read (the token's owner, the card, the due counts) and the write (state and log).
    assert len(sent) == 2, sent
    assert "api_tokens" in sent[0] and "review_states" in sent[0]
    assert sent[1].lstrip().upper().startswith("WITH")
    with transaction(engine) as s:
        due = s.scalar(
            select(ReviewState.due).where(ReviewState.user_id == user, ReviewState.card_id == card)
        )
    assert due is not None and due > now + timedelta(days=2)
