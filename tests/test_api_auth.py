from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import Engine, event, select

from flashcards import create_app
from flashcards.people import accounts
from flashcards.people.ratelimit import DatabaseBackend, Limiter, RateLimited, RedisBackend
from flashcards.storage.engine import transaction
from flashcards.storage.models import RateLimitCount

from . import factories as f
from .conftest import T0
from .web_helpers import csrf

REDIS_URL = "redis://127.0.0.1:6379/0"
PROBLEM = "application/problem+json"


@pytest.fixture(autouse=True)
def cheap_password_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    # The production cost (32 MiB, ~0.1 s a hash) is tested once in test_accounts.py.
    monkeypatch.setattr(accounts, "PASSWORD_METHOD", "scrypt:1024:8:1")


def add_user(engine: Engine, email: str = "ana@example.com") -> tuple[int, str]:
    with transaction(engine) as s:
        user = accounts.create_user(s, email, "correct horse", now=T0)
        return user.id, accounts.issue_token(s, user.id, now=T0)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def assert_problem(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == PROBLEM
    body: dict[str, Any] = response.get_json(force=True)
    assert body["status"] == status
    assert body["title"] and body["detail"]
    return body


def redis_available() -> bool:
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1)
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False
    finally:
        client.close()


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer"},
        {"Authorization": "Basic YW5hOnB3"},
        {"Authorization": "Bearer not-a-token"},
        {"Authorization": "Bearer " + "x" * 5000},
    ],
)
def test_missing_or_wrong_token_is_401_problem(
    client: FlaskClient, engine: Engine, headers: dict[str, str]
) -> None:
    add_user(engine)
    response = client.get("/api/v1/me", headers=headers)
    assert_problem(response, 401)
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


def test_sign_in_use_and_revoke_a_token(client: FlaskClient, engine: Engine) -> None:
    add_user(engine)
    response = client.post(
        "/api/v1/tokens", json={"email": "ANA@example.com", "password": "correct horse"}
    )
    assert response.status_code == 201
    token = response.get_json()["token"]
    assert client.get("/api/v1/me", headers=bearer(token)).status_code == 200
    assert client.delete("/api/v1/tokens/current", headers=bearer(token)).status_code == 204
    assert_problem(client.get("/api/v1/me", headers=bearer(token)), 401)
    assert_problem(client.delete("/api/v1/tokens/current", headers=bearer(token)), 401)


def test_wrong_credentials_are_401(client: FlaskClient, engine: Engine) -> None:
    add_user(engine)
    for body in (
        {"email": "ana@example.com", "password": "wrong horse"},
        {"email": "nobody@example.com", "password": "correct horse"},
    ):
        assert_problem(client.post("/api/v1/tokens", json=body), 401)


def selects_of(app: Flask, send: Callable[[], Any]) -> list[str]:
    """The SELECT statements `send` (a request) runs, as SQLite's statement trace saw them."""
    selects: list[str] = []

    def count(statement: str) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            selects.append(statement)

    # At the driver: the hot paths run their statements on the DBAPI connection directly.
    def trace(dbapi_connection: Any, *_args: Any) -> None:
        dbapi_connection.set_trace_callback(count)

    app_engine = app.extensions["flashcards.engine"]
    app_engine.dispose()  # no connection checked out before the listener
    event.listen(app_engine, "checkout", trace)
    try:
        send()
    finally:
        event.remove(app_engine, "checkout", trace)
        app_engine.dispose()
    return selects


def test_auth_is_one_query(app: Flask, client: FlaskClient, engine: Engine) -> None:
    if engine.dialect.name != "sqlite":
        pytest.skip("counted with SQLite's statement trace; the count is the same on PostgreSQL")
    _, token = add_user(engine)
    statuses: list[int] = []
    selects = selects_of(
        app, lambda: statuses.append(client.get("/api/v1/me", headers=bearer(token)).status_code)
    )
    # The token lookup and the body of /me.
    assert statuses == [200]
    assert len(selects) == 2, selects
    assert "api_tokens" in selects[0] and "users" not in selects[0]


