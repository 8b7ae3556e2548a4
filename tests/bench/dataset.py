"""Benchmark data, made fast: users with tokens, a 100-card deck, review states in bulk.

Small tables go through SQLAlchemy Core (so column defaults apply as in the service); review
states, up to a million rows, and the log of the answer that left each, go through the
driver directly: `executemany` on SQLite, COPY on PostgreSQL.
"""

from __future__ import annotations

import random
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from sqlalchemy import Engine, Table, insert

from flashcards.people import accounts
from flashcards.people.token_hashes import token_hash
from flashcards.srs.settings import scheduler_defaults
from flashcards.storage import migrate
from flashcards.storage.engine import transaction
from flashcards.storage.models import (
    ApiToken,
    Card,
    CardText,
    Deck,
    DeckText,
    SchedulerSettings,
    Subscription,
    User,
)
from flashcards.storage.schema import Base

NOW = datetime.now(UTC).replace(microsecond=0)
BATCH = 20_000


@dataclass
class Dataset:
    url: str
    tokens: list[str]
    card_ids: list[int]
    states: int


# Rows a statement takes at most: SQLite's bound parameters are limited.
CHUNK = 5000


def insert_rows(engine: Engine, model: Any, rows: list[dict[str, Any]]) -> None:
    """`rows` into `model`'s table through SQLAlchemy Core, in one transaction."""
    table = cast(Table, model.__table__)
    with transaction(engine) as s:
        for start in range(0, len(rows), CHUNK):
            s.execute(insert(table), rows[start : start + CHUNK])


def _sqlite_time(value: datetime) -> str:
    # The text SQLAlchemy's SQLite DateTime writes (naive UTC, as UTCDateTime stores it).
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


def build(url: str, engine: Engine, *, users: int, cards: int, states_per_user: int) -> Dataset:
    migrate.upgrade(engine)
    rng = random.Random(7)
    password_hash = accounts.hash_password(secrets.token_urlsafe(12))  # one scrypt, shared
    tokens = [secrets.token_urlsafe(32) for _ in range(users)]
    defaults = scheduler_defaults()
    with engine.begin() as conn:
        deck_id = conn.execute(
            insert(Deck).values(slug="bench", default_locale="en", created_at=NOW, updated_at=NOW)
        ).inserted_primary_key[0]
        conn.execute(insert(DeckText).values(deck_id=deck_id, locale="en", title="Bench"))
        conn.execute(
            insert(Card),
            [
                {"deck_id": deck_id, "key": f"c{i}", "position": i, "created_at": NOW}
                for i in range(cards)
            ],
        )
        card_ids = sorted(
            r[0] for r in conn.exec_driver_sql(f"SELECT id FROM cards WHERE deck_id = {deck_id}")
        )
        conn.execute(
            insert(CardText),
            [
                {
                    "card_id": c,
                    "locale": "en",
                    "question": f"Question {c}?",
                    "answer": f"Answer {c}",
                    "explanation": "Because.",
                    "updated_at": NOW,
                }
                for c in card_ids
            ],
        )
        for start in range(0, users, BATCH):
            chunk = range(start, min(start + BATCH, users))
            conn.execute(
                insert(User),
                [
                    {
                        "id": i + 1,
                        "email": f"u{i}@bench.example",
                        "password_hash": password_hash,
                        "created_at": NOW,
                    }
                    for i in chunk
                ],
            )
            conn.execute(insert(SchedulerSettings), [{"user_id": i + 1, **defaults} for i in chunk])
            conn.execute(
                insert(ApiToken),
                [
                    {
                        "user_id": i + 1,
                        "token_hash": token_hash(tokens[i]),
                        "name": "bench",
                        "created_at": NOW,
                    }
                    for i in chunk
                ],
            )
            conn.execute(
                insert(Subscription),
                [{"user_id": i + 1, "deck_id": deck_id, "locale": "en"} for i in chunk],
            )
        if conn.dialect.name == "postgresql":
            conn.exec_driver_sql(
                "SELECT setval(pg_get_serial_sequence('users', 'id'), (SELECT MAX(id) FROM users))"
            )
    count = _states(engine, rng, users, deck_id, card_ids[:states_per_user])
    settle(engine)
    return Dataset(url, tokens, card_ids, count)


