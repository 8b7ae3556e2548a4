"""The direct executor: the same rows and writes as SQLAlchemy's own execution, on both databases.

Every check compares against SQLAlchemy running the same Core statement, or against what is
in the database afterwards, so that a wrong bind, processor or transaction shows up here.
"""

from __future__ import annotations

import re
import threading
import uuid
from datetime import UTC, datetime, timedelta, timezone
from typing import Any, cast
from zoneinfo import ZoneInfo

import pytest
from flask import Flask
from fsrs import Rating
from sqlalchemy import Engine, Table, bindparam, func, insert, literal, select, text, update
from sqlalchemy.dialects import postgresql as postgresql_dialect
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.orm import Session

from flashcards.hot_sql import answers, tokens
from flashcards.hot_sql import next_card as next_card_sql
from flashcards.hot_sql.kept_connections import KeptConnections
from flashcards.hot_sql.rawsql import DirectConnection, Statement, executor
from flashcards.http import request_db
from flashcards.srs import study
from flashcards.storage.engine import make_engine, transaction
from flashcards.storage.models import ApiToken, Deck, ReviewLog, ReviewState, SchedulerSettings
from flashcards.storage.schema import UTCDateTime

from . import factories as f
from .conftest import T0

rs = cast(Table, ReviewState.__table__)
rl = cast(Table, ReviewLog.__table__)
settings = cast(Table, SchedulerSettings.__table__)


def setup(engine: Engine, cards: int = 3) -> tuple[int, list[int]]:
    with transaction(engine) as s:
        user = f.make_user(s, desired_retention=0.85, learning_steps=[30, 300])
        deck = f.make_deck(s, f"deck-{uuid.uuid4().hex[:8]}", cards)
        f.subscribe(s, user, deck)
        ids = f.card_ids(s, deck.id)
        for minutes, card in enumerate(ids):
            f.answer(s, user, card, Rating.Good, now=T0 + timedelta(minutes=minutes))
        return user, ids


@pytest.fixture
def direct(engine: Engine) -> Any:
    connection = DirectConnection(engine)
    yield connection
    connection.close()


def count(engine: Engine, table: Table) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(table)).scalar_one())


def test_rows_equal_sqlalchemys(engine: Engine, direct: DirectConnection) -> None:
    user, cards = setup(engine)
    # Datetimes (aware UTC), floats, NULLs, JSON lists and a constant, as SQLAlchemy gives them.
    statement = (
        select(rs, settings.c.learning_steps, settings.c.parameters, literal("x").label("k"))
        .join(settings, settings.c.user_id == rs.c.user_id)
        .where(rs.c.user_id == bindparam("user_id"))
        .order_by(rs.c.card_id)
    )
    ours = direct.all(Statement(statement), {"user_id": user})
    with engine.connect() as conn:
        theirs = conn.execute(statement, {"user_id": user}).all()
    assert [tuple(r) for r in ours] == [tuple(r) for r in theirs]
    assert len(ours) == len(cards)
    first = ours[0]
    assert first.due.tzinfo is not None and first.learning_steps == [30, 300]
    assert first.k == "x" and first.parameters is None


def test_in_lists_bind_each_element_and_constant_lists_are_kept(
    engine: Engine, direct: DirectConnection
) -> None:
    user, cards = setup(engine, cards=4)

    def chosen_of(length: int) -> Statement:
        return Statement(
            select(rs.c.card_id)
            .where(
                rs.c.user_id == bindparam("user_id"),
                rs.c.card_id.in_([bindparam(f"id_{i}") for i in range(length)]),
                rs.c.state.in_((1, 3)),  # learning or relearning: all of them after one Good
            )
            .order_by(rs.c.card_id)
        )

    for chosen in ([cards[0]], cards[1:3], cards):
        ids = {f"id_{i}": card for i, card in enumerate(chosen)}
        rows = direct.all(chosen_of(len(chosen)), {"user_id": user, **ids})
        assert [r.card_id for r in rows] == chosen
    assert direct.first(chosen_of(1), {"user_id": user, "id_0": 0}) is None
    # A list of unknown length is refused when compiled, rather than bound wrongly.
    expanding = Statement(
        select(rs.c.card_id).where(rs.c.card_id.in_(bindparam("ids", expanding=True)))
    )
    with pytest.raises(ValueError, match="IN list"):
        direct.all(expanding, {"ids": cards})