def test_an_answer_finds_its_caller_in_its_one_read(
    app: Flask, client: FlaskClient, engine: Engine
) -> None:
    if engine.dialect.name != "sqlite":
        pytest.skip("counted with SQLite's statement trace; PostgreSQL's in test_answer_loads")
    user_id, token = add_user(engine)
    with transaction(engine) as s:
        deck = f.make_deck(s, "alpha", 1)
        f.subscribe(s, user_id, deck)
        card = f.card_ids(s, deck.id)[0]
    statuses: list[int] = []

    def send() -> None:
        body = {"card_id": card, "rating": "good", "review_id": str(uuid.uuid4())}
        statuses.append(
            client.post("/api/v1/reviews", json=body, headers=bearer(token)).status_code
        )

    selects = selects_of(app, send)
    assert statuses == [201]
    # The edge names the caller by their token; the answer's one read finds its owner.
    assert len(selects) == 1, selects
    assert "api_tokens" in selects[0] and "review_states" in selects[0]


@pytest.mark.parametrize(
    ("data", "content_type", "status"),
    [
        ("{bad json", "application/json", 400),
        ('{"email": NaN}', "application/json", 400),
        ("\xff\xfe garbage", "application/json", 400),
        ("[" * 100_000 + "]" * 100_000, "application/json", 400),
        ("[1, 2]", "application/json", 422),
        ('"text"', "application/json", 422),
        ("null", "application/json", 422),
        ("", "application/json", 400),
        ("email=a", "application/x-www-form-urlencoded", 415),
        ('{"email": "a@b.co"}', "text/plain", 415),
    ],
)
def test_malformed_bodies_are_4xx_problems(
    app: Flask, client: FlaskClient, data: str, content_type: str, status: int
) -> None:
    app.config["MAX_CONTENT_LENGTH"] = 1_000_000
    response = client.post("/api/v1/tokens", data=data, content_type=content_type)
    assert_problem(response, status)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"password": "correct horse"}, "email"),
        ({"email": "ana@example.com"}, "password"),
        ({"email": 1, "password": "correct horse"}, "email"),
        ({"email": "ana@example.com", "password": ["x"]}, "password"),
        ({"email": "ana@example.com", "password": "correct horse", "name": {}}, "name"),
        ({"email": "ana@example.com", "password": "correct horse", "admin": True}, "admin"),
    ],
)
def test_wrong_types_name_the_field(
    client: FlaskClient, engine: Engine, body: dict[str, Any], field: str
) -> None:
    add_user(engine)
    problem = assert_problem(client.post("/api/v1/tokens", json=body), 422)
    assert problem["field"] == field


def test_huge_body_is_413_problem(app: Flask, client: FlaskClient, engine: Engine) -> None:
    _, token = add_user(engine)
    limit = app.config["MAX_CONTENT_LENGTH"]
    huge = '{"display_name": "' + "x" * limit + '"}'
    assert_problem(
        client.patch(
            "/api/v1/me", data=huge, content_type="application/json", headers=bearer(token)
        ),
        413,
    )
    assert_problem(client.post("/api/v1/tokens", data=huge, content_type="application/json"), 413)


def test_unknown_api_urls_and_methods_are_problems(client: FlaskClient) -> None:
    assert_problem(client.get("/api/v1/no-such-thing"), 404)
    response = client.put("/api/v1/tokens")
    assert_problem(response, 405)
    assert "POST" in response.headers["Allow"]
    # Outside the API, Flask's own pages stay.
    assert client.get("/no-such-page").mimetype == "text/html"


def test_unexpected_errors_are_500_problems(
    engine: Engine, database_url: str, tmp_path: Path
) -> None:
    # An unmigrated database makes every query fail: the client gets a problem, not a page.
    app = create_app({"TESTING": True, "DATABASE_URL": f"sqlite:///{tmp_path / 'empty.sqlite3'}"})
    try:
        response = app.test_client().get("/api/v1/me", headers=bearer("whatever"))
        body = assert_problem(response, 500)
        assert "Traceback" not in body["detail"]
    finally:
        app.extensions["flashcards.engine"].dispose()


