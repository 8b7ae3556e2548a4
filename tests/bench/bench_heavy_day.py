"""A heavy day does not slow the queue (issue 20): GET /api/v1/study/next before and after a
day of answers, and for a person with 1,000 answers today next to one with 10.

20 people subscribed to a 15-card deck each answer 850 times today (17,000 answers, every
card then in learning or review), through `study.answer` with `reviewed_at` spread over the
study day so far. Throughput is measured for the 20 before and after those answers, each
next to the ceiling measured just before it, so that a drift of the machine's speed between
the two is taken out; the p50 latencies of the two single users are measured interleaved.
Targets: after ≥ 0.8 × before; p50 at 1,000 answers ≤ 1.2 × p50 at 10.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fsrs import Rating
from sqlalchemy import Engine, create_engine, func, select, text

from flashcards.srs import study
from flashcards.srs.days import day_bounds
from flashcards.storage.engine import make_engine, transaction
from flashcards.storage.models import ReviewLog
from tests.bench.conftest import (
    CONNECTIONS,
    RUNS,
    SECONDS,
    WORKERS,
    Server,
    WrkResult,
    flashcards_server,
    median,
    report,
    wrk,
)
from tests.bench.dataset import Dataset, build, settle
from tests.conftest import PG_URL, postgres_schema_url

ENFORCE = os.environ.get("BENCH_ENFORCE") == "1"
CROWD = 20
CROWD_ANSWERS = 850
LIGHT, HEAVY = 10, 1000
CARDS = 15
# Answers as people give them: mostly Good, some lapses and hard ones, so that the cards end
# up spread over learning, relearning and review.
RATINGS = (Rating.Good, Rating.Good, Rating.Again, Rating.Good, Rating.Hard, Rating.Easy)


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Engine]]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'heavy.sqlite3'}"
        engine = make_engine(url)
        yield url, engine
        engine.dispose()
        return
    if not PG_URL:
        pytest.skip("set FLASHCARDS_TEST_DATABASE_URL for the PostgreSQL figures")
    schema = f"bench_{uuid.uuid4().hex[:12]}"
    admin = create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    url = postgres_schema_url(PG_URL, schema)
    engine = make_engine(url)
    try:
        yield url, engine
    finally:
        engine.dispose()
        with admin.connect() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def token_file(tmp: Path, name: str, tokens: list[str], data: Dataset) -> dict[str, str]:
    (tmp / f"{name}.tokens").write_text("\n".join(tokens) + "\n")
    (tmp / "cards.txt").write_text("\n".join(map(str, data.card_ids)) + "\n")
    return {"BENCH_TOKENS": str(tmp / f"{name}.tokens"), "BENCH_CARDS": str(tmp / "cards.txt")}


def answer_today(engine: Engine, user_id: int, card_ids: list[int], answers: int) -> None:
    """`answers` answers by one person, spread over their study day up to now (UTC, 04:00)."""
    now = datetime.now(UTC)
    start, _end = day_bounds(now, "UTC", 4)
    # Just after the day's start there is no time to spread them over: all at its start.
    step = max(now - timedelta(minutes=1) - start, timedelta(0)) / answers
    with transaction(engine) as s:
        for i in range(answers):
            study.answer(
                s,
                user_id,
                card_ids[i % len(card_ids)],
                RATINGS[(i // len(card_ids) + i) % len(RATINGS)],
                str(uuid.uuid4()),
                now=now,
                reviewed_at=start + step * i,
            )


def next_runs(server: Server, env: dict[str, str]) -> WrkResult:
    result = wrk(server.url, "next", SECONDS, {**env, "BENCH_CARD_OFFSET": "0"})
    assert set(result.statuses) <= {200, 204} and not result.socket_errors, (
        result.statuses,
        result.socket_errors,
    )
    return result


def crowd_throughput(
    ceiling: Server, server: Server, env: dict[str, str]
) -> tuple[float, float, float]:
    """Median req/s of the crowd's GET next, the ceiling's, and the median per-run ratio."""
    wrk(server.url, "next", 2, {**env, "BENCH_CARD_OFFSET": "0"})  # warm-up
    ceilings, runs = [], []
    for _ in range(RUNS):
        ceilings.append(wrk(ceiling.url, "ceiling", SECONDS))
        runs.append(next_runs(server, env))
    ratios = sorted(r.rps / c.rps for r, c in zip(runs, ceilings, strict=True))
    return median(runs, "rps"), median(ceilings, "rps"), ratios[len(ratios) // 2]


def verdict(name: str, ok: bool, detail: str) -> str:
    line = f"{'MET ' if ok else 'MISSED'} {name}: {detail}"
    if ENFORCE:
        assert ok, line
    return line


def test_a_heavy_day_does_not_slow_the_queue(
    ceiling: Server, database: tuple[str, Engine], tmp_path: Path
) -> None:
    url, engine = database
    users = CROWD + 2
    data = build(url, engine, users=users, cards=CARDS, states_per_user=0)
    crowd = list(range(1, CROWD + 1))
    light, heavy = CROWD + 1, CROWD + 2
    crowd_env = token_file(tmp_path, "crowd", data.tokens[:CROWD], data)
    light_env = token_file(tmp_path, "light", [data.tokens[light - 1]], data)
    heavy_env = token_file(tmp_path, "heavy", [data.tokens[heavy - 1]], data)
    server = flashcards_server(url, tmp_path / "server.log")
    try:
        before, ceiling_before, ratio_before = crowd_throughput(ceiling, server, crowd_env)
        for user in crowd:
            answer_today(engine, user, data.card_ids, CROWD_ANSWERS)
        answer_today(engine, light, data.card_ids, LIGHT)
        answer_today(engine, heavy, data.card_ids, HEAVY)
        settle(engine)  # statistics as a day in service has them, not those of an empty log
        after, ceiling_after, ratio_after = crowd_throughput(ceiling, server, crowd_env)
        wrk(server.url, "next", 2, {**light_env, "BENCH_CARD_OFFSET": "0"})  # warm-up
        wrk(server.url, "next", 2, {**heavy_env, "BENCH_CARD_OFFSET": "0"})
        light_runs, heavy_runs = [], []
        for _ in range(RUNS):
            light_runs.append(next_runs(server, light_env))
            heavy_runs.append(next_runs(server, heavy_env))
        rss = server.worker_rss_mib()
    finally:
        server.stop()
    with engine.connect() as conn:
        answers = conn.execute(select(func.count()).select_from(ReviewLog)).scalar_one()
    assert answers == CROWD * CROWD_ANSWERS + LIGHT + HEAVY
    kept = ratio_after / ratio_before
    light_p50, heavy_p50 = median(light_runs, "p50_ms"), median(heavy_runs, "p50_ms")
    growth = heavy_p50 / light_p50
    lines = [
        f"{engine.dialect.name}; {RUNS} runs x {SECONDS}s, wrk -t2 -c{CONNECTIONS},"
        f" gunicorn {WORKERS} sync workers; {CROWD} people x {CARDS} cards",
        f"before ({CROWD} x 0 answers): {before:.0f} req/s, ceiling {ceiling_before:.0f} req/s,"
        f" {ratio_before:.1%} of it",
        f"after ({CROWD} x {CROWD_ANSWERS} answers today, {answers:,} in all): {after:.0f}"
        f" req/s, ceiling {ceiling_after:.0f} req/s, {ratio_after:.1%} of it",
        verdict(
            f"GET next after {CROWD} x {CROWD_ANSWERS} answers >= 0.8x before",
            kept >= 0.8,
            f"{kept:.2f}x of the ceiling's share ({after / before:.2f}x in raw req/s)",
        ),
        verdict(
            f"GET next p50 at {HEAVY} answers today <= 1.2x at {LIGHT}",
            growth <= 1.2,
            f"p50 {heavy_p50:.2f} ms vs {light_p50:.2f} ms = {growth:.2f}x; p99"
            f" {median(heavy_runs, 'p99_ms'):.2f} vs {median(light_runs, 'p99_ms'):.2f} ms",
        ),
        f"worker RSS after the runs (MiB): {rss}",
    ]
    report(f"A heavy day, GET /api/v1/study/next, {engine.dialect.name}", lines)
