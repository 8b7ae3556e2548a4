"""Core statements run straight on the DBAPI connection: the executor of the hot paths.

SQLAlchemy's execution machinery (events, execution contexts, result objects) costs several
times what SQLite needs to run one of our indexed queries, and the hottest requests run six
of them. A `Statement` here is still written with Core and compiled by SQLAlchemy's public
compiler, once per dialect, in a positional paramstyle (`?` on SQLite, `$n` on PostgreSQL)
whose `positiontup` names each placeholder's parameter; values go through the column types'
own bind and result processors, so the SQL and the stored values are the ORM's. Only the
per-execution bookkeeping is skipped. The statements themselves live in `hot_sql`.

Domain functions take an `Executor`: a `DirectConnection` on the hot paths, or a `Session`,
which `executor()` wraps so that every other caller (the web views, the CLI, tests) keeps
its session and transaction.
"""

from __future__ import annotations

import time
from collections import namedtuple
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, Protocol, cast

from sqlalchemy import Connection, Dialect, Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session
from sqlalchemy.sql import Executable

from ..storage.sqlite_writers import enter_writer_gate, leave_writer_gate
from .libpq import LibpqRunner

Params = Mapping[str, Any]
Processor = Callable[[Any], Any]


@dataclass
class Compiled:
    """A statement compiled for one dialect: its SQL and how to bind and read it."""

    sql: str
    # One per distinct parameter: its value, processed, from the caller's parameters.
    getters: tuple[Callable[[Params], Any], ...]
    # Per placeholder, its index among `getters`; None: one placeholder per getter. Only `?`
    # repeats a value used twice, which is then processed once (datetimes are costly).
    repeats: tuple[int, ...] | None
    row: Any  # a namedtuple class; None: the statement returns no rows
    types: tuple[Any, ...]  # of the result columns
    # Known from the first result: PostgreSQL's processors depend on the column's type code.
    # Only the columns that have one: most (integers, text) come from the driver as they are.
    process: tuple[tuple[int, Processor], ...] | None = field(default=None)

    def parameters(self, params: Params) -> list[Any]:
        values = [get(params) for get in self.getters]
        if self.repeats is None:
            return values
        return [values[i] for i in self.repeats]

    def processors(
        self, dialect: Dialect, type_codes: Callable[[], list[Any]]
    ) -> tuple[tuple[int, Processor], ...]:
        if self.process is None:
            found = (
                t.dialect_impl(dialect).result_processor(dialect, code)
                for t, code in zip(self.types, type_codes(), strict=True)
            )
            self.process = tuple((i, p) for i, p in enumerate(found) if p is not None)
        return self.process


class Statement:
    """A Core statement, compiled on first use for each dialect it runs on.

    Its parameters are single values: an IN list of varying length is one Statement per
    length, with a parameter per element (see `hot_sql.next_card`).
    """

    def __init__(self, statement: Executable) -> None:
        self.statement = statement
        self._compiled: dict[tuple[str, tuple[str, ...]], Compiled] = {}
        # An INSERT or UPDATE without explicit values sets the columns it is given, as in
        # SQLAlchemy: its SQL depends on the parameters' names.
        self._by_keys = bool(getattr(statement, "is_dml", False))

    def compiled(self, dialect: Dialect, params: Params) -> Compiled:
        """Compiled for `dialect` in its positional paramstyle (`positional_dialect`);
        `params` matter only to an INSERT or UPDATE without values."""
        key = (dialect.name, tuple(params) if self._by_keys else ())
        found = self._compiled.get(key)
        if found is None:
            keys = list(params) if self._by_keys else None
            found = self._compiled[key] = _compile(
                self.statement, dialect, positional_dialect(dialect), keys
            )
        return found


def _compile(
    statement: Any, dialect: Dialect, positional: Dialect, keys: list[str] | None
) -> Compiled:
    compiled = statement.compile(dialect=positional, column_keys=keys)
    defaults = [c.key for c in (*compiled.insert_prefetch, *compiled.update_prefetch)]
    if defaults:
        # Column defaults computed in Python are SQLAlchemy's execution's job, skipped here.
        raise ValueError(f"give a value for {', '.join(defaults)}: rawsql applies no defaults")
    lists = [b for b in compiled.binds.values() if b.expanding]
    if any(b.required for b in lists):
        raise ValueError("rawsql binds single values: make one statement per IN list length")
    sql: str = str(compiled)
    placeholders: list[str] = list(compiled.positiontup or [])
    constants: Mapping[str, Any] = {}
    processors: Mapping[str, Processor] = {}
    if lists:
        # Constant lists, e.g. `IN (1, 3)`, rendered a placeholder per element as SQLAlchemy
        # expands them (the other parameters' values do not matter to it).
        state = compiled.construct_expanded_state(
            {b.key: None for b in compiled.binds.values() if b.required}
        )
        sql, constants, processors = state.statement, state.parameters, state.processors
        placeholders = list(state.positiontup or [])
    names = list(dict.fromkeys(placeholders))
    repeats = None
    if len(names) < len(placeholders):
        repeats = tuple(names.index(name) for name in placeholders)
    getters = []
    for name in names:
        bind = compiled.binds.get(name)
        if bind is None:  # an element of a constant list
            process = processors.get(name)
            value = constants[name]
            getters.append(_constant(value if process is None else process(value)))
            continue
        process = bind.type.dialect_impl(dialect).bind_processor(dialect)
        if bind.required:
            getters.append(_getter(bind.key, process))
        else:
            # A value written into the statement, e.g. `LIMIT 1`.
            value = bind.effective_value
            getters.append(_constant(value if process is None else process(value)))
    result = Compiled(sql, tuple(getters), repeats, None, ())
    columns = getattr(statement, "selected_columns", None)
    if columns is not None:
        result.row = namedtuple("Row", list(columns.keys()), rename=True)  # type: ignore[misc]
        result.types = tuple(c.type for c in columns)
    return result


