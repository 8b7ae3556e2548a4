"""Backup and restore: every table to one portable file, and back into an empty database.

The file is gzip'd JSON lines, the same on SQLite and PostgreSQL, so a backup also moves a
service from one to the other:

- line 1, the header: format, version, the Alembic revision, and per table its columns (in
  the order rows list them) and row count;
- one line per row, `[table, [values...]]`, tables in foreign-key dependency order;
- the last line, the trailer: the SHA-256 of every byte before it (header and rows).

Values are typed by the schema, not guessed: timestamps are ISO 8601 (aware UTC columns keep
their `+00:00` and microseconds), JSON columns are kept as the exact text the database holds
(so SQL NULL and JSON `null` stay distinct), floats are written with `repr` precision.

Restore checks the checksum and counts before touching the database, then inserts everything
in one transaction, refusing a database that is not at the backup's revision or not empty.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import zlib
from collections.abc import Iterator
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from sqlalchemy import (
    JSON,
    Column,
    Connection,
    Engine,
    MetaData,
    Table,
    Text,
    bindparam,
    cast,
    func,
    insert,
    inspect,
    select,
    text,
    type_coerce,
)
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.types import TypeDecorator

from ..errors import FlashcardsError
from . import models  # noqa: F401  (registers every table on Base.metadata)
from .engine import writer
from .schema import Base, utcnow

FORMAT = "flashcards-backup"
VERSION = 1
BATCH = 1000
# Sessions, reset links and rate-limit counts are not data: a restored session could be one
# signed out since the backup, a restored reset link one used since.
SKIPPED_TABLES = frozenset({"alembic_version", "rate_limits", "web_sessions", "password_resets"})


class BackupError(FlashcardsError):
    """A backup that cannot be written or restored; nothing was changed."""


def _tables(conn: Connection) -> list[Table]:
    """The database's tables in dependency order, typed by our models where we have them.

    Reflection finds tables added by migrations whose models this process never imported;
    our own Table objects carry the column types (aware UTC, JSON) that make values exact.
    """
    reflected = MetaData()
    reflected.reflect(bind=conn)
    return [
        Base.metadata.tables.get(t.name, t)
        for t in reflected.sorted_tables
        if t.name not in SKIPPED_TABLES
    ]


def _revision(conn: Connection) -> str | None:
    if not inspect(conn).has_table("alembic_version"):
        return None
    rev: str | None = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    return rev


def _is_json(column: Column[Any]) -> bool:
    return isinstance(column.type, JSON)


def _python_type(column: Column[Any]) -> type | None:
    kind = column.type
    # A TypeDecorator (our aware-UTC datetime) does not report its impl's Python type.
    impl = kind.impl_instance if isinstance(kind, TypeDecorator) else kind
    try:
        return impl.python_type
    except NotImplementedError:
        return None


def _encode(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, bytes | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, Decimal):
        return str(value)
    return value


def _decoder(column: Column[Any]) -> Any:
    kind = _python_type(column)
    if _is_json(column) or kind is None:
        return None
    if kind is datetime:
        return datetime.fromisoformat
    if kind is date:
        return date.fromisoformat
    if kind is bytes:
        return base64.b64decode
    if kind is Decimal:
        return Decimal
    return None


def _select_columns(table: Table) -> list[ColumnElement[Any]]:
    # JSON as the database's own text: decoding and re-encoding would turn SQL NULL into
    # JSON null (or back) and could reformat the document.
    return [cast(c, Text).label(c.name) if _is_json(c) else c for c in table.columns]


def _line(obj: Any) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def backup(engine: Engine, path: Path) -> dict[str, int]:
    """Write every table to `path` (atomically); returns the row count per table."""
    tmp = path.with_name(path.name + ".partial")
    try:
        with engine.connect() as conn:
            if conn.dialect.name == "postgresql":
                # One snapshot for the whole dump, so counts and rows agree under writes.
                conn = conn.execution_options(isolation_level="REPEATABLE READ")
            with conn.begin():
                counts = _dump(conn, tmp)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    return counts


def _dump(conn: Connection, tmp: Path) -> dict[str, int]:
    revision = _revision(conn)
    if revision is None:
        raise BackupError("the database is not migrated (no alembic_version); nothing to back up")
    tables = _tables(conn)
    counts = {
        t.name: conn.execute(select(func.count()).select_from(t)).scalar_one() for t in tables
    }
    header = {
        "format": FORMAT,
        "version": VERSION,
        "alembic_revision": revision,
        "created_at": utcnow().isoformat(),
        "source": conn.dialect.name,
        "tables": [
            {"name": t.name, "columns": [c.name for c in t.columns], "rows": counts[t.name]}
            for t in tables
        ],
    }
    digest = hashlib.sha256()
    with gzip.open(tmp, "wb") as out:

        def write(data: bytes) -> None:
            digest.update(data)
            out.write(data)

        write(_line(header))
        for table in tables:
            pk = list(table.primary_key.columns) or list(table.columns)
            query = select(*_select_columns(table)).order_by(*pk)
            written = 0
            result = conn.execution_options(yield_per=BATCH).execute(query)
            for row in result:
                write(_line([table.name, [_encode(v) for v in row]]))
                written += 1
            if written != counts[table.name]:
                raise BackupError(f"table {table.name} changed while it was being backed up")
        out.write(_line({"sha256": digest.hexdigest()}))
    return counts


def _read_lines(path: Path) -> Iterator[bytes]:
    try:
        with gzip.open(path, "rb") as f:
            yield from f
    except FileNotFoundError:
        raise BackupError(f"{path}: no such file") from None
    except (OSError, EOFError, zlib.error) as exc:
        raise BackupError(f"{path}: not a readable backup ({exc})") from None


def _parse(line: bytes, path: Path, number: int) -> Any:
    try:
        return json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise BackupError(f"{path}:{number}: damaged line in the backup") from None


def verify(path: Path) -> dict[str, Any]:
    """Check the checksum, the header and the row counts; returns the header."""
    digest = hashlib.sha256()
    header: dict[str, Any] | None = None
    pending: bytes | None = None
    rows: dict[str, int] = {}
    number = 0
    for number, line in enumerate(_read_lines(path), start=1):
        if pending is not None:
            digest.update(pending)
            if header is None:
                header = _check_header(_parse(pending, path, 1), path)
            else:
                item = _parse(pending, path, number - 1)
                if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)):
                    raise BackupError(f"{path}:{number - 1}: damaged line in the backup")
                rows[item[0]] = rows.get(item[0], 0) + 1
        pending = line
    if pending is None or header is None:
        raise BackupError(f"{path}: empty or truncated backup")
    trailer = _parse(pending, path, number)
    if not isinstance(trailer, dict) or "sha256" not in trailer:
        raise BackupError(f"{path}: truncated backup (no checksum line at the end)")
    if trailer["sha256"] != digest.hexdigest():
        raise BackupError(f"{path}: checksum mismatch; the backup is damaged, nothing restored")
    expected = {t["name"]: t["rows"] for t in header["tables"]}
    if {k: v for k, v in expected.items() if v} != rows:
        raise BackupError(f"{path}: row counts do not match the header")
    return header


def _check_header(header: Any, path: Path) -> dict[str, Any]:
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise BackupError(f"{path}: not a flashcards backup")
    if header.get("version") != VERSION:
        raise BackupError(
            f"{path}: backup format version {header.get('version')!r}; this version reads"
            f" {VERSION!r}"
        )
    # The checksum proves the file is as written, not that a writer wrote it right.
    tables = header.get("tables")
    if not (
        isinstance(header.get("alembic_revision"), str)
        and isinstance(tables, list)
        and all(
            isinstance(t, dict)
            and isinstance(t.get("name"), str)
            and isinstance(t.get("columns"), list)
            and all(isinstance(c, str) for c in t["columns"])
            and type(t.get("rows")) is int
            and t["rows"] >= 0
            for t in tables
        )
    ):
        raise BackupError(f"{path}: the backup's header is damaged (its tables or revision)")
    return header


def restore(engine: Engine, path: Path) -> dict[str, int]:
    """Load a verified backup into an empty, migrated database in one transaction."""
    header = verify(path)
    with writer(engine).connect() as conn, conn.begin():
        tables = {t.name: t for t in _tables(conn)}
        _check_target(conn, header, tables)
        statements = {name: _insert(conn, tables[name]) for name in tables}
        decoders = {name: [_decoder(c) for c in tables[name].columns] for name in tables}
        columns = {t["name"]: t["columns"] for t in header["tables"]}
        batch: list[dict[str, Any]] = []
        batch_table: str | None = None
        digest = hashlib.sha256()
        lines = _read_lines(path)
        first = next(lines)
        digest.update(first)
        number = 1
        for line in lines:
            item = json.loads(line)
            if isinstance(item, dict):
                if item.get("sha256") != digest.hexdigest():
                    raise BackupError(f"{path}: the file changed while it was being restored")
                break
            digest.update(line)
            number += 1
            name, values = item
            if name != batch_table or len(batch) >= BATCH:
                _flush(conn, statements, batch_table, batch, path)
                batch, batch_table = [], name
            try:
                row = {
                    col: (dec(v) if dec is not None and v is not None else v)
                    for col, dec, v in zip(columns[name], decoders[name], values, strict=True)
                }
            except (KeyError, TypeError, ValueError, OverflowError) as exc:
                raise BackupError(
                    f"{path}:{number}: a row of {name} does not fit the database ({exc});"
                    " nothing restored"
                ) from None
            batch.append(row)
        _flush(conn, statements, batch_table, batch, path)
        if conn.dialect.name == "postgresql":
            _reset_sequences(conn, list(tables.values()))
    return {t["name"]: t["rows"] for t in header["tables"]}


def _check_target(conn: Connection, header: dict[str, Any], tables: dict[str, Table]) -> None:
    revision = _revision(conn)
    if revision is None:
        raise BackupError("the target database is not migrated: run `flashcards db upgrade` first")
    if revision != header["alembic_revision"]:
        raise BackupError(
            f"the backup is at schema revision {header['alembic_revision']} and the database "
            f"at {revision}; migrate the database to the backup's revision first"
        )
    for entry in header["tables"]:
        table = tables.get(entry["name"])
        if table is None or {c.name for c in table.columns} != set(entry["columns"]):
            raise BackupError(f"table {entry['name']} of the backup does not match the database")
    for table in tables.values():
        if conn.execute(select(func.count()).select_from(table)).scalar_one():
            raise BackupError(
                f"the target database is not empty (table {table.name} has rows); "
                "restore only into a freshly migrated database"
            )


def _insert(conn: Connection, table: Table) -> Any:
    values: dict[str, Any] = {}
    for column in table.columns:
        if _is_json(column):
            raw = type_coerce(bindparam(column.name), Text)
            # PostgreSQL needs the text cast to json; SQLite stores the text as it is.
            values[column.name] = (
                cast(raw, column.type) if conn.dialect.name == "postgresql" else raw
            )
        else:
            values[column.name] = bindparam(column.name, type_=column.type)
    return insert(table).values(values)


def _flush(
    conn: Connection,
    statements: dict[str, Any],
    name: str | None,
    batch: list[dict[str, Any]],
    path: Path,
) -> None:
    if name is None or not batch:
        return
    try:
        conn.execute(statements[name], batch)
    except (DBAPIError, KeyError) as exc:
        # Raised out of the transaction, which rolls back: all or nothing.
        detail = str(exc.orig if isinstance(exc, DBAPIError) else exc).splitlines()[0]
        raise BackupError(
            f"{path}: rows of {name} do not fit the database ({detail}); nothing restored"
        ) from None


def _reset_sequences(conn: Connection, tables: list[Table]) -> None:
    """Rows came with their ids, so each serial sequence must move past the largest one."""
    for table in tables:
        for column in table.primary_key.columns:
            sequence = conn.execute(
                text("SELECT pg_get_serial_sequence(:t, :c)"),
                {"t": table.name, "c": column.name},
            ).scalar()
            if sequence is None:
                continue
            conn.execute(
                text(
                    f'SELECT setval(:s, COALESCE((SELECT MAX("{column.name}") FROM '
                    f'"{table.name}"), 1), (SELECT COUNT(*) > 0 FROM "{table.name}"))'
                ),
                {"s": sequence},
            )