def test_a_value_used_twice_is_bound_in_both_places(
    engine: Engine, direct: DirectConnection
) -> None:
    user, cards = setup(engine, cards=3)
    statement = Statement(
        select(rs.c.card_id)
        .where(
            rs.c.user_id == bindparam("user_id"),
            (rs.c.card_id == bindparam("card")) | (rs.c.card_id > bindparam("card")),
            rs.c.due > bindparam("since"),
            rs.c.last_review > bindparam("since"),
        )
        .order_by(rs.c.card_id)
    )
    since = T0 - timedelta(days=1)
    rows = direct.all(statement, {"user_id": user, "card": cards[1], "since": since})
    assert [r.card_id for r in rows] == cards[1:]
    later = T0 + timedelta(days=3650)
    assert direct.all(statement, {"user_id": user, "card": cards[0], "since": later}) == []


def test_insert_and_update_set_the_given_columns(engine: Engine, direct: DirectConnection) -> None:
    user, _cards = setup(engine, cards=1)
    tokens = cast(Table, ApiToken.__table__)
    with direct.write():
        direct.execute(
            Statement(insert(tokens)),
            {"user_id": user, "token_hash": "h1", "name": "n", "created_at": T0},
        )
    changed = Statement(
        update(tokens).where(tokens.c.token_hash == bindparam("h")).values(name=bindparam("n"))
    )
    with direct.write():
        assert direct.execute(changed, {"h": "h1", "n": "renamed"}) == 1
        assert direct.execute(changed, {"h": "nope", "n": "x"}) == 0
    with engine.connect() as conn:
        row = conn.execute(select(tokens).where(tokens.c.token_hash == "h1")).one()
    assert row.name == "renamed" and row.created_at == T0


def test_a_value_may_be_null_one_time_and_set_the_next(
    engine: Engine, direct: DirectConnection
) -> None:
    # PostgreSQL statements are prepared per set of parameter types, and NULL has none.
    user, _cards = setup(engine, cards=1)
    change = Statement(update(rs).where(rs.c.user_id == bindparam("u")).values(step=bindparam("s")))
    for step in (None, 2, None, 3):
        assert direct.execute(change, {"u": user, "s": step}) == 1
        with engine.connect() as conn:
            stored = conn.execute(select(rs.c.step).where(rs.c.user_id == user)).scalar_one()
        assert stored == step


def test_prepared_statements_outlive_what_sessions_do_on_the_same_connection(
    engine: Engine,
) -> None:
    if engine.dialect.name != "postgresql":
        pytest.skip("statements prepared on the server: PostgreSQL")
    one = make_engine(engine.url.render_as_string(hide_password=False), pool_size=1, max_overflow=0)
    try:
        first = DirectConnection(one)
        assert first.first(ONE, {}).one == 1
        first.close()
        # The ORM on the same connection: a query run often, then rolled back (psycopg
        # would prepare it, then answer the ROLLBACK with DEALLOCATE ALL).
        with Session(one) as s:
            for _ in range(8):
                s.execute(select(literal(1))).scalar_one()
            s.rollback()
        again = DirectConnection(one)
        assert again._driver is first._driver  # the same connection, with its statements
        assert again.first(ONE, {}).one == 1
        # And should something else drop them (a pooler's DISCARD ALL), they come back.
        again._driver.execute("DEALLOCATE ALL")
        assert again.first(ONE, {}).one == 1
        again.close()
    finally:
        one.dispose()


def test_a_failed_write_leaves_nothing(engine: Engine, direct: DirectConnection) -> None:
    user, _cards = setup(engine, cards=1)
    tokens = cast(Table, ApiToken.__table__)
    before = count(engine, tokens)
    add = Statement(insert(tokens))
    row = {"user_id": user, "token_hash": "same", "name": "", "created_at": T0}
    with pytest.raises(IntegrityError), direct.write():  # SQLAlchemy's class, not the driver's
        direct.execute(add, row)
        direct.execute(add, row)
    assert count(engine, tokens) == before
    # The connection is usable again, outside any transaction.
    with direct.write():
        direct.execute(add, row)
    assert count(engine, tokens) == before + 1


def test_the_pool_gets_the_connection_back_as_sessions_expect(engine: Engine) -> None:
    user, _cards = setup(engine, cards=1)
    connection = DirectConnection(engine)
    connection.first(Statement(select(rs.c.card_id).where(rs.c.user_id == user)), {})
    connection.close()
    # A session on the same pool still runs in a transaction: its rollback undoes its write.
    with Session(engine) as s:
        s.execute(update(settings).where(settings.c.user_id == user).values(new_per_day=7))
        s.rollback()
    with engine.connect() as conn:
        new = conn.execute(select(settings.c.new_per_day).where(settings.c.user_id == user))
        assert new.scalar_one() != 7


