"""Shared fixtures: every database test runs on a SQLite file and, when configured, PostgreSQL.

The migrations run once per run and kind of database; each test that uses `engine` gets a
clone of that database at head: a copy of the migrated SQLite file, or on PostgreSQL a schema
of its own in which the SQL of that one migration run is replayed. A test that asks for
`database_url` alone gets an empty database, for tests of migrating itself (`db upgrade`).

PostgreSQL runs use `FLASHCARDS_TEST_DATABASE_URL`; each test gets a schema of its own, so
tests never see each other's rows. A schema a test leaves at head (same tables, columns,
indexes and constraints) is emptied back to head's rows and given to a later test, which is
far cheaper than replaying the migrations; any other schema is dropped. With
`FLASHCARDS_REQUIRE_POSTGRES=1` (CI) a missing or unreachable PostgreSQL fails the run instead
of skipping.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import time
import uuid
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from flashcards import create_app
from flashcards.decks.deckfile import load_decks
from flashcards.decks.sync import sync_deck
from flashcards.storage import migrate
from flashcards.storage.engine import make_engine, transaction

REPO = Path(__file__).resolve().parent.parent
DECKS = REPO / "decks"
SEEDS = DECKS / "eks-model-training" / "source"
PG_URL = os.environ.get("FLASHCARDS_TEST_DATABASE_URL")
REQUIRE_PG = os.environ.get("FLASHCARDS_REQUIRE_POSTGRES") == "1"
T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
# Schemas this conftest makes are named "<prefix>_<unix time>_<random>", so that a later run
# can tell a crashed run's leftovers (older than this) from a run going on beside it.
LEFTOVER_SCHEMA = re.compile(r"(?:t|flashcards_tpl)_(\d+)_[0-9a-f]{12}")
LEFTOVER_AFTER_SECONDS = 24 * 3600


def postgres_schema_url(base: str, schema: str) -> str:
    url = make_url(base)
    return url.update_query_dict({"options": f"-csearch_path={schema}"}).render_as_string(
        hide_password=False
    )


def new_schema_name(prefix: str) -> str:
    return f"{prefix}_{int(time.time())}_{uuid.uuid4().hex[:12]}"


class Databases:
    """Makes the tests' databases: empty, or at head as a clone of one real migration run.

    Each kind of database is migrated once, on first use. On SQLite the migrated file is
    copied. On PostgreSQL each test has a schema of its own, and the SQL the one migration
    run sent is replayed in it: a database per test (`CREATE DATABASE ... TEMPLATE`) would
    copy the whole catalog through the WAL and wait for a checkpoint on each drop, slower
    than migrating; the replay is a few times faster than migrating.
    """

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.admin: Engine | None = None
        self.templates: list[str] = []  # one, unless migrating failed
        self._sqlite_head: Path | None = None
        self._postgres_head: list[tuple[str, Any]] | None = None
        self._head_catalog: list[tuple[Any, ...]] | None = None
        self._reset_sql: str | None = None
        self.emptied: list[str] = []  # schemas at head with head's rows, ready for a test

    def sqlite(self, path: Path, *, migrated: bool) -> str:
        if migrated:
            shutil.copyfile(self.sqlite_head(), path)
        return f"sqlite:///{path}"

    def sqlite_head(self) -> Path:
        if self._sqlite_head is None:
            path = self.tmp / "head.sqlite3"
            eng = make_engine(f"sqlite:///{path}")
            migrate.upgrade(eng)
            eng.dispose()
            # A copy of the file alone must be the whole database: what the WAL holds goes
            # into the file first, and nothing may be left beside it.
            with closing(sqlite3.connect(path)) as conn:
                busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            wal = Path(f"{path}-wal")
            if busy or (wal.exists() and wal.stat().st_size):
                raise RuntimeError(f"{path}: the WAL could not be checkpointed into the file")
            self._sqlite_head = path
        return self._sqlite_head

    def postgres_admin(self) -> Engine:
        """The engine for `FLASHCARDS_TEST_DATABASE_URL`; OperationalError if unreachable."""
        if self.admin is None:
            assert PG_URL is not None
            admin = create_engine(PG_URL)
            try:
                drop_leftover_schemas(admin)
            except OperationalError:
                admin.dispose()
                raise
            self.admin = admin
        return self.admin

    def postgresql(self, *, migrated: bool) -> str:
        """A new schema, empty or at head; its name."""
        if migrated and self.emptied:
            return self.emptied.pop()
        head = self.postgres_head() if migrated else []
        schema = new_schema_name("t")
        with self.postgres_admin().begin() as conn:
            conn.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
            conn.exec_driver_sql(f'SET LOCAL search_path TO "{schema}"')
            for statement, parameters in head:
                conn.exec_driver_sql(statement, parameters)
        return schema

    def postgres_head(self) -> list[tuple[str, Any]]:
        """What migrating an empty schema sends, in order, with its parameters."""
        if self._postgres_head is None:
            assert PG_URL is not None
            template = new_schema_name("flashcards_tpl")
            with self.postgres_admin().begin() as conn:
                conn.exec_driver_sql(f'CREATE SCHEMA "{template}"')
            self.templates.append(template)
            sent: list[tuple[str, Any]] = []

            def record(
                _conn: Connection,
                _cursor: Any,
                statement: str,
                parameters: Any,
                _context: Any,
                _executemany: bool,
            ) -> None:
                sent.append((statement, parameters))

            eng = make_engine(postgres_schema_url(PG_URL, template))
            event.listen(eng, "before_cursor_execute", record)
            try:
                migrate.upgrade(eng)
            finally:
                eng.dispose()
            # The replay relies on the search path alone choosing the schema.
            if template in repr(sent):
                raise RuntimeError(f"the migrations named their schema {template}")
            self._postgres_head = sent
        return self._postgres_head

    def drop(self, schema: str) -> None:
        with self.postgres_admin().begin() as conn:
            conn.exec_driver_sql(f'DROP SCHEMA "{schema}" CASCADE')

    def release(self, schema: str) -> None:
        """Keeps a schema a test is done with for the next test if its catalog is still head's,
        emptied back to head's rows; drops it otherwise, or if a connection still holds a lock
        on it."""
        if self.templates and self._postgres_head is not None:
            try:
                with self.postgres_admin().begin() as conn:
                    if catalog(conn, schema) == self.head_catalog():
                        conn.exec_driver_sql("SET LOCAL lock_timeout = '2s'")
                        conn.exec_driver_sql(self.reset_sql().replace(SCHEMA_MARK, schema))
                        self.emptied.append(schema)
                        return
            except OperationalError:
                pass  # a lock held by what the test left running: dropping waits it out
        self.drop(schema)

    def head_catalog(self) -> list[tuple[Any, ...]]:
        if self._head_catalog is None:
            with self.postgres_admin().connect() as conn:
                self._head_catalog = catalog(conn, self.templates[-1])
        return self._head_catalog

    def reset_sql(self) -> str:
        """One round trip that gives a schema at head the template's rows and sequences back.

        Tables are emptied children first, so each DELETE's foreign-key checks find nothing;
        DELETE, unlike TRUNCATE, costs nothing on the few rows a test writes.
        """
        if self._reset_sql is None:
            template = self.templates[-1]
            with self.postgres_admin().connect() as conn:
                tables = (
                    conn.exec_driver_sql(
                        "SELECT c.relname FROM pg_class c"
                        " JOIN pg_namespace n ON n.oid = c.relnamespace"
                        " WHERE n.nspname = %(s)s AND c.relkind = 'r'",
                        {"s": template},
                    )
                    .scalars()
                    .all()
                )
                linked = conn.exec_driver_sql(
                    "SELECT child.relname, parent.relname FROM pg_constraint f"
                    " JOIN pg_class child ON child.oid = f.conrelid"
                    " JOIN pg_class parent ON parent.oid = f.confrelid"
                    " JOIN pg_namespace n ON n.oid = child.relnamespace"
                    " WHERE f.contype = 'f' AND n.nspname = %(s)s",
                    {"s": template},
                ).all()
                # A table's references to itself need no order.
                references = [(child, parent) for child, parent in linked if child != parent]
                filled = [
                    table
                    for table in tables
                    if conn.exec_driver_sql(
                        f'SELECT EXISTS (SELECT FROM "{template}"."{table}")'
                    ).scalar_one()
                ]
                sequences = (
                    conn.exec_driver_sql(
                        "SELECT sequencename FROM pg_sequences WHERE schemaname = %(s)s",
                        {"s": template},
                    )
                    .scalars()
                    .all()
                )
            statements = [
                f'DELETE FROM "{SCHEMA_MARK}"."{table}"'
                for table in children_first(tables, references)
            ]
            statements += [
                f'INSERT INTO "{SCHEMA_MARK}"."{table}" SELECT * FROM "{template}"."{table}"'
                for table in children_first(filled, references)[::-1]
            ]
            statements += [
                f'SELECT setval(\'"{SCHEMA_MARK}"."{name}"\', last_value, is_called)'
                f' FROM "{template}"."{name}"'
                for name in sequences
            ]
            self._reset_sql = ";\n".join(statements)
        return self._reset_sql

    def close(self) -> None:
        if self.admin is None:
            return
        for schema in [*self.emptied, *self.templates]:
            self.drop(schema)
        self.admin.dispose()


SCHEMA_MARK = "@schema@"


def catalog(conn: Connection, schema: str) -> list[tuple[Any, ...]]:
    """What a schema holds, with its own name taken out: tables and their columns, indexes,
    constraints, sequences, views, functions and triggers."""
    rows = conn.exec_driver_sql(
        "SELECT 'column', table_name, column_name || ' ' || data_type || ' '"
        " || coalesce(column_default, '') || ' ' || is_nullable"
        " FROM information_schema.columns WHERE table_schema = %(s)s"
        " UNION ALL SELECT 'index', indexname, indexdef FROM pg_indexes WHERE schemaname = %(s)s"
        " UNION ALL SELECT 'constraint', c.conname, pg_get_constraintdef(c.oid)"
        " FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace"
        " WHERE n.nspname = %(s)s"
        " UNION ALL SELECT 'relation', c.relname, c.relkind::text"
        " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %(s)s"
        " UNION ALL SELECT 'function', p.proname, pg_get_function_identity_arguments(p.oid)"
        " FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = %(s)s"
        " UNION ALL SELECT 'trigger', t.tgname, c.relname FROM pg_trigger t"
        " JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = %(s)s AND NOT t.tgisinternal"
        " ORDER BY 1, 2, 3",
        {"s": schema},
    ).all()
    return [tuple(str(value).replace(schema, SCHEMA_MARK) for value in row) for row in rows]


def children_first(tables: list[str], references: list[tuple[str, str]]) -> list[str]:
    """The tables ordered so that each comes before every table it references."""
    ordered: list[str] = []
    remaining = sorted(tables)
    while remaining:
        # A table is ready once no remaining table references it.
        ready = [t for t in remaining if not any(p == t and c in remaining for c, p in references)]
        if not ready:
            raise RuntimeError(f"foreign keys form a cycle among {remaining}")
        ordered += ready
        remaining = [t for t in remaining if t not in ready]
    return ordered


def drop_leftover_schemas(admin: Engine) -> None:
    """Drops the schemas of runs that ended without dropping them (killed, crashed)."""
    with admin.begin() as conn:
        names = conn.exec_driver_sql("SELECT nspname FROM pg_namespace").scalars().all()
        for name in names:
            match = LEFTOVER_SCHEMA.fullmatch(name)
            if match and int(match[1]) < time.time() - LEFTOVER_AFTER_SECONDS:
                conn.exec_driver_sql(f'DROP SCHEMA "{name}" CASCADE')


@pytest.fixture(scope="session")
def databases(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Databases]:
    made = Databases(tmp_path_factory.mktemp("databases"))
    yield made
    made.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(
    request: pytest.FixtureRequest, tmp_path: Path, databases: Databases
) -> Iterator[str]:
    """This test's own database: at head if the test uses `engine` (directly or through
    `session`, `app`, `client`...), else empty, for tests that migrate it themselves."""
    migrated = "engine" in request.fixturenames
    if request.param == "sqlite":
        yield databases.sqlite(tmp_path / "test.sqlite3", migrated=migrated)
        return
    if not PG_URL:
        if REQUIRE_PG:
            pytest.fail("FLASHCARDS_REQUIRE_POSTGRES=1 but FLASHCARDS_TEST_DATABASE_URL is unset")
        pytest.skip("PostgreSQL run skipped: set FLASHCARDS_TEST_DATABASE_URL to enable it")
    try:
        databases.postgres_admin()
    except OperationalError as exc:
        if REQUIRE_PG:
            raise
        pytest.skip(f"PostgreSQL unreachable: {exc}")
    schema = databases.postgresql(migrated=migrated)
    try:
        yield postgres_schema_url(PG_URL, schema)
    finally:
        if migrated:
            databases.release(schema)
        else:
            databases.drop(schema)


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    """An engine on this test's database, which is at head (see `database_url`)."""
    eng = make_engine(database_url)
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
