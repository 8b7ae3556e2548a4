"""The queue's statement with forgotten cards (issue 23): the plan of each deck now also counts
a deck's forgotten cards, and the next new card may be a forgotten one.

A person studies four decks of 5,000 cards, 16,000 of them with a review state. Timed in
one run, interleaved, BENCH_PAGE_RUNS times (default 30) after a warm-up: the plans
statement as it was before forgotten cards (the baseline: without their count, hidden new
cards counted as before) and as it is; then `queue.next_card` whole, before and after 500
of the person's cards are forgotten. Printed: each median and its ratio to its baseline.
Targets: the statement within 1.1x of the baseline, `next_card` with forgotten cards within
1.2x of it without; BENCH_ENFORCE=1 makes a miss a failure.
"""

from __future__ import annotations

import os
import random
import statistics
import time
from collections.abc import Callable
from datetime import timedelta
from typing import cast

from sqlalchemy import Table, insert, select
from sqlalchemy.engine import Engine

from flashcards.hot_sql import next_card as sql
from flashcards.hot_sql.rawsql import Statement, executor
from flashcards.srs import card_actions, queue
from flashcards.srs.days import Clock, day_bounds, study_date
from flashcards.storage.engine import transaction
from flashcards.storage.models import Card, CardMark, Deck, DeckText, ReviewState, Subscription
from flashcards.storage.schema import utcnow
from tests import factories as f
from tests.bench.conftest import report
from tests.bench.dataset import insert_rows

ENFORCE = os.environ.get("BENCH_ENFORCE") == "1"
RUNS = int(os.environ.get("BENCH_PAGE_RUNS", "30"))
DECKS, PER_DECK, STUDIED, FORGOTTEN = 4, 5000, 16000, 500


def _load(engine: Engine) -> tuple[int, list[int]]:
    rng = random.Random(23)
    now = utcnow()
    card_ids: list[tuple[int, int]] = []
    with transaction(engine) as s:
        user_id = f.make_user(s, "forgetful@example.com")
        for d in range(DECKS):
            deck = Deck(slug=f"bench-{d}", default_locale="en", created_at=now)
            s.add(deck)
            s.flush()
            s.add(DeckText(deck_id=deck.id, locale="en", title=f"Bench {d}"))
            s.add(Subscription(user_id=user_id, deck_id=deck.id, locale="en", created_at=now))
            cards = [
                {"deck_id": deck.id, "key": f"c{i}", "position": i, "created_at": now,
                 "updated_at": now}
                for i in range(1, PER_DECK + 1)
            ]  # fmt: skip
            s.execute(insert(cast(Table, Card.__table__)), cards)
            ids = s.scalars(select(Card.id).where(Card.deck_id == deck.id).order_by(Card.id))
            card_ids += [(card_id, deck.id) for card_id in ids]
    states = [
        {"user_id": user_id, "card_id": card_id, "deck_id": deck_id,
         "state": rng.choice((1, 2, 2, 2, 3)), "step": None, "stability": 10.0,
         "difficulty": 5.0, "due": now + timedelta(hours=rng.randint(-48, 2000)),
         "last_review": now - timedelta(days=rng.randint(1, 30)), "reps": 5, "lapses": 0,
         "introduced_at": now - timedelta(days=60), "version": 1}
        for card_id, deck_id in card_ids[:STUDIED]
    ]  # fmt: skip
    marks = [
        {"user_id": user_id, "card_id": card_id, "deck_id": deck_id, "suspended": True,
         "buried_until": None, "flag": 0, "leech": False, "tags": []}
        for card_id, deck_id in card_ids[::50]
    ]  # fmt: skip
    insert_rows(engine, ReviewState, states)
    insert_rows(engine, CardMark, marks)
    with engine.connect() as connection:
        connection.exec_driver_sql("ANALYZE")
        connection.commit()
    studied = [card_id for card_id, _deck in card_ids[:STUDIED]]
    return user_id, rng.sample(studied, FORGOTTEN)


def _baseline_plans() -> Statement:
    """The plans statement before forgotten cards: no count of them, and a hidden new card
    one without any state."""
    columns = []
    for column in sql._PLANS_SELECT.selected_columns:
        if column.name == "forgotten":
            continue
        if column.name == "hidden_new":
            column = sql._hidden_count(~sql._marked_state()).label("hidden_new")
        columns.append(column)
    return Statement(sql._PLANS_SELECT.with_only_columns(*columns))


def _median_ms(timings: list[float]) -> float:
    return statistics.median(timings) * 1000


def _interleaved(runs: dict[str, Callable[[], object]]) -> dict[str, float]:
    for run in runs.values():
        run()  # warm-up
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(RUNS):
        for name, run in runs.items():
            started = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - started)
    return {name: _median_ms(values) for name, values in times.items()}


def test_the_queue_with_forgotten_cards(engine: Engine, database_url: str) -> None:
    user_id, forgotten = _load(engine)
    now = utcnow()
    clock = Clock("UTC", 4)
    day_start, day_end = day_bounds(now, *clock)
    params = {
        "user_id": user_id, "day_start": day_start, "day_end": day_end,
        "learn_ahead_until": now + queue.LEARN_AHEAD, "today": study_date(now, *clock),
        "deck_id": None,
    }  # fmt: skip
    baseline = _baseline_plans()
    with transaction(engine) as s:
        db = executor(s)
        assert len(db.all(baseline, params)) == DECKS
        statements = _interleaved(
            {
                "plans, before forgotten cards (baseline)": lambda: db.all(baseline, params),
                "plans, as now": lambda: sql.plans(db, params, None),
            }
        )
        without = _interleaved({"next_card": lambda: queue.next_card(s, user_id, now=now)})
    with transaction(engine) as s:
        for start in range(0, FORGOTTEN, card_actions.MAX_SELECTION):
            chunk = forgotten[start : start + card_actions.MAX_SELECTION]
            card_actions.forget(s, user_id, chunk, now=now)
    with transaction(engine) as s:
        card, counts = queue.next_card(s, user_id, now=now)
        assert card is not None
        with_forgotten = _interleaved({"next_card": lambda: queue.next_card(s, user_id, now=now)})
    base_ms = statements["plans, before forgotten cards (baseline)"]
    now_ms = statements["plans, as now"]
    before_ms, after_ms = without["next_card"], with_forgotten["next_card"]
    met_statement, met_queue = now_ms <= 1.1 * base_ms, after_ms <= 1.2 * before_ms
    lines = [
        f"{DECKS * PER_DECK:,} cards, {STUDIED:,} studied; {FORGOTTEN} forgotten for the last",
        f"plans statement, baseline (before forgotten cards): {base_ms:.2f} ms",
        f"plans statement, as now: {now_ms:.2f} ms (x{now_ms / base_ms:.2f}; target <= 1.1: "
        f"{'met' if met_statement else 'MISSED'})",
        f"next_card, no forgotten cards: {before_ms:.2f} ms",
        f"next_card, {FORGOTTEN} forgotten (new left {counts.new}): {after_ms:.2f} ms "
        f"(x{after_ms / before_ms:.2f}; target <= 1.2: {'met' if met_queue else 'MISSED'})",
    ]
    report(f"queue with forgotten cards, {database_url.split(':', 1)[0]}, median of {RUNS}", lines)
    if ENFORCE:
        assert met_statement and met_queue
