"""Engine, session factory and column types. No Flask here: the CLI and the tests use it too."""

from __future__ import annotations

import fcntl
import logging
import os
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, ClassVar, TypeVar

from sqlalchemy import DateTime, Dialect, Engine, MetaData, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.orm import DeclarativeBase, Session
from sqlalchemy.types import TypeDecorator

from .errors import TooMuchContention

T = TypeVar("T")
# Ids are INTEGER columns (32-bit on PostgreSQL): a larger id names nothing, and sending it
# to the database fails with "integer out of range" instead of finding no row.
MAX_ID = 2**31 - 1
# SQLite checkpoints (see leave_writer_gate): ours every this many write transactions of a
# process, SQLite's own only when the WAL reaches this many pages. Small and often: while a
# checkpoint syncs the database file, answers wait, longer the more it copies (fewer
# checkpoints raised the answers' p99 latency; many more cost throughput).
CHECKPOINT_EVERY = 20
SQLITE_AUTOCHECKPOINT_PAGES = 10_000
logger = logging.getLogger(__name__)
_checkpointers: dict[str, Checkpointer] = {}  # by writer gate, one per database file

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> datetime:
    return datetime.now(UTC)


def _as_utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        raise ValueError("naive datetime given where an aware UTC datetime is required")
    return value.astimezone(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes in Python on every database.

    SQLite keeps no offset, so values are stored as naive UTC there and made aware again on
    the way out; PostgreSQL stores `timestamptz`.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        value = _as_utc(value)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def bind_processor(self, dialect: Dialect) -> Callable[[Any], Any] | None:
        if dialect.name != "sqlite":
            if self.impl_instance.dialect_impl(dialect).bind_processor(dialect) is not None:
                return super().bind_processor(dialect)

            # The driver takes aware datetimes as they are: one call instead of
            # TypeDecorator's three per value (a hot-path answer binds eight).
            def aware(value: datetime | None) -> datetime | None:
                return None if value is None else _as_utc(value)

            return aware

        # The text SQLAlchemy's SQLite DATETIME writes ("2026-11-30 01:46:22.434111"), in one
        # step instead of two: a hot-path answer binds eight of these.
        def process(value: datetime | None) -> str | None:
            if value is None:
                return None
            return _as_utc(value).replace(tzinfo=None).isoformat(" ", "microseconds")

        return process

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map: ClassVar[dict[Any, Any]] = {datetime: UTCDateTime}


def is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


# SQLite's result codes that say "not now" (another writer past the timeout, the file out of
# reach or the disk full), unlike SQLITE_ERROR (a missing table, bad SQL): a bug, not a wait.
_SQLITE_UNAVAILABLE = (
    "SQLITE_BUSY",
    "SQLITE_LOCKED",
    "SQLITE_CANTOPEN",
    "SQLITE_IOERR",
    "SQLITE_FULL",
)


def database_unavailable(exc: BaseException) -> bool:
    """Whether `exc` says the database is out of reach or too busy right now (refused or
    dropped connection, a restart, SQLite's lock held past the timeout): worth a retry."""
    if not isinstance(exc, DBAPIError):
        return False
    if exc.connection_invalidated:
        return True
    if not isinstance(exc, OperationalError):
        return False
    # psycopg's OperationalErrors are all of this kind; a missing table is a ProgrammingError.
    name = getattr(exc.orig, "sqlite_errorname", None)
    return name is None or name.startswith(_SQLITE_UNAVAILABLE)


def make_engine(url: str, *, sqlite_synchronous: str = "NORMAL", **kwargs: Any) -> Engine:
    if not is_sqlite(url):
        # Recycling instead of a ping before every checkout: the ping is a round trip on
        # every request. After a database restart the first request of a process finds its
        # connection gone: it gets a 503 with Retry-After, and the whole pool is renewed.
        kwargs.setdefault("pool_recycle", 1800)
        # psycopg prepares statements of its own after five runs, and once it has some, a
        # ROLLBACK makes it send DEALLOCATE ALL, which would also drop the statements `libpq`
        # prepared for the hot paths. Those are the ones worth preparing; the rest is not hot.
        kwargs["connect_args"] = {"prepare_threshold": None, **kwargs.get("connect_args", {})}
        return create_engine(url, **kwargs)

    # Pooled: closing the last connection to a WAL database checkpoints and removes the WAL,
    # so a connection per request would pay for that (and the pragmas) every time. Idle
    # pooled connections hold no lock: pysqlite's own transaction handling is off.
    engine = create_engine(url, connect_args={"timeout": 30}, **kwargs)
    gate = writer_gate_path(url)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, record: Any) -> None:
        # Kept on the connection for the direct executor (rawsql), which has no engine events.
        record.info["writer_gate"] = gate
        # Take transaction control from pysqlite so that BEGIN is ours to issue (see _on_begin).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute(f"PRAGMA synchronous={sqlite_synchronous}")
        cursor.execute(f"PRAGMA wal_autocheckpoint={SQLITE_AUTOCHECKPOINT_PAGES}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        # A write transaction takes the write lock up front: a deferred transaction that reads
        # and then writes fails with SQLITE_BUSY instead of waiting when another writer won.
        immediate = conn.get_execution_options().get("sqlite_immediate", False)
        if immediate and gate is not None:
            enter_writer_gate(conn.connection.info, gate)
        # Straight to the driver: this runs twice per answer, and the statement machinery
        # (events, result objects) would cost more than the BEGIN itself.
        conn.connection.driver_connection.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")

    @event.listens_for(engine, "checkin")
    def _on_checkin(_dbapi_connection: Any, record: Any) -> None:
        leave_writer_gate(record.info)

    @event.listens_for(engine, "close")
    def _on_close(_dbapi_connection: Any, record: Any) -> None:
        leave_writer_gate(record.info)
        fd = record.info.pop("gate_fd", None)
        if fd is not None:
            os.close(fd)

    return engine


def writer_gate_path(url: str | URL) -> str | None:
    """The file SQLite writers queue on (see `enter_writer_gate`); None for other databases."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return f"{parsed.database}.writers"


def enter_writer_gate(info: dict[str, Any], path: str) -> None:
    """Queue for SQLite's write lock on a file lock of our own.

    SQLite's busy handler polls with sleeps of up to 100 ms, so writers waiting on it wake
    late and in no order; waiters on a file lock wake as soon as it is free, first come
    first served. The kernel drops the lock of a killed process.
    """
    fd = info.get("gate_fd")
    if fd is None:
        fd = info["gate_fd"] = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    info["gate_held"] = True
    info["gate_path"] = path


def leave_writer_gate(info: dict[str, Any]) -> None:
    """Let the next writer in, once the transaction has ended; now and then, checkpoint.

    SQLite's automatic checkpoint runs inside COMMIT, while the gate is still held, so every
    writer of every process waited for its fsync, and the answer that triggered it took that
    much longer. Every `CHECKPOINT_EVERY` write transactions of a process, a thread of its
    own checkpoints instead; SQLite's own is kept, set far higher, as a backstop. Wake-ups
    that come while a checkpoint runs make one more, so a slow disk gets fewer, larger ones.
    """
    if not info.pop("gate_held", False):
        return
    fcntl.flock(info["gate_fd"], fcntl.LOCK_UN)
    path = info["gate_path"]
    checkpointer = _checkpointers.get(path)
    if checkpointer is None:
        checkpointer = _checkpointers[path] = Checkpointer(path.removesuffix(".writers"))
    checkpointer.count_write()


class Checkpointer:
    """Checkpoints one SQLite database's WAL on a daemon thread, off every request's path."""

    def __init__(self, database: str) -> None:
        self.database = database
        self.writes = 0
        self.done = 0  # checkpoints run, for tests and curious operators
        self._wake = threading.Event()
        self._pid: int | None = None

    def count_write(self) -> None:
        self.writes += 1
        if self.writes < CHECKPOINT_EVERY:
            return
        self.writes = 0
        if self._pid != os.getpid():  # first use, or a forked worker: threads do not survive
            self._pid = os.getpid()
            threading.Thread(target=self._run, name="sqlite-checkpoint", daemon=True).start()
        self._wake.set()

    def _run(self) -> None:
        connection = sqlite3.connect(self.database, isolation_level=None, timeout=30)
        while True:
            self._wake.wait()
            self._wake.clear()
            try:
                connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            except sqlite3.Error as exc:  # the backstop will checkpoint; say so and go on
                logger.warning("WAL checkpoint of %s failed: %s", self.database, exc)
            self.done += 1


def writer(engine: Engine) -> Engine:
    """The engine to bind a session to when the transaction will write."""
    return engine.execution_options(sqlite_immediate=True)


@contextmanager
def transaction(engine: Engine) -> Iterator[Session]:
    """One write transaction: commit on success, roll back on any error."""
    with Session(writer(engine), expire_on_commit=False) as session, session.begin():
        yield session


class LostRace(Exception):
    """Another transaction changed what this one read, and won: run the work again."""


# PostgreSQL's "try the transaction again" SQLSTATEs: serialization_failure, deadlock_detected.
_PG_RETRY_SQLSTATES = frozenset({"40001", "40P01"})
# Attempts and backoff between them. Full jitter (a random wait up to a ceiling that doubles)
# spreads the losers of one race apart, so that they do not all collide again on the next
# attempt, as immediate retries did: eight parallel answers to one card ran out of five.
RETRY_ATTEMPTS = 8
RETRY_FIRST_DELAY = 0.002  # seconds: a hot-path answer takes about a millisecond
RETRY_MAX_DELAY = 0.064  # all the waits together stay well under a second


def is_lost_race(exc: BaseException) -> bool:
    """Whether `exc` means another transaction won a race and the work is worth running
    again: our own version checks, and the database's serialization and lock conflicts."""
    if isinstance(exc, LostRace):
        return True
    if not isinstance(exc, DBAPIError):
        return False
    if getattr(exc.orig, "sqlstate", None) in _PG_RETRY_SQLSTATES:
        return True
    # A WAL snapshot that another writer outdated fails at once, without the busy handler's
    # wait. A plain SQLITE_BUSY has already waited the busy timeout: not retried here, it is
    # the "database unavailable" 503 (`database_unavailable`).
    return getattr(exc.orig, "sqlite_errorname", None) == "SQLITE_BUSY_SNAPSHOT"


def backoff(attempt: int, rng: Callable[[], float] = random.random) -> float:
    """The wait in seconds after failed attempt number `attempt` (from 1): a random fraction
    of a ceiling that doubles from RETRY_FIRST_DELAY up to RETRY_MAX_DELAY."""
    ceiling: float = min(RETRY_MAX_DELAY, RETRY_FIRST_DELAY * 2.0 ** (attempt - 1))
    return rng() * ceiling


def with_retries(
    work: Callable[[], T],
    *,
    retry_on: tuple[type[BaseException], ...] = (),
    attempts: int = RETRY_ATTEMPTS,
    rollback: Callable[[], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """The one retry policy: run `work`; when it loses a race (`is_lost_race`, or one of the
    caller's `retry_on`, such as the IntegrityError of a racing insert), `rollback`, wait
    `backoff` and run it again, at most `attempts` times in all. Any other error passes at
    once. Gives up with TooMuchContention (a 503 with Retry-After), never the last conflict.

    The uncontended path costs one call and a `try`: no statement, no clock read.
    """
    attempt = 1
    while True:
        try:
            return work()
        except Exception as exc:
            if not (isinstance(exc, retry_on) or is_lost_race(exc)):
                raise
            if rollback is not None:
                rollback()
            if attempt >= attempts:
                logger.warning("gave up after %d attempts, each lost a race: %s", attempts, exc)
                raise TooMuchContention() from exc
            sleep(backoff(attempt))
            attempt += 1


def retrying(
    session: Session,
    work: Callable[[], T],
    *,
    retry_on: tuple[type[BaseException], ...] = (),
    attempts: int = RETRY_ATTEMPTS,
) -> T:
    """Run `work` and commit, under `with_retries`: a lost race rolls back and runs it again."""

    def committed() -> T:
        result = work()
        session.commit()
        return result

    return with_retries(committed, retry_on=retry_on, attempts=attempts, rollback=session.rollback)
