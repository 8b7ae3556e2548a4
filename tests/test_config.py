"""Settings from the environment, the secret key, and the SQLite connection pragmas."""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from flask import Flask
from sqlalchemy import Engine, insert, text
from sqlalchemy.exc import IntegrityError

from flashcards import create_app
from flashcards.cli import main
from flashcards.config import load_secret_key, settings_from_env
from flashcards.errors import InvalidInput
from flashcards.hot_sql.rawsql import DirectConnection, Statement
from flashcards.storage.engine import transaction
from flashcards.storage.models import Card, Deck
from flashcards.storage.sqlite_writers import (
    CHECKPOINT_EVERY,
    SQLITE_AUTOCHECKPOINT_PAGES,
    checkpointers,
    writer_gate_path,
)

from .conftest import T0


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in list(os.environ):
        if name.startswith("FLASHCARDS_"):
            monkeypatch.delenv(name)
    return monkeypatch


@pytest.fixture
def made_apps() -> Iterator[list[Flask]]:
    """Apps a test creates; their engines are disposed afterwards."""
    apps: list[Flask] = []
    yield apps
    for application in apps:
        application.extensions["flashcards.engine"].dispose()


def test_database_url_from_the_environment(
    database_url: str, clean_env: pytest.MonkeyPatch, made_apps: list[Flask]
) -> None:
    clean_env.setenv("FLASHCARDS_DATABASE_URL", database_url)
    clean_env.setenv("FLASHCARDS_SECRET_KEY", "from-env")
    app = create_app()
    made_apps.append(app)
    assert app.config["DATABASE_URL"] == database_url
    engine: Engine = app.extensions["flashcards.engine"]
    assert engine.url.render_as_string(hide_password=False) == database_url
    with engine.connect() as conn:
        assert conn.execute(text("SELECT 1")).scalar() == 1


def test_default_database_is_sqlite_in_the_instance_folder(
    clean_env: pytest.MonkeyPatch, made_apps: list[Flask]
) -> None:
    app = create_app({"SECRET_KEY": "given"})
    made_apps.append(app)
    expected = Path(app.instance_path) / "flashcards.sqlite3"
    assert app.config["DATABASE_URL"] == f"sqlite:///{expected}"
    assert app.extensions["flashcards.engine"].url.database == str(expected)


def test_settings_defaults_and_parsing(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    settings = settings_from_env(tmp_path)
    assert settings["SIGNUP_OPEN"] is True
    assert settings["MAX_CONTENT_LENGTH"] == 1024 * 1024
    assert settings["SQLITE_SYNCHRONOUS"] == "NORMAL"
    clean_env.setenv("FLASHCARDS_SIGNUP_OPEN", "No")
    clean_env.setenv("FLASHCARDS_MAX_BODY_BYTES", "2048")
    clean_env.setenv("FLASHCARDS_SQLITE_SYNCHRONOUS", "full")
    settings = settings_from_env(tmp_path)
    assert settings["SIGNUP_OPEN"] is False
    assert settings["MAX_CONTENT_LENGTH"] == 2048
    assert settings["SQLITE_SYNCHRONOUS"] == "FULL"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("FLASHCARDS_SIGNUP_OPEN", "ture"),
        ("FLASHCARDS_MAX_BODY_BYTES", "1MB"),
        ("FLASHCARDS_MAX_BODY_BYTES", "-1"),
        ("FLASHCARDS_SQLITE_SYNCHRONOUS", "NORMAL; DROP TABLE users"),
    ],
)
def test_bad_settings_are_named(
    clean_env: pytest.MonkeyPatch, tmp_path: Path, name: str, value: str
) -> None:
    clean_env.setenv(name, value)
    with pytest.raises(InvalidInput, match=name):
        settings_from_env(tmp_path)


