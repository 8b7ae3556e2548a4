"""Core statements run straight on the DBAPI connection: the executor of the hot paths.

SQLAlchemy's execution machinery (events, execution contexts, result objects) costs several
times what SQLite needs to run one of our indexed queries, and the hottest requests run six
of them. A `Statement` here is still written with Core and
compiled by SQLAlchemy, once per dialect (and per length of its unbound IN lists), with the
column types' own bind and result processors, so the SQL and the stored values are the
ORM's. Only the per-execution bookkeeping is skipped.

Domain functions take an `Executor`: a `DirectConnection` on the hot paths, or a `Session`,
which `executor()` wraps so that every other caller (the web views, the CLI, tests) keeps
its session and transaction.
"""

from __future__ import annotations

import re
import time
from collections import namedtuple
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Protocol, cast

from sqlalchemy import Connection, Dialect, Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session
from sqlalchemy.sql import Executable, visitors
from sqlalchemy.sql.elements import BindParameter

from .db import enter_writer_gate, leave_writer_gate
from .libpq import LibpqRunner

Params = Mapping[str, Any]
Processor = Callable[[Any], Any]
_PYFORMAT_BIND = re.compile(r"%\((\w+)\)s")


@dataclass
class _Compiled:
    sql: str
    positional: bool
    names: tuple[str, ...]  # of the binds in the compiled SQL, in order
    # One per bind: its value, processed, from the caller's parameters (or a constant).
    getters: tuple[Callable[[Params], Any], ...]
    row: Any  # a namedtuple class; None: the statement returns no rows
    types: tuple[Any, ...]  # of the result columns
    # Known from the first result: PostgreSQL's processors depend on the column's type code.
    # Only the columns that have one: most (integers, text) come from the driver as they are.
    process: tuple[tuple[int, Processor], ...] | None = None
    # Positional SQL repeats a value used twice; it is processed once (datetimes are costly).
    repeats: tuple[int, ...] | None = None  # per placeholder, its index among `getters`

    def parameters(self, params: Params) -> tuple[Any, ...] | dict[str, Any]:
        if self.positional:
            values = [get(params) for get in self.getters]
            if self.repeats is None:
                return tuple(values)
            return tuple([values[i] for i in self.repeats])
        return {name: get(params) for name, get in zip(self.names, self.getters, strict=True)}

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
    """A Core statement, compiled on first use for each dialect it runs on."""

    def __init__(self, statement: Executable) -> None:
        self.statement = statement
        self._compiled: dict[tuple[str, tuple[Any, ...]], _Compiled] = {}
        # An INSERT or UPDATE without explicit values sets the columns it is given, as in
        # SQLAlchemy: its SQL depends on the parameters' names.
        self._by_keys = bool(getattr(statement, "is_dml", False))
        self._lists = tuple(
            b.key for b in _bind_parameters(statement) if b.expanding and b.required
        )

    def compiled(self, dialect: Dialect, params: Params) -> _Compiled:
        shape: tuple[Any, ...] = (
            tuple(params) if self._by_keys else tuple(len(params[n]) for n in self._lists)
        )
        key = (dialect.name, shape)
        found = self._compiled.get(key)
        if found is None:
            lengths = {} if self._by_keys else dict(zip(self._lists, shape, strict=True))
            keys = list(params) if self._by_keys else None
            found = self._compiled[key] = _compile(self.statement, dialect, lengths, keys)
        return found


def _bind_parameters(statement: Any) -> list[BindParameter[Any]]:
    found: list[BindParameter[Any]] = []
    visitors.traverse(statement, {}, {"bindparam": found.append})
    return found


