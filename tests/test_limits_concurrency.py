"""Rate limits under real parallelism: `flashcards serve` with several workers, hit by many
requests at once. Each limit must hold exactly: with an allowance of N, exactly N attempts get
past the slow password check (or make an account, or a token) and every other one is a 429,
on SQLite, on PostgreSQL and with the counts in Redis.

Before attempts were reserved ahead of the password check, 50 parallel wrong passwords for
one email with a limit of 10 let 16-17 through.
"""

from __future__ import annotations

import http.client
import json
import re
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from sqlalchemy import Engine, func, select

from flashcards.people import accounts
from flashcards.people.ratelimit import Limiter
from flashcards.storage.engine import transaction
from flashcards.storage.models import ApiToken, User
from tests.conftest import T0
from tests.test_api_auth import REDIS_URL, redis_available
from tests.test_servers import Server

# The Redis tests share one worker: they time concurrent sign-ins against one server.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("redis")]
REDIS_PREFIX = "flashcards:ratelimit:"
PASSWORD = "correct horse"
WORKERS, THREADS = 4, 2


@pytest.fixture(params=["database", "redis"])
def counts_in(request: pytest.FixtureRequest) -> str:
    if request.param == "redis" and not redis_available():
        pytest.skip("Redis is not running on 127.0.0.1:6379")
    return str(request.param)


@pytest.fixture
def serve(
    database_url: str, engine: Engine, tmp_path: Path, counts_in: str
) -> Iterator[Callable[..., Server]]:
    started: list[Server] = []

    def start(**settings: str) -> Server:
        env = {f"FLASHCARDS_{name}": value for name, value in settings.items()}
        if counts_in == "redis":
            env["FLASHCARDS_REDIS_URL"] = REDIS_URL
        # Behind one trusted proxy hop, so that each test gives itself a client address of
        # its own (Redis keeps its counts between runs, and other test runs share it).
        env["FLASHCARDS_TRUSTED_PROXIES"] = "1"
        log = tmp_path / f"server-{len(started)}.log"
        server = Server(database_url, log, WORKERS, threads=THREADS, env=env)
        started.append(server)
        return server

    try:
        yield start
    finally:
        for server in started:
            server.stop()


def test_the_redis_tests_share_one_worker(request: pytest.FixtureRequest) -> None:
    # Accounts' keys repeat across the tests' databases (a user's id): run at once on several
    # workers, these tests count in each other's keys. xdist marks a grouped test's id.
    if request.config.getoption("loadgroup", False):
        assert request.node.nodeid.endswith("@redis"), request.node.nodeid


def client_address() -> str:
    return f"2001:db8::{uuid.uuid4().hex[:4]}:{uuid.uuid4().hex[:4]}"


def request(
    port: int, method: str, path: str, *, address: str, **kwargs: Any
) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    headers = {"X-Forwarded-For": address, **kwargs.pop("headers", {})}
    try:
        conn.request(method, path, headers=headers, **kwargs)
        response = conn.getresponse()
        response.read()
        return response
    finally:
        conn.close()


def api(port: int, method: str, path: str, body: Any, *, address: str, **headers: str) -> int:
    response = request(
        port,
        method,
        path,
        address=address,
        body=json.dumps(body),
        headers={"Content-Type": "application/json", **headers},
    )
    if response.status == 429:
        assert int(response.headers["Retry-After"]) > 0
        assert response.headers["Content-Type"].startswith("application/problem+json")
    return response.status


class WebForm:
    """A browser's cookie and CSRF token for one form page, fetched before the rush."""

    def __init__(self, port: int, page: str, address: str) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            conn.request("GET", page, headers={"X-Forwarded-For": address})
            response = conn.getresponse()
            html = response.read().decode()
        finally:
            conn.close()
        cookie = response.headers["Set-Cookie"].split(";", 1)[0]
        found = re.search(r'name="csrf_token" value="([^"]+)"', html)
        assert found, html[:500]
        self.port, self.page, self.address = port, page, address
        self.cookie, self.token = cookie, found.group(1)

    def post(self, **fields: str) -> int:
        from urllib.parse import urlencode

        body = urlencode({"csrf_token": self.token, **fields})
        response = request(
            self.port,
            "POST",
            self.page,
            address=self.address,
            body=body,
            headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "Cookie": self.cookie,
            },
        )
        if response.status == 429:
            assert int(response.headers["Retry-After"]) > 0
        return response.status


def all_at_once(calls: list[Callable[[], int]]) -> Counter[int]:
    """Run every call on a thread of its own, released together; their statuses counted."""
    barrier = threading.Barrier(len(calls))
    statuses: list[int] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def run(call: Callable[[], int]) -> None:
        try:
            barrier.wait(timeout=60)
            status = call()
        except BaseException as exc:  # reported below, not lost in the thread
            with lock:
                errors.append(exc)
            return
        with lock:
            statuses.append(status)

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not errors, errors
    return Counter(statuses)