def _constant(value: Any) -> Callable[[Params], Any]:
    return lambda _params: value


def _getter(key: str, process: Processor | None) -> Callable[[Params], Any]:
    if process is None:
        return itemgetter(key)

    def get(params: Params) -> Any:
        value = params[key]
        return None if value is None else process(value)

    return get


class Executor(Protocol):
    """What the hot-path domain functions need of a database connection."""

    @property
    def dialect(self) -> Dialect: ...

    def first(self, statement: Statement, params: Params) -> Any: ...

    def all(self, statement: Statement, params: Params) -> list[Any]: ...

    def execute(self, statement: Statement, params: Params) -> int: ...


# Per engine dialect class, the same dialect rendering `$1`, `$2`: what PostgreSQL prepares.
_numbered: dict[type[Dialect], Dialect] = {}


def positional_dialect(dialect: Dialect) -> Dialect:
    """`dialect` itself when its paramstyle is positional (SQLite's `?`), else the same
    dialect with numbered `$n` placeholders (PostgreSQL's own, for `LibpqRunner`)."""
    if dialect.positional:
        return dialect
    found = _numbered.get(type(dialect))
    if found is None:
        make: Callable[..., Dialect] = type(dialect)  # a dialect takes create_engine's options
        found = _numbered[type(dialect)] = make(paramstyle="numeric_dollar")
    return found