def test_a_lost_connection_is_not_reused(engine: Engine) -> None:
    if engine.dialect.name != "postgresql":
        pytest.skip("a server that drops the connection: PostgreSQL")
    connection = DirectConnection(engine)
    pid = connection._driver.info.backend_pid
    with engine.connect() as admin:
        admin.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        admin.commit()
    with pytest.raises(DBAPIError):
        connection.first(Statement(select(literal(1).label("one"))), {})
    connection.close()
    again = DirectConnection(engine)
    try:
        assert again.first(Statement(select(literal(1).label("one"))), {}).one == 1
        assert again._driver.info.backend_pid != pid
    finally:
        again.close()


ONE = Statement(select(literal(1).label("one")))


def test_a_thread_keeps_its_connection_between_requests(engine: Engine) -> None:
    kept = KeptConnections(engine)
    first = kept.acquire()
    kept.release(first)
    assert kept.acquire() is first
    kept.release(first)
    other: list[DirectConnection] = []
    worker = threading.Thread(target=lambda: other.append(kept.acquire()))
    worker.start()
    worker.join()
    assert (
        other[0] is not first
        and other[0]._raw.driver_connection is not first._raw.driver_connection
    )
    kept.close_all()
    assert first.closed and other[0].closed
    # A new connection after the old ones were closed, e.g. by the engine's disposal.
    assert kept.acquire().first(ONE, {}).one == 1
    kept.close_all()


def test_a_thread_per_request_server_gives_each_connection_back(engine: Engine) -> None:
    kept = KeptConnections(engine)

    def request() -> None:
        connection = kept.acquire()
        assert connection.first(ONE, {}).one == 1
        kept.release(connection)

    # More threads than the pool holds (5 + 10 overflow): each returns its connection.
    for _ in range(20):
        thread = threading.Thread(target=request)
        thread.start()
        thread.join()
    assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]
    kept.close_all()


def test_a_kept_connection_ends_what_a_request_left_open(engine: Engine) -> None:
    user, _cards = setup(engine, cards=1)
    kept = KeptConnections(engine)
    connection = kept.acquire()
    connection._driver_execute("BEGIN")  # as if a request had left its transaction open
    connection.execute(
        Statement(update(settings).where(settings.c.user_id == bindparam("u"))),
        {"u": user, "new_per_day": 7},
    )
    kept.release(connection)
    again = kept.acquire()
    assert again is connection and not again._in_transaction()
    with engine.connect() as conn:
        new = conn.execute(select(settings.c.new_per_day).where(settings.c.user_id == user))
        assert new.scalar_one() != 7
    # The write lock was let go: another writer gets in.
    with transaction(engine) as s:
        s.execute(update(settings).where(settings.c.user_id == user).values(new_per_day=8))
    kept.close_all()


def test_a_kept_connection_is_replaced_when_lost_or_old(engine: Engine) -> None:
    kept = KeptConnections(engine, recycle=3600)
    connection = kept.acquire()
    if engine.dialect.name == "postgresql":
        with engine.connect() as admin:
            admin.execute(
                text("SELECT pg_terminate_backend(:pid)"),
                {"pid": connection._driver.info.backend_pid},
            )
            admin.commit()
        with pytest.raises(DBAPIError):
            connection.first(ONE, {})
        kept.release(connection)
        assert connection.closed
        fresh = kept.acquire()
        assert fresh is not connection and fresh.first(ONE, {}).one == 1
        kept.release(fresh)
    kept.close_all()
    old = KeptConnections(engine, recycle=0)
    first = old.acquire()
    old.release(first)
    second = old.acquire()
    assert second is not first and first.closed and second.first(ONE, {}).one == 1
    old.close_all()


def test_disposing_the_engine_closes_the_apps_kept_connections(app: Flask) -> None:
    with app.test_request_context("/api/v1/study/next"):
        connection = request_db.direct()
        assert connection.first(ONE, {}).one == 1
    assert not connection.closed  # kept for the next request
    app.extensions["flashcards.engine"].dispose()
    assert connection.closed


def test_a_session_is_an_executor_too(session: Session) -> None:
    user = f.make_user(session)
    statement = Statement(select(settings.c.user_id).where(settings.c.user_id == bindparam("u")))
    assert executor(session).first(statement, {"u": user}).user_id == user


