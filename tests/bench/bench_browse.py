"""The card browser (issue 23) for a person with 20,000 cards and 200,000 reviews: server
time of its first page, a text search and a sorted, filtered page, next to the library page.

The person studies four decks of 5,000 cards (two languages each); 16,000 cards have a
review state, each with the log of its answers (200,000 in all), and one card in ten has
marks (a flag, a tag, some suspended). Rows are written in bulk through SQLAlchemy Core.
Each page is fetched with the Flask test client (routing, the queries, the template),
interleaved with the baseline, BENCH_PAGE_RUNS times (default 30) after a warm-up. Printed:
each median and its ratio to the library page's median in the same run. Target: each
browser page under 200 ms; BENCH_ENFORCE=1 makes a miss a failure.
"""

from __future__ import annotations

import os
import random
import statistics
import time
import uuid
from datetime import timedelta
from typing import cast

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import Table, insert, select
from sqlalchemy.engine import Engine

from flashcards.storage.engine import transaction
from flashcards.storage.models import (
    Card,
    CardMark,
    CardText,
    Deck,
    DeckText,
    ReviewLog,
    ReviewState,
    Subscription,
    User,
)
from flashcards.storage.schema import utcnow
from tests.bench.conftest import report
from tests.bench.dataset import insert_rows
from tests.web_helpers import sign_up

ENFORCE = os.environ.get("BENCH_ENFORCE") == "1"
RUNS = int(os.environ.get("BENCH_PAGE_RUNS", "30"))
DECKS, PER_DECK, STUDIED, REVIEWS = 4, 5000, 16000, 200_000
TARGET_MS = 200


def _load(engine: Engine, user_id: int) -> None:
    rng = random.Random(23)
    now = utcnow()
    card_ids: list[tuple[int, int]] = []
    with transaction(engine) as s:
        for d in range(DECKS):
            deck = Deck(slug=f"bench-{d}", default_locale="en", created_at=now)
            s.add(deck)
            s.flush()
            s.add(DeckText(deck_id=deck.id, locale="en", title=f"Bench {d}"))
            s.add(Subscription(user_id=user_id, deck_id=deck.id, locale="en", created_at=now))
            s.flush()
            cards = [
                {"deck_id": deck.id, "key": f"c{i}", "position": i, "tags": [f"topic{i % 40}"],
                 "created_at": now, "updated_at": now}
                for i in range(1, PER_DECK + 1)
            ]  # fmt: skip
            s.execute(insert(cast(Table, Card.__table__)), cards)
            ids = s.scalars(select(Card.id).where(Card.deck_id == deck.id).order_by(Card.id))
            card_ids += [(card_id, deck.id) for card_id in ids]
    texts = [
        {"card_id": card_id, "locale": locale, "answer": f"answer {card_id}",
         "question": f"{word} {card_id}: term {card_id % 997}", "explanation": "",
         "updated_at": now}
        for card_id, _deck in card_ids
        for locale, word in (("en", "Question"), ("ko", "질문"))
    ]  # fmt: skip
    insert_rows(engine, CardText, texts)
    states, logs, marks = [], [], []
    per_card = REVIEWS // STUDIED
    for card_id, deck_id in card_ids[:STUDIED]:
        first = now - timedelta(days=rng.randint(30, 400))
        stability = 1.0
        for n in range(per_card):
            at = first + timedelta(days=n * 3, minutes=rng.randint(0, 600))
            stability *= 1.6
            logs.append(
                {"review_id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                 "user_id": user_id, "card_id": card_id, "deck_id": deck_id,
                 "rating": rng.choice((1, 3, 3, 3, 4)), "reviewed_at": at, "duration_ms": 4000,
                 "state_before": 2, "state": 2, "step": None, "stability": stability,
                 "difficulty": 5.0, "due": at + timedelta(days=stability), "reps": n + 1,
                 "lapses": 0, "reps_before": n, "lapses_before": 0}
            )  # fmt: skip
        states.append(
            {"user_id": user_id, "card_id": card_id, "deck_id": deck_id,
             "state": rng.choice((1, 2, 2, 2, 3)), "step": None, "stability": stability,
             "difficulty": rng.uniform(1, 10),
             "due": now + timedelta(hours=rng.randint(-48, 2000)),
             "last_review": now - timedelta(days=rng.randint(0, 30)), "reps": per_card,
             "lapses": rng.randint(0, 9), "introduced_at": first, "version": 1}
        )  # fmt: skip
    for card_id, deck_id in card_ids[::10]:
        marks.append(
            {"user_id": user_id, "card_id": card_id, "deck_id": deck_id,
             "suspended": rng.random() < 0.2, "buried_until": None, "flag": rng.randint(0, 7),
             "leech": rng.random() < 0.05, "tags": ["mine"]}
        )  # fmt: skip
    insert_rows(engine, ReviewState, states)
    insert_rows(engine, ReviewLog, logs)
    insert_rows(engine, CardMark, marks)
    # As a service's tables are after a while (SQLite and PostgreSQL both plan by statistics).
    with engine.connect() as connection:
        connection.exec_driver_sql("ANALYZE")
        connection.commit()


def _time(client: FlaskClient, path: str) -> float:
    started = time.perf_counter()
    response = client.get(path)
    elapsed = time.perf_counter() - started
    assert response.status_code == 200, path
    return elapsed


def test_browse_pages(app: Flask, engine: Engine, database_url: str) -> None:
    client = app.test_client()
    sign_up(client, "many@example.com")
    with transaction(engine) as s:
        user_id = s.scalar(select(User.id).where(User.email == "many@example.com"))
    assert user_id is not None
    started = time.perf_counter()
    _load(engine, user_id)
    load_seconds = time.perf_counter() - started
    paths = {
        "library (baseline)": "/",
        "browser, first page": "/browse",
        "text search": "/browse?q=term+512",
        "sorted, filtered, page 3": "/browse?state=review&sort=stability&order=desc"
        "&suspended=false&page=3",
        "tag, sorted by lapses": "/browse?tag=mine&sort=lapses&order=desc",
    }
    for path in paths.values():
        _time(client, path)  # warm-up
    times: dict[str, list[float]] = {name: [] for name in paths}
    for _ in range(RUNS):
        for name, path in paths.items():
            times[name].append(_time(client, path))
    med = {name: statistics.median(values) * 1000 for name, values in times.items()}
    base = med["library (baseline)"]
    lines = [
        f"{DECKS * PER_DECK:,} cards, {STUDIED:,} studied, {REVIEWS:,} reviews "
        f"loaded in {load_seconds:.1f} s"
    ]
    verdicts = []
    for name, ms in med.items():
        lines.append(f"{name}: {ms:.1f} ms (x{ms / base:.2f} the library page's)")
        if name != "library (baseline)":
            verdicts.append(ms < TARGET_MS)
    lines.append(f"target: each browser page under {TARGET_MS} ms: "
                 f"{'met' if all(verdicts) else 'MISSED'}")  # fmt: skip
    report(f"card browser, {database_url.split(':', 1)[0]}, median of {RUNS}", lines)
    if ENFORCE:
        assert all(verdicts)