class DirectConnection:
    """A pooled DBAPI connection, checked out for a command or kept by a thread for its
    requests (`KeptConnections`).

    Statements outside `write()` run in autocommit mode, each seeing the latest commit, with
    no BEGIN or COMMIT to pay for; `write()` is one transaction, which on SQLite takes the
    write lock at BEGIN.
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.dialect = engine.dialect
        self._sqlite = self.dialect.name == "sqlite"
        dbapi = self.dialect.loaded_dbapi
        try:
            self._raw = engine.raw_connection()
        except dbapi.Error as error:
            # The pool raises the driver's own error; wrapped as a failed statement's is.
            raise DBAPIError.instance(None, None, error, dbapi.Error) from error
        self._gate: str | None = self._raw.info.get("writer_gate")
        self._driver: Any = cast(Any, self._raw.driver_connection)  # sqlite3 or psycopg
        if not self._sqlite:
            # SQLite connections are already in autocommit mode (see storage.engine.make_engine).
            self._driver.autocommit = True
        self._cursor = self._raw.cursor()
        self._libpq = None if self._sqlite else _runner(self._raw.info, self._driver)
        self._rowcount = 0
        self._disconnected = False
        self.closed = False
        self.opened = time.monotonic()

    def _run(
        self, statement: Statement, params: Params, *, one: bool = False
    ) -> tuple[Compiled, Sequence[Any], Callable[[], list[Any]]]:
        """The statement's rows (only the first if `one`), unprocessed, and a function giving
        their columns' type codes; `_rowcount` is set."""
        compiled = statement.compiled(self.dialect, params)
        parameters = compiled.parameters(params)
        libpq = self._libpq
        if libpq is not None:
            result = self._driver_execute(compiled.sql, parameters, libpq)
            self._rowcount = result.command_tuples or 0
            if compiled.row is None:
                return compiled, [], list
            return compiled, libpq.rows(result, one=one), lambda: libpq.type_codes(result)
        self._driver_execute(compiled.sql, parameters)
        cursor = self._cursor
        self._rowcount = cursor.rowcount
        if compiled.row is None:
            return compiled, [], list
        rows = cursor.fetchall() if not one else [r for r in [cursor.fetchone()] if r is not None]
        return compiled, rows, lambda: [d[1] for d in cursor.description]

    def _driver_execute(
        self, sql: str, parameters: Sequence[Any] = (), libpq: LibpqRunner | None = None
    ) -> Any:
        dbapi = self.dialect.loaded_dbapi
        try:
            if libpq is not None:
                return libpq.run(sql, parameters)
            self._cursor.execute(sql, parameters)
        except dbapi.Error as error:
            # Raised as SQLAlchemy raises it, so callers and error handlers see one kind.
            self._disconnected = self.dialect.is_disconnect(error, self._raw, self._cursor)
            if self._disconnected:
                self._raw.invalidate(error)
                _renew_pool(self.engine)
            raise DBAPIError.instance(
                sql, None, error, dbapi.Error, connection_invalidated=self._disconnected
            ) from error

    def first(self, statement: Statement, params: Params) -> Any:
        compiled, rows, type_codes = self._run(statement, params, one=True)
        if not rows:
            return None
        return _row(compiled.row, compiled.processors(self.dialect, type_codes), rows[0])

    def all(self, statement: Statement, params: Params) -> list[Any]:
        compiled, rows, type_codes = self._run(statement, params)
        if not rows:
            return []
        processors = compiled.processors(self.dialect, type_codes)
        return [_row(compiled.row, processors, raw) for raw in rows]

    def execute(self, statement: Statement, params: Params) -> int:
        self._run(statement, params)
        return int(self._rowcount)

    @contextmanager
    def write(self) -> Iterator[DirectConnection]:
        """One write transaction: committed when the block ends, rolled back on any error."""
        try:
            if self._gate is not None:
                enter_writer_gate(self._raw.info, self._gate)
            # In autocommit mode a transaction is what BEGIN starts (both drivers' documented
            # way); on SQLite, IMMEDIATE takes the write lock at once instead of at the write.
            self._driver_execute("BEGIN IMMEDIATE" if self._sqlite else "BEGIN")
            yield self
        except BaseException:
            self._end("ROLLBACK")
            raise
        self._end("COMMIT")

    def _in_transaction(self) -> bool:
        if self._sqlite:
            return bool(self._driver.in_transaction)
        return bool(self._driver.info.transaction_status != 0)  # 0: idle

    def _end(self, sql: str) -> None:
        try:
            if self._in_transaction():
                self._driver_execute(sql)
        finally:
            # The next writer may start as soon as this one's transaction has ended.
            leave_writer_gate(self._raw.info)

    def reset(self) -> bool:
        """End anything still open; False if the connection is lost and must be closed."""
        if self._disconnected:
            return False
        try:
            self._end("ROLLBACK")
        except DBAPIError:
            return False
        return True

    def close(self, *, discard: bool = False) -> None:
        """End anything still open and return the connection to the pool (or close it)."""
        if self.closed:
            return
        self.closed = True
        healthy = False
        try:
            if not discard and self.reset():
                self._cursor.close()
                if not self._sqlite:
                    self._driver.autocommit = False  # as SQLAlchemy's sessions expect it
                healthy = True
        finally:
            if not healthy and not self._disconnected:  # a lost one is invalidated already
                self._raw.invalidate()  # in an unknown state: the pool must not hand it out
            self._raw.close()


def _renew_pool(engine: Engine) -> None:
    """After a lost connection, one statement through SQLAlchemy's own Connection.

    The server restarted or failed over, so the pool's idle connections are as dead as this
    one: SQLAlchemy, finding one of them dead, invalidates the whole pool, and each is
    replaced at its next checkout instead of failing a request of its own.
    """
    try:
        with engine.connect() as connection:
            connection.exec_driver_sql("SELECT 1")
    except DBAPIError:
        pass  # the pool has been renewed (or the server is still away: the next checkout says)


def _runner(info: dict[Any, Any], driver: Any) -> LibpqRunner:
    """The connection's runner: it lives as long as the DBAPI connection (the pool clears
    `info` when it makes a new one), since the statements it prepared live in that session."""
    runner: LibpqRunner | None = info.get("flashcards.libpq")
    if runner is None or runner.connection is not driver:
        runner = info["flashcards.libpq"] = LibpqRunner(driver)
    return runner


def _row(row: Any, processors: tuple[tuple[int, Processor], ...], raw: Any) -> Any:
    if not processors:
        return row._make(raw)
    values = list(raw)
    for i, process in processors:
        value = values[i]
        if value is not None:
            values[i] = process(value)
    return row._make(values)


class _OnSession:
    """An Executor over a Session's connection, inside the session's own transaction."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self.dialect = connection.dialect

    def first(self, statement: Statement, params: Params) -> Any:
        return self._connection.execute(statement.statement, params).first()

    def all(self, statement: Statement, params: Params) -> list[Any]:
        return list(self._connection.execute(statement.statement, params).all())

    def execute(self, statement: Statement, params: Params) -> int:
        result = self._connection.execute(statement.statement, params)
        return int(getattr(result, "rowcount", 0))


def executor(db: Session | Connection | Executor) -> Executor:
    """The Executor for a Session or Connection (or the one given)."""
    if isinstance(db, Session):
        return _OnSession(db.connection())
    if isinstance(db, Connection):
        return _OnSession(db)
    return db
