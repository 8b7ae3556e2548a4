"""The database out of reach: 503 with Retry-After (problem+json on the API, the localized
page on the web) instead of a 500, the health check saying so, and service again as soon as
the database is back, on fresh connections."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError

from flashcards import create_app
from flashcards.storage.engine import database_unavailable

from .conftest import PG_URL
from .web_helpers import csrf, sign_up

NOWHERE = "postgresql+psycopg://flashcards@127.0.0.1:1/flashcards"  # nothing listens on port 1
REVIEW = {"card_id": 1, "rating": "good", "review_id": "0b5a2f6e-1111-4aaa-8bbb-123456789abc"}


def assert_503_problem(response: object) -> None:
    r = response  # a TestResponse
    assert r.status_code == 503, r.get_data(as_text=True)  # type: ignore[attr-defined]
    assert r.mimetype == "application/problem+json"  # type: ignore[attr-defined]
    assert r.headers["Retry-After"] == "5"  # type: ignore[attr-defined]
    assert r.get_json()["title"] == "Service unavailable"  # type: ignore[attr-defined]


def test_a_database_out_of_reach_is_503_on_the_api_and_the_web() -> None:
    app = create_app({"TESTING": True, "DATABASE_URL": NOWHERE, "SECRET_KEY": "test-secret"})
    try:
        client = app.test_client()
        assert_503_problem(client.get("/api/v1/health"))
        bearer = {"Authorization": "Bearer " + "x" * 43}
        assert_503_problem(client.get("/api/v1/study/next", headers=bearer))
        assert_503_problem(client.post("/api/v1/reviews", json=REVIEW, headers=bearer))
        # A page that needs no database still works; one that does says why, in Spanish.
        client.environ_base["HTTP_ACCEPT_LANGUAGE"] = "es"
        form = {"csrf_token": csrf(client, "/signin"), "email": "a@example.com", "password": "x"}
        r = client.post("/signin", data=form)
        assert r.status_code == 503 and r.headers["Retry-After"] == "5"
        page = r.get_data(as_text=True)
        assert "Servicio no disponible temporalmente" in page and 'lang="es"' in page
    finally:
        app.extensions["flashcards.engine"].dispose()


@pytest.fixture
def restartable_app(database_url: str, engine: Engine) -> Iterator[tuple[Flask, str]]:
    """The app on PostgreSQL with its connections named, so that a test can drop them all."""
    if engine.dialect.name != "postgresql":
        pytest.skip("a database server that restarts: PostgreSQL")
    name = f"flashcards-{uuid.uuid4().hex[:12]}"
    url = make_url(database_url).update_query_dict({"application_name": name})
    app = create_app(
        {
            "TESTING": True,
            "DATABASE_URL": url.render_as_string(hide_password=False),
            "SECRET_KEY": "test-secret",
        }
    )
    yield app, name
    app.extensions["flashcards.engine"].dispose()


def drop_connections(application_name: str) -> int:
    """What a database restart does to an app: every connection it holds is gone."""
    assert PG_URL
    admin = create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            return len(
                conn.execute(
                    text(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                        " WHERE application_name = :name"
                    ),
                    {"name": application_name},
                ).all()
            )
    finally:
        admin.dispose()


def token_for(client: FlaskClient, email: str) -> dict[str, str]:
    r = client.post("/api/v1/tokens", json={"email": email, "password": "correct horse battery"})
    assert r.status_code == 201
    return {"Authorization": f"Bearer {r.get_json()['token']}"}


def test_after_a_database_restart_one_request_per_connection_is_503_then_all_is_well(
    restartable_app: tuple[Flask, str],
) -> None:
    app, name = restartable_app
    browser, api = app.test_client(), app.test_client()
    sign_up(browser, "ria@example.com", language="ko")
    bearer = token_for(api, "ria@example.com")
    assert api.get("/api/v1/health").get_json() == {"status": "ok"}
    assert browser.get("/").status_code == 200

    assert drop_connections(name) >= 2  # the API's kept connection and the pool's
    # As after a database restart: the first request finds its connection gone and is
    # answered 503 with Retry-After; the pool is renewed, so nothing after it fails.
    assert_503_problem(api.get("/api/v1/study/next", headers=bearer))
    assert api.get("/api/v1/study/next", headers=bearer).status_code in (200, 204)
    assert api.get("/api/v1/health").status_code == 200
    page = browser.get("/")
    assert page.status_code == 200  # signed in all along: the outage signed nobody out
    assert 'action="/signout"' in page.get_data(as_text=True)

    # The same through the pages first: their 503 is a page in the person's language.
    assert drop_connections(name) >= 1
    r = browser.get("/")
    assert r.status_code == 503 and r.headers["Retry-After"] == "5"
    assert "잠시 서비스를 이용할 수 없습니다" in r.get_data(as_text=True)
    assert browser.get("/").status_code == 200


def test_which_database_errors_are_worth_a_retry(tmp_path: Path) -> None:
    path = tmp_path / "locked.sqlite3"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t (x INTEGER)")
    waiting = create_engine(f"sqlite:///{path}", connect_args={"timeout": 0})
    nowhere = create_engine(NOWHERE)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        with pytest.raises(OperationalError) as locked, waiting.connect() as conn:
            conn.execute(text("SELECT x FROM t"))
        assert database_unavailable(locked.value)  # another writer past the timeout
        holder.execute("ROLLBACK")
        with pytest.raises(OperationalError) as missing, waiting.connect() as conn:
            conn.execute(text("SELECT x FROM no_such_table"))
        assert not database_unavailable(missing.value)  # a bug or a missed migration: a 500
        with pytest.raises(OperationalError) as refused, nowhere.connect():
            pass
        assert database_unavailable(refused.value)
        assert not database_unavailable(ValueError("not a database error"))
    finally:
        holder.close()
        waiting.dispose()
        nowhere.dispose()
