"""Real gunicorn servers: two instances on one PostgreSQL, and SIGKILL in the middle of answers.

These start `flashcards serve` as subprocesses and talk HTTP to them, so they test what a
deployment runs: the request's transaction, the version check and retry, idempotent review
ids and the database's durability, not a test client.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select, text

from flashcards.people import accounts
from flashcards.srs import subscriptions
from flashcards.storage.engine import transaction
from flashcards.storage.models import Card, Deck, ReviewLog, ReviewState
from tests.conftest import REPO, T0, load_shipped_decks

pytestmark = pytest.mark.slow
FLASHCARDS = str(Path(sys.executable).parent / "flashcards")
RATINGS = (1, 2, 3, 3, 4, 3)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """One `flashcards serve` process group (the gunicorn master and its workers)."""

    def __init__(
        self,
        database_url: str,
        log: Path,
        workers: int = 2,
        *,
        threads: int | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.port = free_port()
        full_env = {
            **os.environ,
            "FLASHCARDS_DATABASE_URL": database_url,
            "FLASHCARDS_SECRET_KEY": "test-secret",
            **(env or {}),
        }
        command = [FLASHCARDS, "serve", "--port", str(self.port), "--workers", str(workers)]
        if threads is not None:
            command += ["--threads", str(threads)]
        self.log = log
        with log.open("ab") as out:
            self.process = subprocess.Popen(
                command,
                env=full_env,
                cwd=REPO,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"server exited: {self.log.read_text()[-3000:]}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", "/api/v1/study/next")
                if conn.getresponse().status == 401:
                    conn.close()
                    return
            except OSError:
                time.sleep(0.1)
        raise AssertionError(f"server did not start: {self.log.read_text()[-3000:]}")

    def kill(self) -> None:
        """SIGKILL to the master and every worker at once: no graceful anything."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()


@contextmanager
def servers(database_url: str, tmp_path: Path, count: int) -> Iterator[list[Server]]:
    started: list[Server] = []
    try:
        for i in range(count):
            started.append(Server(database_url, tmp_path / f"server-{i}.log"))
        yield started
    finally:
        for server in started:
            server.stop()


class Client:
    """A keep-alive HTTP client for one thread."""

    def __init__(self, port: int, token: str) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def post_review(self, card_id: int, rating: int, review_id: str) -> tuple[int, Any]:
        body = json.dumps({"card_id": card_id, "rating": rating, "review_id": review_id})
        self.conn.request("POST", "/api/v1/reviews", body=body, headers=self.headers)
        response = self.conn.getresponse()
        payload = response.read()
        return response.status, json.loads(payload) if payload else None

    def close(self) -> None:
        self.conn.close()


def seed(engine: Engine) -> tuple[int, str, list[int]]:
    load_shipped_decks(engine)
    with transaction(engine) as s:
        user = accounts.create_user(s, "ana@example.com", "correct horse", now=T0)
        token = accounts.issue_token(s, user.id, now=T0)
        for deck in s.scalars(select(Deck)):
            subscriptions.subscribe(s, user.id, deck, None, now=T0)
        cards = list(s.scalars(select(Card.id).order_by(Card.id)))
        return user.id, token, cards


def check_chains(engine: Engine, user_id: int) -> dict[int, int]:
    """Each card's log is one unbroken chain ending in its state; returns answers per card."""
    with engine.connect() as conn:
        logs = conn.execute(
            select(ReviewLog).where(ReviewLog.user_id == user_id).order_by(ReviewLog.id)
        ).all()
        states = {
            r.card_id: r
            for r in conn.execute(select(ReviewState).where(ReviewState.user_id == user_id))
        }
    per_card: dict[int, list[Any]] = {}
    for log in logs:
        per_card.setdefault(log.card_id, []).append(log)
    assert set(per_card) == set(states)
    for card_id, chain in per_card.items():
        for i, log in enumerate(chain):
            # An answer applied twice or lost would break reps_before or the state link.
            assert log.reps_before == i, (card_id, i)
            if i:
                previous = chain[i - 1]
                assert (log.stability_before, log.due_before) == (
                    previous.stability,
                    previous.due,
                )
        state = states[card_id]
        assert state.reps == len(chain)
        assert (state.stability, state.due) == (chain[-1].stability, chain[-1].due)
    return {card_id: len(chain) for card_id, chain in per_card.items()}