def failed_sign_ins(client: FlaskClient, email: str, times: int) -> list[int]:
    body = {"email": email, "password": "wrong horse"}
    return [client.post("/api/v1/tokens", json=body).status_code for _ in range(times)]


def test_sign_in_is_rate_limited(app: Flask, client: FlaskClient, engine: Engine) -> None:
    app.config["SIGNIN_ATTEMPTS_PER_15_MIN"] = 3
    add_user(engine)
    assert failed_sign_ins(client, "ana@example.com", 3) == [401, 401, 401]
    right = {"email": "ana@example.com", "password": "correct horse"}
    response = client.post("/api/v1/tokens", json=right)
    assert_problem(response, 429)
    assert 0 < int(response.headers["Retry-After"]) <= 15 * 60
    # Another address (email and client IP form the key) is not affected.
    assert failed_sign_ins(client, "bo@example.com", 1) == [401]
    other_ip = client.post("/api/v1/tokens", json=right, environ_base={"REMOTE_ADDR": "10.0.0.9"})
    assert other_ip.status_code == 201


def test_web_and_api_sign_ins_share_one_budget(
    app: Flask, client: FlaskClient, engine: Engine
) -> None:
    """Guessing through both doors is no faster than through one."""
    app.config["SIGNIN_ATTEMPTS_PER_15_MIN"] = 3
    add_user(engine)
    assert failed_sign_ins(client, "ana@example.com", 2) == [401, 401]

    def web_sign_in(password: str) -> int:
        form = {"csrf_token": csrf(client), "email": "ana@example.com", "password": password}
        return client.post("/signin", data=form).status_code

    assert web_sign_in("wrong horse") != 429
    right = {"email": "ana@example.com", "password": "correct horse"}
    assert_problem(client.post("/api/v1/tokens", json=right), 429)
    assert web_sign_in("correct horse") == 429


def test_success_resets_the_count(app: Flask, client: FlaskClient, engine: Engine) -> None:
    app.config["SIGNIN_ATTEMPTS_PER_15_MIN"] = 3
    add_user(engine)
    right = {"email": "ana@example.com", "password": "correct horse"}
    assert failed_sign_ins(client, "ana@example.com", 2) == [401, 401]
    assert client.post("/api/v1/tokens", json=right).status_code == 201
    assert failed_sign_ins(client, "ana@example.com", 3) == [401, 401, 401]
    assert client.post("/api/v1/tokens", json=right).status_code == 429


def test_sign_in_limit_is_shared_by_instances_without_redis(
    app: Flask, client: FlaskClient, engine: Engine, database_url: str
) -> None:
    # Two app instances, as two gunicorn workers or two machines: one allowance, not two.
    config = {"SIGNIN_ATTEMPTS_PER_15_MIN": 4}
    app.config.update(config)
    other = create_app({"TESTING": True, "DATABASE_URL": database_url, **config})
    try:
        add_user(engine)
        assert failed_sign_ins(client, "ana@example.com", 2) == [401, 401]
        assert failed_sign_ins(other.test_client(), "ana@example.com", 3) == [401, 401, 429]
        response = client.post(
            "/api/v1/tokens", json={"email": "ana@example.com", "password": "correct horse"}
        )
        assert_problem(response, 429)
    finally:
        other.extensions["flashcards.engine"].dispose()


@pytest.mark.skipif(not redis_available(), reason="Redis is not running on 127.0.0.1:6379")
@pytest.mark.xdist_group("redis")
def test_sign_in_limit_is_shared_through_redis(
    app: Flask, client: FlaskClient, engine: Engine, database_url: str
) -> None:
    email = f"{uuid.uuid4().hex}@example.com"
    config = {"REDIS_URL": REDIS_URL, "SIGNIN_ATTEMPTS_PER_15_MIN": 4}
    app.config.update(config)
    other = create_app({"TESTING": True, "DATABASE_URL": database_url, **config})
    try:
        add_user(engine, email)
        assert failed_sign_ins(client, email, 2) == [401, 401]
        # A second instance sees the first one's failures.
        assert failed_sign_ins(other.test_client(), email, 3) == [401, 401, 429]
        response = client.post("/api/v1/tokens", json={"email": email, "password": "correct horse"})
        assert_problem(response, 429)
        assert 0 < int(response.headers["Retry-After"]) <= 15 * 60
    finally:
        other.extensions["flashcards.engine"].dispose()
        for instance in (app, other):
            backend = instance.extensions["flashcards.limiters"]["signin"].backend
            assert isinstance(backend, RedisBackend)
            backend.close()


