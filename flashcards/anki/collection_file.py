"""A schema-11 collection file: what it holds (`Collection`), written and read with stdlib
sqlite3. Shared by the package exporter and the sync server's downloads."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence, Set
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import schema
from .timing import CRT

NOTE_TAGS = 5  # a schema-11 note row's tags: " a b "


@dataclass
class Collection:
    """What a schema-11 collection file holds."""

    conf: dict[str, Any]
    decks: list[dict[str, Any]]
    dconf: list[dict[str, Any]]
    mod_ms: int
    notes: list[tuple[Any, ...]]
    cards: list[tuple[Any, ...]]
    revlog: list[tuple[Any, ...]]
    scm_ms: int | None = None  # None: a package's, its `mod`
    usn: int = 0
    notetypes: list[dict[str, Any]] | None = None  # None: our front/back one alone
    crt: int = CRT  # a device's own, or ours (`timing.crt_of`)


def collection_bytes(collection: Collection) -> bytes:
    """A schema-11 SQLite collection file's bytes, made in memory: nothing touches the disk,
    and `serialize` gives the file back whole."""
    conn = sqlite3.connect(":memory:")
    try:
        # Nobody else reads it until it is complete: no journal (a failure leaves a
        # database that is thrown away anyway).
        conn.execute("PRAGMA journal_mode = OFF")
        schema.create_tables(conn)
        schema.write_col(
            conn,
            mod_ms=collection.mod_ms,
            crt=collection.crt,
            conf=collection.conf,
            decks=collection.decks,
            dconf=collection.dconf,
            scm_ms=collection.scm_ms,
            usn=collection.usn,
            notetypes=collection.notetypes,
            # Anki's browser lists these; it does not rebuild the list when it opens a file.
            tags=tags_of(collection.notes),
        )
        # In id order, each table's rows are appended to its b-tree rather than put between
        # others (full pages, a smaller file to compress). The collection's own lists keep
        # their order: a sync pairs its revlog rows with our logs by position.
        write_rows(
            conn,
            Collection(
                collection.conf, collection.decks, collection.dconf, collection.mod_ms,
                sorted(collection.notes), sorted(collection.cards), sorted(collection.revlog),
            ),
        )  # fmt: skip
        conn.commit()
        schema.create_indexes(conn)
        return conn.serialize()
    finally:
        conn.close()


def tags_of(notes: Iterable[Sequence[Any]]) -> set[str]:
    """The tags of note rows (a device's damaged one, not text, has none)."""
    return {
        tag for note in notes if isinstance(note[NOTE_TAGS], str) for tag in note[NOTE_TAGS].split()
    }


def write_collection(path: Path, collection: Collection) -> None:
    """A schema-11 SQLite collection at `path` (a new file)."""
    path.write_bytes(collection_bytes(collection))


def write_rows(conn: sqlite3.Connection, collection: Collection) -> None:
    """The collection's notes, cards and revlog rows into an open collection file."""
    conn.executemany("INSERT INTO notes VALUES (?,?,?,?,?,?,?,?,?,?,?)", collection.notes)
    conn.executemany(
        "INSERT INTO cards VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", collection.cards
    )
    conn.executemany("INSERT INTO revlog VALUES (?,?,?,?,?,?,?,?,?)", collection.revlog)


def read_collection(conn: sqlite3.Connection, only: Set[int] | None = None) -> Collection:
    """What an open collection file written by `write_collection` holds; with `only`, the
    notes and cards of those ids alone, and no revlog."""

    def rows(name: str) -> list[Any]:
        if only is None:
            return conn.execute(f"SELECT * FROM {name} ORDER BY id").fetchall()
        return conn.execute(
            f"SELECT * FROM {name} WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id",
            (json.dumps(sorted(only)),),
        ).fetchall()

    conf, decks, dconf, mod, scm, usn, models, crt = conn.execute(
        "SELECT conf, decks, dconf, mod, scm, usn, models, crt FROM col"
    ).fetchone()
    return Collection(
        json.loads(conf),
        list(json.loads(decks).values()),
        list(json.loads(dconf).values()),
        mod,
        rows("notes"),
        rows("cards"),
        rows("revlog") if only is None else [],
        scm,
        usn,
        list(json.loads(models).values()),
        crt,
    )