def test_a_stale_answer_writes_nothing(engine: Engine) -> None:
    """Two answers prepared from the same state: the second loses, and leaves no log row."""
    user, cards = setup(engine, cards=1)
    connection = DirectConnection(engine)
    later = T0 + timedelta(hours=1)
    try:
        prepared = [
            study.prepare_answer(
                connection, user, cards[0], Rating.Good, str(uuid.uuid4()), now=later
            )
            for _ in range(2)
        ]
        assert all(isinstance(p, study.PreparedAnswer) for p in prepared)
        logs = count(engine, rl)
        study.store_answer(connection, cast(study.PreparedAnswer, prepared[0]))
        with pytest.raises(study.ConcurrentAnswer):
            study.store_answer(connection, cast(study.PreparedAnswer, prepared[1]))
        assert count(engine, rl) == logs + 1
    finally:
        connection.close()
    with engine.connect() as conn:
        version = conn.execute(
            select(rs.c.version).where(rs.c.user_id == user, rs.c.card_id == cards[0])
        ).scalar_one()
    assert version == 2


def test_an_insert_missing_a_python_default_is_refused(
    engine: Engine, direct: DirectConnection
) -> None:
    # decks.updated_at has a Python-side default, which only SQLAlchemy's execution applies.
    decks = cast(Table, Deck.__table__)
    with pytest.raises(ValueError, match="updated_at"):
        direct.execute(
            Statement(insert(decks)), {"slug": "x", "default_locale": "en", "created_at": T0}
        )
    assert count(engine, decks) == 0


@pytest.mark.parametrize(
    "value",
    [
        datetime(2026, 11, 30, 1, 46, 22, 434111, tzinfo=UTC),
        datetime(2026, 11, 30, 1, 46, 22, tzinfo=UTC),  # no microseconds: still six digits
        datetime(1, 1, 1, 14, 0, tzinfo=timezone(timedelta(hours=14))),  # year 1, UTC day 0
        datetime(2026, 3, 8, 12, 30, tzinfo=ZoneInfo("America/Los_Angeles")),
    ],
)
def test_sqlite_stores_sqlalchemys_datetime_text(value: datetime) -> None:
    # Stored times are compared as text in SQL: the format must be exactly SQLAlchemy's.
    dialect = sqlite_dialect.dialect()
    ours = UTCDateTime().dialect_impl(dialect).bind_processor(dialect)
    theirs = sqlite_dialect.DATETIME().bind_processor(dialect)
    assert ours is not None and theirs is not None
    assert ours(value) == theirs(value.astimezone(UTC).replace(tzinfo=None))
    result = UTCDateTime().dialect_impl(dialect).result_processor(dialect, None)
    assert result is not None and result(ours(value)) == value
    with pytest.raises(ValueError, match="naive"):
        ours(value.replace(tzinfo=None))


def test_postgresql_binds_the_same_instant_and_refuses_naive_times(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dialect = postgresql_dialect.psycopg.dialect()
    # One call per value: TypeDecorator's chain through process_bind_param is not taken.
    monkeypatch.setattr(UTCDateTime, "process_bind_param", None)
    bind = UTCDateTime().dialect_impl(dialect).bind_processor(dialect)
    assert bind is not None
    local = datetime(2026, 3, 8, 12, 30, tzinfo=ZoneInfo("America/Los_Angeles"))
    assert bind(local) == local and bind(local).tzinfo == UTC
    assert bind(None) is None
    with pytest.raises(ValueError, match="naive"):
        bind(local.replace(tzinfo=None))


def test_the_hot_statements_compile_as_sqlalchemy_compiles_them(engine: Engine) -> None:
    """On PostgreSQL the statements are rendered by a second dialect with `$n` placeholders:
    apart from those, its SQL must be what the engine's own (connected) dialect renders."""
    with engine.connect():
        pass  # the dialect learns the server's version on the first connection
    statements = [
        value
        for module in (answers, next_card_sql, tokens)
        for value in vars(module).values()
        if isinstance(value, Statement)
    ]
    statements += [next_card_sql._first_learning(3), next_card_sql._first_review(2)]
    assert len(statements) > 10
    log = {name: None for name in answers.LOG_COLUMNS}
    for statement in statements:
        params = log if statement is answers._INSERT_LOG else {}  # its columns: those given
        ours = statement.compiled(engine.dialect, params).sql
        compiled = statement.statement.compile(dialect=engine.dialect, column_keys=list(params))
        required = {b.key: None for b in compiled.binds.values() if b.required}
        theirs = compiled.construct_expanded_state(required).statement  # constant IN lists
        if engine.dialect.name == "postgresql":
            ours, theirs = re.sub(r"\$\d+", "?", ours), re.sub(r"%\(\w+\)s", "?", theirs)
        assert ours == theirs