def test_a_bad_setting_is_a_one_line_cli_error(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("FLASHCARDS_SECRET_KEY", "x")
    clean_env.setenv("FLASHCARDS_MAX_BODY_BYTES", "lots")
    result = CliRunner().invoke(main, ["decks", "list"])
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert "Error: FLASHCARDS_MAX_BODY_BYTES must be a whole number, not 'lots'" in result.output


def test_generated_secret_key_is_private_and_reused(
    clean_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    instance = tmp_path / "instance"
    key = load_secret_key(instance)
    key_file = instance / "secret_key"
    assert len(key) == 64 and int(key, 16) >= 0
    assert key_file.read_text() == key
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert load_secret_key(instance) == key
    assert [p.name for p in instance.iterdir()] == ["secret_key"]  # no temporary files left
    assert load_secret_key(tmp_path / "other") != key


def test_secret_key_from_the_environment_wins(
    clean_env: pytest.MonkeyPatch, tmp_path: Path, made_apps: list[Flask]
) -> None:
    stored = load_secret_key(tmp_path)
    clean_env.setenv("FLASHCARDS_SECRET_KEY", "from-env")
    assert load_secret_key(tmp_path) == "from-env"
    assert (tmp_path / "secret_key").read_text() == stored
    app = create_app({"DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"})
    made_apps.append(app)
    assert app.secret_key == "from-env"


def test_loose_or_empty_key_file_is_repaired(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    key_file = tmp_path / "secret_key"
    key_file.write_text("kept-key\n")
    key_file.chmod(0o644)
    assert load_secret_key(tmp_path) == "kept-key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600

    key_file.write_text("")
    key = load_secret_key(tmp_path)
    assert len(key) == 64
    assert key_file.read_text() == key
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600


def test_sqlite_pragmas_on_every_connection(
    app: Flask, database_url: str, clean_env: pytest.MonkeyPatch, made_apps: list[Flask]
) -> None:
    engine: Engine = app.extensions["flashcards.engine"]
    if engine.dialect.name != "sqlite":
        pytest.skip("SQLite pragmas")
    for _ in range(2):  # NullPool: each connect is a new connection
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30000
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL

    clean_env.setenv("FLASHCARDS_SQLITE_SYNCHRONOUS", "FULL")
    full = create_app({"DATABASE_URL": database_url, "SECRET_KEY": "x"})
    made_apps.append(full)
    with full.extensions["flashcards.engine"].connect() as conn:
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2


def test_foreign_keys_are_enforced(app: Flask, engine: Engine) -> None:
    app_engine: Engine = app.extensions["flashcards.engine"]
    with pytest.raises(IntegrityError), transaction(app_engine) as session:
        session.add(Card(deck_id=12345, key="orphan", position=0))
        session.flush()


def test_sqlite_checkpoints_after_the_writer_gate(engine: Engine) -> None:
    """Every CHECKPOINT_EVERY write transactions, the WAL is copied into the database file,
    by a thread of its own.

    Read with `immutable=1`, SQLite ignores the WAL: what it sees is the database file alone.
    """
    if engine.dialect.name != "sqlite":
        pytest.skip("SQLite's write-ahead log")
    database = engine.url.database
    assert database is not None
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar() == (
            SQLITE_AUTOCHECKPOINT_PAGES
        )
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    gate = writer_gate_path(engine.url)
    assert gate is not None
    checkpointers.pop(gate, None)  # count from zero

    def in_database_file() -> int:
        file = sqlite3.connect(f"file:{database}?immutable=1", uri=True)
        try:
            return int(file.execute("SELECT count(*) FROM decks").fetchone()[0])
        finally:
            file.close()

    before = in_database_file()
    direct = DirectConnection(engine)
    try:
        for i in range(CHECKPOINT_EVERY - 1):
            if i % 2:  # both ways of writing count
                with transaction(engine) as session:
                    session.add(Deck(slug=f"d{i}", default_locale="en", created_at=T0))
            else:
                with direct.write():
                    direct.execute(
                        Statement(insert(Deck)),
                        {
                            "slug": f"d{i}",
                            "default_locale": "en",
                            "created_at": T0,
                            "updated_at": T0,
                        },
                    )
        assert in_database_file() == before  # still only in the WAL
        with transaction(engine) as session:
            session.add(Deck(slug="last", default_locale="en", created_at=T0))
    finally:
        direct.close()
    # On the checkpoint thread: wait for it, a few seconds at most.
    deadline = time.monotonic() + 10
    while checkpointers[gate].done == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert in_database_file() == before + CHECKPOINT_EVERY