def add_user(engine: Engine, email: str) -> tuple[int, str]:
    with transaction(engine) as s:
        user = accounts.create_user(s, email, PASSWORD, now=T0)
        return user.id, accounts.issue_token(s, user.id, now=T0)


def forget_in_redis(*keys: str) -> None:
    """Per-account keys (the user's id) repeat across test databases: start them afresh."""
    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.delete(*(REDIS_PREFIX + key for key in keys))
    finally:
        client.close()


def test_parallel_wrong_passwords_pass_the_check_exactly_the_limit(
    serve: Callable[..., Server], engine: Engine
) -> None:
    email = f"{uuid.uuid4().hex[:12]}@example.com"
    add_user(engine, email)
    server = serve(SIGNIN_ATTEMPTS="10")
    address = client_address()
    wrong = {"email": email, "password": "wrong horse"}
    forms = [WebForm(server.port, "/signin", address) for _ in range(20)]
    calls: list[Callable[[], int]] = [
        lambda: api(server.port, "POST", "/api/v1/tokens", wrong, address=address)
        for _ in range(30)
    ]
    calls += [lambda form=form: form.post(email=email, password="wrong horse") for form in forms]
    # The API and the web page share one allowance: exactly 10 checked, whichever door.
    assert all_at_once(calls) == {401: 10, 429: 40}
    # Then even the right password waits for the window.
    right = {"email": email, "password": PASSWORD}
    assert api(server.port, "POST", "/api/v1/tokens", right, address=address) == 429


def test_parallel_wrong_current_passwords_are_checked_exactly_the_limit(
    serve: Callable[..., Server], engine: Engine, counts_in: str
) -> None:
    user_id, token = add_user(engine, f"{uuid.uuid4().hex[:12]}@example.com")
    if counts_in == "redis":
        forget_in_redis(Limiter.key("password", str(user_id)))
    server = serve(SIGNIN_ATTEMPTS="10")
    address = client_address()
    body = {"current_password": "wrong horse", "new_password": "battery staple"}
    bearer = f"Bearer {token}"
    calls: list[Callable[[], int]] = [
        lambda: api(
            server.port,
            "POST",
            "/api/v1/me/password",
            body,
            address=address,
            Authorization=bearer,
        )
        for _ in range(40)
    ]
    assert all_at_once(calls) == {403: 10, 429: 30}
    if counts_in == "redis":
        forget_in_redis(Limiter.key("password", str(user_id)))


def test_parallel_sign_ups_make_exactly_the_allowance(
    serve: Callable[..., Server], engine: Engine
) -> None:
    server = serve(SIGNUPS_PER_HOUR="9")
    address = client_address()
    tag = uuid.uuid4().hex[:8]
    forms = [WebForm(server.port, "/signup", address) for _ in range(10)]
    calls: list[Callable[[], int]] = [
        lambda n=n: api(
            server.port,
            "POST",
            "/api/v1/users",
            {"email": f"api{n}-{tag}@example.com", "password": PASSWORD},
            address=address,
        )
        for n in range(20)
    ]
    calls += [
        lambda n=n, form=form: form.post(email=f"web{n}-{tag}@example.com", password=PASSWORD)
        for n, form in enumerate(forms)
    ]
    statuses = all_at_once(calls)
    assert statuses[429] == 21
    assert statuses[201] + statuses[302] == 9  # API accounts and web ones (a redirect)
    with engine.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(User)) == 9


def test_parallel_token_requests_make_exactly_the_allowance(
    serve: Callable[..., Server], engine: Engine, counts_in: str
) -> None:
    email = f"{uuid.uuid4().hex[:12]}@example.com"
    user_id, _token = add_user(engine, email)
    if counts_in == "redis":
        forget_in_redis(Limiter.key("token", str(user_id)))
    server = serve(TOKENS_PER_HOUR="5", SIGNIN_ATTEMPTS="100")
    address = client_address()
    right = {"email": email, "password": PASSWORD}
    calls: list[Callable[[], int]] = [
        lambda: api(server.port, "POST", "/api/v1/tokens", right, address=address)
        for _ in range(16)
    ]
    assert all_at_once(calls) == {201: 5, 429: 11}
    with engine.connect() as conn:
        made = conn.scalar(
            select(func.count()).select_from(ApiToken).where(ApiToken.user_id == user_id)
        )
    assert made == 1 + 5  # the one add_user made, and the allowance
    if counts_in == "redis":
        forget_in_redis(Limiter.key("token", str(user_id)))
