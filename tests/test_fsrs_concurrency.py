"""Nothing waits on a fit: answers and queue reads on a real server while a fit computes.

`flashcards serve` runs with several workers. One person asks for a fit of a long history
(tens of thousands of answers: most of a second of CPU); meanwhile another person answers
cards and asks for the next one, as fast as they can. Each of those requests must take no
more than 100 ms longer than the slowest of the same requests measured just before, with no
fit running, on the same server: on SQLite the fit holds no write lock (nor an open read)
while it computes, and on either database it holds no lock an answer needs.
"""

from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path

import pytest
from sqlalchemy import Engine, select

from flashcards.storage.engine import transaction
from flashcards.storage.models import Card, FsrsParameterSet

from .conftest import T0
from .factories import make_deck, make_token, make_user, subscribe
from .fsrs_learner import bulk_history
from .test_contention import Raw
from .test_servers import Server

pytestmark = pytest.mark.slow
BLOCKED = 0.100  # seconds more than the slowest request without a fit


def _seed(engine: Engine) -> tuple[str, str, list[int]]:
    with transaction(engine) as session:
        fitter = make_user(session, "fitter@example.com")
        bulk_history(session, fitter, T0, cards=3000, answers_per_card=15)
        other = make_user(session, "other@example.com")
        deck = make_deck(session, "other-words", 400)
        subscribe(session, other, deck)
        cards = list(session.scalars(select(Card.id).where(Card.deck_id == deck.id)))
        return make_token(session, fitter), make_token(session, other), cards


def _study(raw: Raw, cards: list[int], until: threading.Event | float) -> list[float]:
    """Answer cards and read the queue until `until` (a time, or an event set); latencies."""
    latencies = []
    while not (until.is_set() if isinstance(until, threading.Event) else time.monotonic() > until):
        card = cards[len(latencies) // 2 % len(cards)]
        start = time.perf_counter()
        if len(latencies) % 2:
            reply = raw.send("GET", "/api/v1/study/next")
        else:
            body = {"card_id": card, "rating": 3, "review_id": str(uuid.uuid4())}
            reply = raw.post_json("/api/v1/reviews", body)
        latencies.append(time.perf_counter() - start)
        assert reply.status in (200, 201, 204), reply.body
    return latencies


def test_requests_do_not_wait_on_a_fit(database_url: str, engine: Engine, tmp_path: Path) -> None:
    fitter_token, other_token, cards = _seed(engine)
    server = Server(database_url, tmp_path / "server.log", workers=3)
    try:
        other = Raw(server.port, token=other_token)
        _study(other, cards, time.monotonic() + 1.0)  # warm every worker's connections
        baseline = _study(other, cards, time.monotonic() + 2.0)

        done = threading.Event()
        fit_status: list[int] = []
        fit_seconds: list[float] = []

        def fit() -> None:
            fitter = Raw(server.port, token=fitter_token)
            start = time.perf_counter()
            fit_status.append(fitter.send("POST", "/api/v1/me/fsrs/optimize").status)
            fit_seconds.append(time.perf_counter() - start)
            fitter.close()
            done.set()

        thread = threading.Thread(target=fit)
        thread.start()
        during = _study(other, cards, done)
        thread.join()
        other.close()
    finally:
        server.stop()
    assert fit_status == [200]
    with transaction(engine) as session:
        assert session.scalar(select(FsrsParameterSet.answers)) > 30_000
    # The fit ran long enough for a blocking one to show, and requests ran all along it.
    assert fit_seconds[0] > 0.5, fit_seconds
    assert len(during) >= 10, (fit_seconds, during)
    slowest = max(baseline)
    assert max(during) <= slowest + BLOCKED, (sorted(during)[-5:], slowest, fit_seconds)