def _compile(
    statement: Any, dialect: Dialect, lengths: dict[str, int], keys: list[str] | None
) -> _Compiled:
    plain = statement.compile(dialect=dialect, column_keys=keys)
    defaults = [c.key for c in (*plain.insert_prefetch, *plain.update_prefetch)]
    if defaults:
        # Column defaults computed in Python are SQLAlchemy's execution's job, skipped here.
        raise ValueError(f"give a value for {', '.join(defaults)}: rawsql applies no defaults")
    own = plain.binds
    if lengths or any(b.expanding for b in own.values()):
        # Render IN lists as one placeholder per element: placeholders of the right length
        # stand in for the caller's lists, the statement's constant lists keep their values.
        stand_ins = {
            b.key: ([None] * lengths[b.key] if b.key in lengths else None)
            for b in own.values()
            if b.required
        }
        rendered = statement.params(stand_ins).compile(
            dialect=dialect, compile_kwargs={"render_postcompile": True}
        )
    else:
        rendered = plain
    positional = dialect.paramstyle in ("qmark", "format", "numeric")
    sql = str(rendered)
    placeholders = list(rendered.positiontup or []) if positional else []
    names = list(dict.fromkeys(placeholders if positional else _PYFORMAT_BIND.findall(sql)))
    repeats = None
    if len(names) < len(placeholders):
        repeats = tuple(names.index(name) for name in placeholders)
    getters = []
    for name in names:
        if name in own:
            param, index = own[name], None
        else:  # one element of an IN list, rendered as name_1, name_2, ...
            base, _, number = name.rpartition("_")
            param, index = own[base], int(number) - 1
        process = param.type.dialect_impl(dialect).bind_processor(dialect)
        if not param.required:
            # A value written into the statement, e.g. `LIMIT 1` or an element of `IN (1, 3)`.
            constant = param.effective_value
            constant = constant if index is None else constant[index]
            getters.append(_constant(constant if process is None else process(constant)))
        else:
            getters.append(_getter(param.key, index, process))
    columns = getattr(statement, "selected_columns", None)
    compiled = _Compiled(sql, positional, tuple(names), tuple(getters), None, (), repeats=repeats)
    if columns is not None:
        compiled.row = namedtuple("Row", list(columns.keys()), rename=True)  # type: ignore[misc]
        compiled.types = tuple(c.type for c in columns)
    return compiled


def _constant(value: Any) -> Callable[[Params], Any]:
    return lambda _params: value


def _getter(key: str, index: int | None, process: Processor | None) -> Callable[[Params], Any]:
    if index is None and process is None:
        return itemgetter(key)
    if process is None:
        return lambda params: params[key][index]

    def get(params: Params) -> Any:
        value = params[key] if index is None else params[key][index]
        return None if value is None else process(value)

    return get


class Executor(Protocol):
    """What the hot-path domain functions need of a database connection."""

    def first(self, statement: Statement, params: Params) -> Any: ...

    def all(self, statement: Statement, params: Params) -> list[Any]: ...

    def execute(self, statement: Statement, params: Params) -> int: ...


class DirectConnection:
    """A pooled DBAPI connection, checked out for a command or kept by a thread for its
    requests (`KeptConnections`).

    Statements outside `write()` run in autocommit mode, each seeing the latest commit, with
    no BEGIN or COMMIT to pay for; `write()` is one transaction, which on SQLite takes the
    write lock at BEGIN.
    """

    def __init__(self, engine: Engine) -> None:
        self.dialect = engine.dialect
        self._pool = engine.pool
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
            # SQLite connections are already in autocommit mode (see db.make_engine).
            self._driver.autocommit = True
        self._cursor = self._raw.cursor()
        self._libpq = None if self._sqlite else _runner(self._raw.info, self._driver)
        self._rowcount = 0
        self._disconnected = False
        self.closed = False
        self.opened = time.monotonic()

    def _run(
        self, statement: Statement, params: Params, *, one: bool = False
    ) -> tuple[_Compiled, Sequence[Any], Callable[[], list[Any]]]:
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
        self, sql: str, parameters: Any = (), libpq: LibpqRunner | None = None
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
                # What SQLAlchemy does on a disconnect: the server restarted or failed over,
                # so every idle connection of the pool is as dead as this one; they are
                # replaced at their next checkout instead of failing a request each. (This
                # one is invalidated when it is given back.)
                self._pool._invalidate(self._raw, error, _checkin=False)
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
            if not healthy:
                self._raw.invalidate()  # in an unknown state: the pool must not hand it out
            self._raw.close()


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
