"""The ceiling: a bare Flask endpoint doing one SQLite primary-key read, nothing else.

Served by gunicorn with the same settings as `flashcards serve`; `BENCH_CEILING_DB` names
the database. Each worker opens its connection after the fork and keeps it.
"""

from __future__ import annotations

import os
import sqlite3
import threading

from flask import Flask, jsonify
from flask.typing import ResponseReturnValue

app = Flask(__name__)
_local = threading.local()


def _connection() -> sqlite3.Connection:
    conn: sqlite3.Connection | None = getattr(_local, "conn", None)
    if conn is None:
        conn = sqlite3.connect(os.environ["BENCH_CEILING_DB"], isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        _local.conn = conn
    return conn


@app.get("/item/<int:item_id>")
def item(item_id: int) -> ResponseReturnValue:
    row = _connection().execute("SELECT id, name FROM items WHERE id = ?", (item_id,)).fetchone()
    return jsonify(id=row[0], name=row[1])


def make_db(path: str, rows: int = 10_000) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO items VALUES (?, ?)", [(i, f"item {i}") for i in range(1, rows + 1)]
    )
    conn.execute("COMMIT")
    conn.close()