class FakeClock:
    def __init__(self) -> None:
        self.now = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def test_database_backend_window_expires_and_old_rows_go(engine: Engine) -> None:
    clock = FakeClock()
    backend = DatabaseBackend(engine, engine, clock)
    limiter = Limiter(backend, limit=2, window=60)
    key = Limiter.key("signin", "ana@example.com", "127.0.0.1")
    limiter.reserve(key)
    clock.now += timedelta(seconds=30)
    limiter.reserve(key)
    with pytest.raises(RateLimited) as info:
        limiter.reserve(key)
    assert info.value.retry_after == 30  # the window started at the first attempt
    assert backend.attempts(key) == (2, 30.0)  # a refusal takes no place
    clock.now += timedelta(seconds=30)
    limiter.reserve(key)  # window over: a new one, counted from 1
    assert backend.attempts(key) == (1, 60.0)
    other = Limiter.key("signin", "bo@example.com", "127.0.0.1")
    clock.now += timedelta(seconds=61)
    limiter.reserve(other)  # prunes the expired window of `key`
    with engine.connect() as conn:
        keys = conn.execute(select(RateLimitCount.key)).scalars().all()
    assert keys == [other]
    limiter.reset(other)
    assert backend.attempts(other) == (0, 0.0)


def test_database_backend_refunds_only_an_open_window(engine: Engine) -> None:
    clock = FakeClock()
    backend = DatabaseBackend(engine, engine, clock)
    limiter = Limiter(backend, limit=1, window=60)
    key = Limiter.key("test", "refund")
    limiter.refund(key)  # nothing to refund: no row, no error
    limiter.reserve(key)
    with pytest.raises(RateLimited):
        limiter.reserve(key)
    limiter.refund(key)
    assert backend.attempts(key) == (0, 60.0)
    limiter.refund(key)  # never below zero
    limiter.reserve(key)
    assert backend.attempts(key) == (1, 60.0)


@pytest.mark.skipif(not redis_available(), reason="Redis is not running on 127.0.0.1:6379")
@pytest.mark.xdist_group("redis")
def test_redis_backend_counts_refunds_and_resets() -> None:
    backend = RedisBackend.from_url(REDIS_URL)
    limiter = Limiter(backend, limit=2, window=60)
    key = Limiter.key("test", uuid.uuid4().hex)
    limiter.refund(key)  # nothing to refund: no key made (it would have no expiry)
    assert backend.attempts(key) == (0, 0.0)
    limiter.reserve(key)
    limiter.reserve(key)
    with pytest.raises(RateLimited) as info:
        limiter.reserve(key)
    assert 55 <= info.value.retry_after <= 60
    assert backend.attempts(key)[0] == 2  # a refusal takes no place
    limiter.refund(key)
    limiter.reserve(key)
    with pytest.raises(RateLimited):
        limiter.reserve(key)
    limiter.reset(key)
    assert backend.attempts(key) == (0, 0.0)
    limiter.reserve(key)
    assert backend.attempts(key)[0] == 1
    limiter.reset(key)
    backend.close()


def test_unreachable_redis_fails_open() -> None:
    limiter = Limiter(RedisBackend.from_url("redis://127.0.0.1:1/0"), limit=1, window=60)
    key = Limiter.key("test", "x")
    limiter.reserve(key)
    limiter.reserve(key)  # logged, not raised: sign-in keeps working without Redis
    limiter.refund(key)
    limiter.reset(key)
