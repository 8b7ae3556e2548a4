"""The `upload` message through the Flask test client: a collection Anki wrote is taken (its
schema time becomes the collection's), and one that is not a readable Anki collection, or
is past the limits, is refused with nothing written. The real client is in
`test_anki_sync_upload.py`."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
import zstandard
from anki.collection import Collection
from flask.testing import FlaskClient
from sqlalchemy import Engine, select

from flashcards.anki.reader import unicase
from flashcards.anki_sync import kept
from flashcards.storage.models import AnkiCollection, AnkiKeptObject
from tests.test_anki_sync_wire import CLIENT, answer_json, count, decoded, person, post, refused

__all__ = ["person"]


@pytest.fixture(scope="module")
def anki_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A collection as a current client uploads it (schema 18): two notes of its own."""
    path = tmp_path_factory.mktemp("upload") / "collection.anki2"
    col = Collection(str(path))
    basic = col.models.by_name("Basic")
    assert basic is not None
    for front in ("uno", "dos"):
        note = col.new_note(basic)
        note["Front"], note["Back"] = front, "number"
        col.add_note(note, col.decks.id("Numbers") or 1)
    col.close(downgrade=False)
    return path


def key_of(client: FlaskClient) -> str:
    from tests.test_anki_sync_wire import host_key

    key = host_key(client)
    answer_json(post(client, "meta", {"v": 11, "cv": CLIENT}, key=key, session="u"))
    return key


def upload(client: FlaskClient, key: str, data: bytes) -> object:
    return post(client, "upload", key=key, session="u", raw=zstandard.compress(data))


def stamps(engine: Engine) -> tuple[int, int]:
    with engine.connect() as conn:
        row = conn.execute(select(AnkiCollection.scm, AnkiCollection.usn)).one()
    return int(row.scm), int(row.usn)


def test_a_collection_anki_wrote_is_taken(
    client: FlaskClient, engine: Engine, person: int, anki_file: Path
) -> None:
    key = key_of(client)
    response = upload(client, key, anki_file.read_bytes())
    assert decoded(response) == b"OK"  # type: ignore[arg-type]
    with sqlite3.connect(anki_file) as conn:
        scm = conn.execute("SELECT scm FROM col").fetchone()[0]
    assert stamps(engine)[0] == scm  # the person's other devices: a full sync
    assert count(engine, AnkiKeptObject) > 2  # its notes, cards, deck, note types


def damaged(anki_file: Path, tmp_path: Path, sql: str) -> bytes:
    path = tmp_path / "damaged.anki2"
    shutil.copy(anki_file, path)
    conn = sqlite3.connect(path)
    conn.create_collation("unicase", unicase)
    conn.executescript(sql)
    conn.close()  # which writes its journal back into the file
    return path.read_bytes()


CASES: dict[str, Callable[[Path, Path], bytes]] = {
    "not sqlite": lambda f, t: b"SQLite format 3\x00" + b"\x00" * 100,
    "not a collection": lambda f, t: damaged(f, t, "DROP TABLE notes; DROP TABLE cards;"),
    "a view for notes": lambda f, t: damaged(
        f, t, "ALTER TABLE notes RENAME TO n2; CREATE VIEW notes AS SELECT * FROM n2;"
    ),
    "a newer schema": lambda f, t: damaged(f, t, "UPDATE col SET ver = 19;"),
    "a damaged note type": lambda f, t: damaged(f, t, "UPDATE notetypes SET config = x'0a05';"),
    "a note type table missing": lambda f, t: damaged(f, t, "DROP TABLE deck_config;"),
    "times that are not times": lambda f, t: damaged(
        f, t, "UPDATE col SET mod = 9223372036854775807;"
    ),
    # SQLite keeps "1e999" in an INTEGER column as a REAL infinity, which no JSON holds.
    "an infinite sort field": lambda f, t: damaged(f, t, "UPDATE notes SET sfld = '1e999';"),
    "an integer for a blob": lambda f, t: damaged(f, t, "UPDATE decks SET kind = 250000000;"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_what_is_not_a_readable_collection_is_refused_with_nothing_written(
    client: FlaskClient, engine: Engine, person: int, anki_file: Path, tmp_path: Path, case: str
) -> None:
    key = key_of(client)
    before = stamps(engine)
    refused(upload(client, key, CASES[case](anki_file, tmp_path)), 400, "Bad Request")  # type: ignore[arg-type]
    assert stamps(engine) == before
    assert count(engine, AnkiKeptObject) == 0


def test_a_collection_past_the_limits_is_refused_with_nothing_written(
    client: FlaskClient,
    engine: Engine,
    person: int,
    anki_file: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = key_of(client)
    before = stamps(engine)
    monkeypatch.setattr(kept, "LIMIT", 3)  # two notes and their two cards are four
    response = upload(client, key, anki_file.read_bytes())
    refused(response, 413, "Request Entity Too Large")  # type: ignore[arg-type]
    assert stamps(engine) == before
    assert count(engine, AnkiKeptObject) == 0


def test_a_schema_11_collection_whose_note_types_are_not_json_is_refused(
    client: FlaskClient, engine: Engine, person: int, tmp_path: Path
) -> None:
    path = tmp_path / "collection.anki2"
    col = Collection(str(path))
    col.close(downgrade=True)  # schema 11, as older clients keep it
    data = damaged(path, tmp_path, "UPDATE col SET models = '{\"1\": ';")
    key = key_of(client)
    refused(upload(client, key, data), 400, "Bad Request")  # type: ignore[arg-type]
    assert count(engine, AnkiKeptObject) == 0


def test_a_schema_11_collection_is_taken(
    client: FlaskClient, engine: Engine, person: int, tmp_path: Path
) -> None:
    path = tmp_path / "collection.anki2"
    col = Collection(str(path))
    col.decks.id("Old client")
    col.close(downgrade=True)
    key = key_of(client)
    assert decoded(upload(client, key, path.read_bytes())) == b"OK"  # type: ignore[arg-type]
    with engine.connect() as conn:
        names = [
            payload["name"]
            for payload in conn.scalars(select(AnkiKeptObject.payload))
            if isinstance(payload, dict) and "name" in payload
        ]
    assert "Old client" in names


@pytest.mark.parametrize("crt", [10**15, -(10**12)])
def test_a_creation_time_out_of_range_is_taken_as_the_nearest_real_one(
    client: FlaskClient, engine: Engine, person: int, anki_file: Path, tmp_path: Path, crt: int
) -> None:
    """The day numbers the device counts from (`crt`) as its cards' own times are read:
    within 1970 to 2100 (no error, no 500)."""
    key = key_of(client)
    data = damaged(anki_file, tmp_path, f"UPDATE col SET crt = {crt};")
    assert decoded(upload(client, key, data)) == b"OK"  # type: ignore[arg-type]
    with engine.connect() as conn:
        taken = conn.scalar(select(AnkiCollection.crt))
    assert taken is not None and 0 <= taken <= 4_102_444_800 + 10 * 86_400