def test_two_instances_apply_every_answer_exactly_once(
    database_url: str, engine: Engine, tmp_path: Path
) -> None:
    if not database_url.startswith("postgresql"):
        pytest.skip("several instances are the PostgreSQL deployment")
    user_id, token, cards = seed(engine)
    hot = cards[:4]  # few cards, so both instances often answer the same card at once
    results: list[tuple[str, int, int]] = []
    lock = threading.Lock()
    failures: list[str] = []

    def work(port: int, thread: int, other_port: int) -> None:
        client, other = Client(port, token), Client(other_port, token)
        try:
            for i in range(25):
                card_id = hot[(thread + i) % len(hot)]
                review_id = str(uuid.uuid4())
                rating = RATINGS[i % len(RATINGS)]
                status, body = client.post_review(card_id, rating, review_id)
                # The same answer again, through the other instance: a client retrying after
                # a lost response must not apply it twice.
                again, body_again = other.post_review(card_id, rating, review_id)
                with lock:
                    results.append((review_id, status, again))
                    if status != 201 or again != 200 or body_again["state"] != body["state"]:
                        failures.append(f"{status} {again} {body} {body_again}")
        finally:
            client.close()
            other.close()

    with servers(database_url, tmp_path, 2) as (a, b):
        threads = [
            threading.Thread(target=work, args=(s.port, t, o.port))
            for t, (s, o) in enumerate([(a, b), (b, a)] * 3)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    assert failures == []
    assert len(results) == 150
    with engine.connect() as conn:
        stored = set(conn.execute(select(ReviewLog.review_id)).scalars())
    assert stored == {review_id for review_id, _, _ in results}
    assert sum(check_chains(engine, user_id).values()) == 150


def test_answers_acknowledged_before_sigkill_survive(
    database_url: str, engine: Engine, tmp_path: Path
) -> None:
    user_id, token, cards = seed(engine)
    acknowledged: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()
    bad: list[str] = []

    def work(port: int, thread: int, threads: int) -> None:
        mine = cards[thread::threads]  # one thread per card: no same-card contention here
        client = Client(port, token)
        i = 0
        while not stop.is_set():
            review_id = str(uuid.uuid4())
            try:
                status, _ = client.post_review(mine[i % len(mine)], RATINGS[i % 6], review_id)
            except (OSError, http.client.HTTPException):
                return  # the server is gone
            if status == 201:
                with lock:
                    acknowledged.append(review_id)
            else:
                bad.append(f"{status}")
            i += 1

    with servers(database_url, tmp_path, 1) as (server,):
        threads = [threading.Thread(target=work, args=(server.port, t, 4)) for t in range(4)]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 20
        while len(acknowledged) < 150 and time.monotonic() < deadline:
            time.sleep(0.05)
        server.kill()
        stop.set()
        for t in threads:
            t.join()
    assert bad == []
    assert len(acknowledged) >= 150

    engine.dispose()  # nothing cached from before the crash
    if database_url.startswith("sqlite"):
        with engine.connect() as conn:
            assert conn.execute(text("PRAGMA integrity_check")).scalar() == "ok"
    with engine.connect() as conn:
        stored = set(conn.execute(select(ReviewLog.review_id)).scalars())
        assert conn.execute(select(func.count()).select_from(ReviewLog)).scalar() == len(stored)
    assert set(acknowledged) <= stored
    check_chains(engine, user_id)

    # The restarted service carries on from where it was.
    with servers(database_url, tmp_path, 1) as (server,):
        client = Client(server.port, token)
        status, body = client.post_review(cards[0], 3, str(uuid.uuid4()))
        client.close()
    assert status == 201, body
    check_chains(engine, user_id)
