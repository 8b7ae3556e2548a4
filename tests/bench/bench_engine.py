"""The engine without HTTP, next to bare py-fsrs; and where a request's time goes (cProfile).

The profile runs the real app in-process through Flask's test client, so it shows the
handler's cost split by layer (SQLAlchemy, sqlite3, Flask/Werkzeug, fsrs, our code); the
test client's own environ building stands in for gunicorn's request parsing.
"""

from __future__ import annotations

import cProfile
import io
import pstats
import sqlite3
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fsrs import Card as FsrsCard
from fsrs import Rating, Scheduler
from sqlalchemy import create_engine, text

from flashcards import create_app
from flashcards.srs import study
from flashcards.storage.engine import make_engine, transaction
from tests.bench.conftest import report
from tests.bench.dataset import build
from tests.conftest import PG_URL, postgres_schema_url

N = 2000


def test_pure_engine_against_bare_fsrs(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'engine.sqlite3'}"
    engine = make_engine(url)
    data = build(url, engine, users=100, cards=100, states_per_user=50)
    now = datetime.now(UTC)

    def answers_per_second(offset: int) -> float:
        start = time.perf_counter()
        for i in range(offset, offset + N):
            with transaction(engine) as s:
                study.answer(
                    s,
                    i % 100 + 1,
                    data.card_ids[(i // 100) % 100],
                    Rating.Good,
                    str(uuid.uuid4()),
                    now=now + timedelta(milliseconds=i),
                )
        return N / (time.perf_counter() - start)

    engine_rate = answers_per_second(0)
    # make_engine uses NullPool on SQLite: closing the only connection to a WAL database
    # checkpoints and deletes the WAL each time. A second connection held open shows what
    # keeping connections (a pool) would save.
    keeper = sqlite3.connect(tmp_path / "engine.sqlite3")
    keeper.execute("SELECT 1 FROM users LIMIT 1").fetchall()
    kept_rate = answers_per_second(N)
    keeper.close()

    scheduler = Scheduler(enable_fuzzing=False)
    card = FsrsCard()
    start = time.perf_counter()
    for i in range(N):
        card, _ = scheduler.review_card(card, Rating.Good, now + timedelta(days=i))
    fsrs_rate = N / (time.perf_counter() - start)
    report(
        "Pure engine (SQLite file, one transaction per answer, no HTTP)",
        [
            f"study.answer + commit: {engine_rate:.0f} answers/s",
            f"same, with another connection held open (no checkpoint per close):"
            f" {kept_rate:.0f} answers/s",
            f"bare Scheduler.review_card: {fsrs_rate:.0f} reviews/s",
            f"ratio engine / bare fsrs: {engine_rate / fsrs_rate:.2%} as is,"
            f" {kept_rate / fsrs_rate:.2%} with the connection kept"
            f" (= fsrs's share of an answer's time)",
        ],
    )
    engine.dispose()


def _layer(filename: str, function: str) -> str:
    if "sqlalchemy" in filename:
        return "SQLAlchemy"
    if "werkzeug" in filename or "/flask/" in filename:
        return "Flask/Werkzeug"
    if "/fsrs/" in filename:
        return "fsrs"
    if "/flashcards/" in filename:
        return "flashcards"
    if "sqlite3" in function or "sqlite3" in filename:
        return "sqlite3 (C)"
    if "psycopg" in filename or "psycopg" in function:
        return "psycopg"
    if "json" in filename or "json" in function:
        return "json"
    return "stdlib/other"


def profile(title: str, call: object, count: int) -> None:
    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.enable()
    for i in range(count):
        call(i)  # type: ignore[operator]
    profiler.disable()
    elapsed = time.perf_counter() - start
    stats = pstats.Stats(profiler)
    layers: dict[str, float] = {}
    total = 0.0
    for (filename, _, function), (_, _, tottime, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        layers[_layer(filename, function)] = layers.get(_layer(filename, function), 0) + tottime
        total += tottime
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(18)
    lines = [
        f"{count} requests in {elapsed:.2f}s under cProfile"
        f" ({elapsed / count * 1000:.2f} ms each, profiler overhead included)",
        "own time by layer: "
        + ", ".join(
            f"{name} {t / total:.0%}" for name, t in sorted(layers.items(), key=lambda x: -x[1])
        ),
    ]
    body = out.getvalue()
    lines += body[body.index("   ncalls") :].rstrip().splitlines()
    report(title, lines)


def test_profile_hot_paths(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'profile.sqlite3'}"
    profile_app(url, "SQLite")


def test_profile_hot_paths_postgresql() -> None:
    if not PG_URL:
        pytest.skip("set FLASHCARDS_TEST_DATABASE_URL for the PostgreSQL profile")
    schema = f"bench_{uuid.uuid4().hex[:12]}"
    admin = create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        profile_app(postgres_schema_url(PG_URL, schema), "PostgreSQL")
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def profile_app(url: str, name: str) -> None:
    engine = make_engine(url)
    data = build(url, engine, users=100, cards=100, states_per_user=50)
    engine.dispose()
    app = create_app({"DATABASE_URL": url, "SECRET_KEY": "bench"})
    client = app.test_client()
    headers = [{"Authorization": f"Bearer {t}"} for t in data.tokens]

    def post(i: int) -> None:
        response = client.post(
            "/api/v1/reviews",
            json={
                "card_id": data.card_ids[(i // 100) % 100],
                "rating": 3,
                "review_id": str(uuid.uuid4()),
            },
            headers=headers[i % 100],
        )
        assert response.status_code == 201, response.get_data(as_text=True)

    def next_card(i: int) -> None:
        response = client.get("/api/v1/study/next", headers=headers[i % 100])
        assert response.status_code in (200, 204)

    for i in range(50):  # warm-up: statement caches
        post(10_000 + i)
        next_card(i)
    profile(f"Profile: POST /api/v1/reviews ({name}, in-process)", post, 1000)
    profile(f"Profile: GET /api/v1/study/next ({name}, in-process)", next_card, 1000)
    app.extensions["flashcards.engine"].dispose()
