"""Shared fixtures: every database test runs on a SQLite file and, when configured, PostgreSQL.

PostgreSQL runs use `FLASHCARDS_TEST_DATABASE_URL`; each test gets a schema of its own, so
tests never see each other's rows. With `FLASHCARDS_REQUIRE_POSTGRES=1` (CI) a missing or
unreachable PostgreSQL fails the run instead of skipping.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from flashcards import create_app, migrate
from flashcards.db import make_engine, transaction
from flashcards.decks.deckfile import load_decks
from flashcards.decks.sync import sync_deck

REPO = Path(__file__).resolve().parent.parent
DECKS = REPO / "decks"
SEEDS = DECKS / "eks-model-training" / "source"
PG_URL = os.environ.get("FLASHCARDS_TEST_DATABASE_URL")
REQUIRE_PG = os.environ.get("FLASHCARDS_REQUIRE_POSTGRES") == "1"
T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def postgres_schema_url(base: str, schema: str) -> str:
    url = make_url(base)
    return url.update_query_dict({"options": f"-csearch_path={schema}"}).render_as_string(
        hide_password=False
    )


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'test.sqlite3'}"
        return
    if not PG_URL:
        if REQUIRE_PG:
            pytest.fail("FLASHCARDS_REQUIRE_POSTGRES=1 but FLASHCARDS_TEST_DATABASE_URL is unset")
        pytest.skip("PostgreSQL run skipped: set FLASHCARDS_TEST_DATABASE_URL to enable it")
    schema = f"t_{uuid.uuid4().hex[:16]}"
    admin = create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    except Exception as exc:
        admin.dispose()
        if REQUIRE_PG:
            raise
        pytest.skip(f"PostgreSQL unreachable: {exc}")
    try:
        yield postgres_schema_url(PG_URL, schema)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    eng = make_engine(database_url)
    migrate.upgrade(eng)
    yield eng
    eng.dispose()


@pytest.fixture
def session(engine: Engine) -> Iterator[Session]:
    with Session(engine, expire_on_commit=False) as s:
        yield s


def load_shipped_decks(engine: Engine, now: datetime = T0) -> None:
    with transaction(engine) as s:
        for source in load_decks(DECKS):
            sync_deck(s, source, now=now)


@pytest.fixture
def loaded_engine(engine: Engine) -> Engine:
    load_shipped_decks(engine)
    return engine


@pytest.fixture
def app(database_url: str, engine: Engine, tmp_path: Path) -> Iterator[Flask]:
    config: dict[str, Any] = {
        "TESTING": True,
        "DATABASE_URL": database_url,
        "SECRET_KEY": "test-secret",
    }
    application = create_app(config)
    yield application
    application.extensions["flashcards.engine"].dispose()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture
def cli(database_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> CliRunner:
    """A click runner whose commands use the test database."""
    monkeypatch.setenv("FLASHCARDS_DATABASE_URL", database_url)
    monkeypatch.setenv("FLASHCARDS_SECRET_KEY", "test-secret")
    return CliRunner()
