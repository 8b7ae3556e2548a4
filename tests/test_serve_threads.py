"""`flashcards serve --threads 8` under many parallel clients: each worker's connection pool
is sized from its threads, so no request waits out the pool's timeout and none fails.

Each thread may hold the hot paths' kept connection, its request session's, and a rate
limit's reservation at once; a pool of SQLAlchemy's default 5 + 10 does not fit 8 threads.
"""

from __future__ import annotations

import http.client
import json
import threading
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select

from flashcards.people import accounts
from flashcards.srs import subscriptions
from flashcards.storage.engine import transaction
from flashcards.storage.models import Deck
from tests.conftest import T0, load_shipped_decks
from tests.test_servers import Server

pytestmark = pytest.mark.slow
THREADS = 8
CLIENTS = 32
ROUNDS = 12
PASSWORD = "correct horse"


def seed(engine: Engine) -> list[tuple[str, str]]:
    """One person per client (their answers never race each other): email and token."""
    load_shipped_decks(engine)
    people = []
    with transaction(engine) as s:
        decks = list(s.scalars(select(Deck)))
        for i in range(CLIENTS):
            email = f"load{i}@example.com"
            user = accounts.create_user(s, email, PASSWORD, now=T0)
            for deck in decks:
                subscriptions.subscribe(s, user.id, deck, None, now=T0)
            people.append((email, accounts.issue_token(s, user.id, now=T0)))
    return people


class Client:
    def __init__(self, port: int, token: str) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.token = token

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {self.token}"}
        payload = None
        if body is not None:
            payload = json.dumps(body)
            headers["Content-Type"] = "application/json"
        self.conn.request(method, path, body=payload, headers=headers)
        response = self.conn.getresponse()
        data = response.read()
        return response.status, json.loads(data) if data else None


def test_eight_threads_serve_thirty_two_clients_without_exhausting_the_pool(
    database_url: str, engine: Engine, tmp_path: Path
) -> None:
    people = seed(engine)
    log = tmp_path / "server.log"
    server = Server(
        database_url,
        log,
        workers=1,  # one pool, all eight threads drawing on it
        threads=THREADS,
        env={"FLASHCARDS_TOKENS_PER_HOUR": "1000", "FLASHCARDS_SIGNIN_ATTEMPTS": "1000"},
    )
    statuses: Counter[tuple[str, int]] = Counter()
    lock = threading.Lock()
    start = threading.Barrier(CLIENTS)
    errors: list[BaseException] = []

    def work(email: str, token: str) -> None:
        client = Client(server.port, token)
        seen: list[tuple[str, int]] = []
        try:
            start.wait()
            # A sign-in: the rate limit's reservation beside the request's session.
            status, _ = client.call(
                "POST", "/api/v1/tokens", {"email": email, "password": PASSWORD}
            )
            seen.append(("sign-in", status))
            for _round in range(ROUNDS):
                status, body = client.call("GET", "/api/v1/study/next")
                seen.append(("next", status))
                if status == 200:
                    status, _ = client.call(
                        "POST",
                        "/api/v1/reviews",
                        {
                            "card_id": body["card"]["id"],
                            "rating": 3,
                            "review_id": str(uuid.uuid4()),
                        },
                    )
                    seen.append(("answer", status))
                status, _ = client.call("GET", "/api/v1/me")  # an ORM read on the session
                seen.append(("me", status))
        except BaseException as exc:  # reported below, with the server's log
            errors.append(exc)
        finally:
            client.conn.close()
            with lock:
                statuses.update(seen)

    threads = [threading.Thread(target=work, args=person) for person in people]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
    finally:
        server.stop()
    output = log.read_text()
    assert not errors, (errors[:3], output[-3000:])
    assert all(status < 500 for _, status in statuses), (statuses, output[-3000:])
    assert "QueuePool limit" not in output and "TimeoutError" not in output, output[-3000:]
    assert statuses[("sign-in", 201)] == CLIENTS
    assert statuses[("me", 200)] == CLIENTS * ROUNDS
    assert statuses[("answer", 201)] == statuses[("next", 200)] > 0
