"""A collection's structure: settings, note types (fields and card templates) and deck names,
from schema 11's JSON columns or schema 18's tables, with the protobuf bits this needs.

Every value is untrusted: a value of the wrong shape is refused naming the part of the
collection, and tables that compute (views, generated columns) are never read.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from .errors import AnkiPackageError
from .protobuf import Message, blob

NORMAL, CLOZE = 0, 1


@dataclass(frozen=True)
class Notetype:
    id: int
    name: str
    kind: int
    fields: list[str]
    # (question format, answer format) per card template, in `ord` order.
    templates: list[tuple[str, str]] = field(default_factory=list)


def proto_varint(blob: bytes, number: int) -> int | None:
    """The last varint field `number` of a protobuf message (enough for meta and kinds)."""
    message = Message(blob)
    return message.uint(number) if message.has(number) else None


def proto_string(blob: bytes, number: int) -> str:
    """The last string field `number` of a protobuf message, "" if absent."""
    return Message(blob).text(number)


def stored_tables(conn: sqlite3.Connection) -> set[str]:
    """The collection's stored tables: not views, virtual tables or tables that compute."""
    found = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'"
    )
    return {str(name) for (name,) in found.fetchall() if not _computes(conn, str(name))}


def _computes(conn: sqlite3.Connection, table: str) -> bool:
    """Whether `table` has a generated column: its values are expressions, run on reading."""
    columns = conn.execute("SELECT hidden FROM pragma_table_xinfo(?)", (table,))
    return any(hidden in (2, 3) for (hidden,) in columns)  # 2, 3: virtual, stored


def json_value(text: Any, what: str) -> Any:
    """`text` as JSON, {} for what is not JSON (Anki leaves some columns empty)."""
    try:
        return json.loads(text) if text else {}
    except (TypeError, ValueError):
        return {}
    except RecursionError:
        # Arrays nested 50,000 deep: a few hundred kilobytes that no Anki ever wrote.
        raise AnkiPackageError(
            f"the package's collection is damaged: {what} is nested too deeply to be read"
        ) from None


def settings(conn: sqlite3.Connection) -> dict[str, Any]:
    """A schema-18 collection's settings (`col.conf` in schema 11): each row's JSON value."""
    with reading("the settings (config)"):
        return {
            str(key): json_value(value, "a setting (config)")
            for key, value in conn.execute("SELECT KEY, val FROM config")
        }


def deck_name(value: object) -> str:
    """Schema 18 separates a deck's parents with \\x1f; schema 11 with "::"."""
    return str(value).replace("\x1f", "::")


# What can go wrong reading a value of the wrong shape: a list where Anki writes an object
# (AttributeError), a missing key, a string where a number belongs, or a REAL infinity where
# an integer belongs (int() raises OverflowError).
SHAPE_ERRORS = (KeyError, TypeError, ValueError, AttributeError, OverflowError, IndexError)


@contextmanager
def reading(what: str) -> Iterator[None]:
    """Refuse a value of the wrong shape in `what`, naming the part of the collection rather
    than quoting Python's exception, which tells a person nothing about their package."""
    try:
        yield
    except SHAPE_ERRORS:
        raise AnkiPackageError(
            f"the package's collection is damaged: {what} is not in the form Anki writes"
        ) from None


def notetype_of(nt: dict[str, Any]) -> Notetype:
    """A note type from its schema-11 JSON (KeyError, TypeError or ValueError for a damaged
    one)."""
    flds = sorted(nt.get("flds", []), key=lambda f: f.get("ord", 0))
    tmpls = sorted(nt.get("tmpls", []), key=lambda t: t.get("ord", 0))
    return Notetype(
        int(nt["id"]),
        str(nt.get("name", "")),
        int(nt.get("type", 0)),
        [str(f.get("name", "")) for f in flds],
        [(str(t.get("qfmt", "")), str(t.get("afmt", ""))) for t in tmpls],
    )


def read_structure(
    conn: sqlite3.Connection,
) -> tuple[int, dict[str, Any], dict[int, Notetype], dict[int, str]]:
    """crt, config, notetypes and deck names, from schema 11 JSON or schema 18 tables."""
    tables = stored_tables(conn)
    if not {"col", "notes", "cards"} <= tables:
        raise AnkiPackageError(
            "not an Anki collection: its tables are missing", kind="not_a_package"
        )
    row = conn.execute("SELECT crt, ver, conf, models, decks FROM col").fetchone()
    if row is None:
        raise AnkiPackageError(
            "not an Anki collection: it has no collection row", kind="not_a_package"
        )
    crt, ver, conf_text, models_text, decks_text = row
    with reading("the collection row (col)"):
        crt, ver = int(crt), int(ver)
    if not 11 <= ver <= 18:
        raise AnkiPackageError(
            f"the collection has schema {ver}; we read 11 to 18", kind="unsupported_version"
        )
    if "notetypes" in tables:
        if not {"config", "fields", "decks"} <= tables:
            raise AnkiPackageError("the package's collection is damaged: tables are missing")
        conf = settings(conn)
        fields: dict[int, list[str]] = {}
        templates: dict[int, list[tuple[str, str]]] = {}
        with reading("the note types (notetypes, fields, templates)"):
            for ntid, name in conn.execute("SELECT ntid, name FROM fields ORDER BY ntid, ord"):
                fields.setdefault(ntid, []).append(str(name))
            if "templates" in tables:
                # CardTemplate.Config: 1 is the question format, 2 the answer's.
                for ntid, config in conn.execute(
                    "SELECT ntid, config FROM templates ORDER BY ntid, ord"
                ):
                    data = blob(config)
                    templates.setdefault(ntid, []).append(
                        (proto_string(data, 1), proto_string(data, 2))
                    )
            notetypes = {
                int(ntid): Notetype(
                    int(ntid),
                    str(name),
                    proto_varint(blob(config), 1) or NORMAL,
                    fields.get(ntid, []),
                    templates.get(ntid, []),
                )
                for ntid, name, config in conn.execute("SELECT id, name, config FROM notetypes")
            }
        with reading("the deck list (decks)"):
            decks = {
                int(did): deck_name(name)
                for did, name in conn.execute("SELECT id, name FROM decks")
            }
    else:
        conf = json_value(conf_text, "the settings (col.conf)")
        notetypes = {}
        with reading("the note types (col.models)"):
            for nt in json_value(models_text, "the note types (col.models)").values():
                notetypes[int(nt["id"])] = notetype_of(nt)
        with reading("the deck list (col.decks)"):
            decks = {
                int(d["id"]): str(d.get("name", ""))
                for d in json_value(decks_text, "the deck list (col.decks)").values()
            }
    return crt, conf, notetypes, decks