def settle(engine: Engine) -> None:
    """Statistics for the planner, and on PostgreSQL the vacuum that autovacuum would soon
    run after a bulk load: the CI's PostgreSQL runs without autovacuum, and the figures are
    for a database in service, not one just loaded."""
    if engine.dialect.name != "postgresql":
        with engine.begin() as conn:
            conn.exec_driver_sql("ANALYZE")
        return
    tables = ", ".join(table.name for table in Base.metadata.sorted_tables)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql(f"VACUUM ANALYZE {tables}")


def _state_rows(
    rng: random.Random, users: int, deck_id: int, card_ids: list[int]
) -> list[tuple[Any, ...]]:
    rows = []
    for user in range(1, users + 1):
        for card in card_ids:
            # Mostly review cards, due from a month ago to two months ahead: a realistic queue
            # where each user has some due today and most not.
            due = NOW + timedelta(hours=rng.uniform(-24 * 30, 24 * 60))
            last = min(due, NOW) - timedelta(days=rng.uniform(1, 30))
            state = 2 if rng.random() < 0.9 else 1
            rows.append(
                (
                    user,
                    card,
                    deck_id,
                    state,
                    None if state == 2 else 0,
                    rng.uniform(1, 60),
                    rng.uniform(1, 10),
                    due,
                    last,
                    rng.randint(1, 20),
                    rng.randint(0, 3),
                    last - timedelta(days=30),
                    1,
                )
            )
    return rows


COLUMNS = (
    "user_id, card_id, deck_id, state, step, stability, difficulty, due, last_review, reps, "
    "lapses, introduced_at, version"
)
LOG_COLUMNS = (
    "review_id, user_id, card_id, deck_id, rating, reviewed_at, reps_before, lapses_before, "
    "state, step, stability, difficulty, due, reps, lapses"
)


def _log_row(state: tuple[Any, ...]) -> tuple[Any, ...]:
    """The answer that left a card in `state`: a state without its log would be unrealistic,
    and an empty log table would let PostgreSQL plan its lookups for an empty table."""
    user, card, deck_id, kind, step, stability, difficulty, due, last, reps, lapses = state[:11]
    review_id = f"{user:08x}-0000-4000-8000-{card:012x}"
    return (review_id, user, card, deck_id, 3, last, reps - 1, lapses, kind, step, stability,
            difficulty, due, reps, lapses)  # fmt: skip


def _states(
    engine: Engine, rng: random.Random, users: int, deck_id: int, card_ids: list[int]
) -> int:
    if not card_ids:
        return 0
    total = 0
    raw = engine.raw_connection()
    try:
        cursor = raw.cursor()
        per_batch = max(1, BATCH * 5 // len(card_ids))
        for start in range(0, users, per_batch):
            n = min(per_batch, users - start)
            rows = _state_rows(rng, n, deck_id, card_ids)
            rows = [(r[0] + start, *r[1:]) for r in rows]
            if engine.dialect.name == "sqlite":
                cursor.execute("BEGIN")
                cursor.executemany(
                    f"INSERT INTO review_states ({COLUMNS}) VALUES ({', '.join('?' * 13)})",
                    [
                        (
                            *r[:7],
                            _sqlite_time(r[7]),
                            _sqlite_time(r[8]),
                            r[9],
                            r[10],
                            _sqlite_time(r[11]),
                            r[12],
                        )
                        for r in rows
                    ],
                )
                cursor.executemany(
                    f"INSERT INTO review_logs ({LOG_COLUMNS}) VALUES ({', '.join('?' * 15)})",
                    [
                        (*g[:5], _sqlite_time(g[5]), *g[6:12], _sqlite_time(g[12]), *g[13:])
                        for g in map(_log_row, rows)
                    ],
                )
                cursor.execute("COMMIT")
            else:
                with cursor.copy(f"COPY review_states ({COLUMNS}) FROM STDIN") as copy:
                    for r in rows:
                        copy.write_row(r)
                with cursor.copy(f"COPY review_logs ({LOG_COLUMNS}) FROM STDIN") as copy:
                    for r in rows:
                        copy.write_row(_log_row(r))
                raw.commit()
            total += len(rows)
    finally:
        raw.close()
    return total
