"""PostgreSQL statements run through libpq's own calls (`psycopg.pq`), below psycopg's cursor.

psycopg's cursor drives each statement through Python generators, a wait loop and its
prepared-statement bookkeeping, which cost as much CPU per statement as the answer's whole
FSRS step. `rawsql` runs its hot-path statements here instead, already in PostgreSQL's `$n`
placeholders. psycopg still does the parts that need care, through its public API: its
`Transformer` dumps the values with the connection's adapters and loads the rows, and its
errors are raised for failures, so callers see exactly what a cursor would have raised.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import psycopg
from psycopg import errors, pq
from psycopg.adapt import PyFormat, Transformer

_OK = (pq.ExecStatus.COMMAND_OK, pq.ExecStatus.TUPLES_OK)


class LibpqRunner:
    """Runs statements on one psycopg connection in autocommit or its open transaction,
    each prepared on the server the first time this connection runs it."""

    def __init__(self, connection: psycopg.Connection[Any]) -> None:
        self.connection = connection
        self._pgconn = connection.pgconn
        self._transformer = Transformer(connection)
        self._formats: dict[int, list[PyFormat]] = {}
        # Per statement, its server-side name per set of parameter types (a None is sent
        # untyped, so one statement may need two preparations).
        self._names: dict[tuple[str, tuple[int, ...]], bytes] = {}

    def run(self, sql: str, params: Sequence[Any]) -> pq.abc.PGresult:
        formats = self._formats.get(len(params))
        if formats is None:
            formats = self._formats[len(params)] = [PyFormat.AUTO] * len(params)
        transformer = self._transformer
        # A NULL is sent as None, which the stubs leave out.
        values = cast("list[bytes]", transformer.dump_sequence(params, formats))
        types = transformer.types or ()
        sent = transformer.formats
        try:
            return self._check(self._pgconn.exec_prepared(self._name(sql, types), values, sent))
        except errors.InvalidSqlStatementName:
            # Something dropped this session's prepared statements (DISCARD ALL from a
            # connection pooler, say): prepare them again. Inside a transaction the failure
            # has aborted it, so only a statement on its own is run again.
            self._names.clear()
            if self._pgconn.transaction_status != pq.TransactionStatus.IDLE:
                raise
            return self._check(self._pgconn.exec_prepared(self._name(sql, types), values, sent))

    def _name(self, sql: str, types: tuple[int, ...]) -> bytes:
        name = self._names.get((sql, types))
        if name is None:
            name = f"flashcards_{len(self._names)}".encode()
            self._check(self._pgconn.prepare(name, sql.encode(), types))
            self._names[(sql, types)] = name
        return name

    def rows(self, result: pq.abc.PGresult, *, one: bool = False) -> list[tuple[Any, ...]]:
        """The result's rows, or only its first if `one`."""
        self._transformer.set_pgresult(result)
        return self._transformer.load_rows(
            0, min(result.ntuples, 1) if one else result.ntuples, tuple
        )

    @staticmethod
    def type_codes(result: pq.abc.PGresult) -> list[int]:
        return [result.ftype(i) for i in range(result.nfields)]

    def _check(self, result: pq.abc.PGresult) -> pq.abc.PGresult:
        if result.status not in _OK:
            raise errors.error_from_result(result, encoding=self.connection.info.encoding)
        return result
