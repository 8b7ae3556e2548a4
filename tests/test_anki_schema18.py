"""Schema 18's note types, decks and options groups read by hand (`anki.schema18`) are what
Anki itself gives as their schema-11 form, key by key, for a collection made with the real
`anki` package: stock and custom note types, subdecks with limits, a filtered deck, an
options group of its own."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anki.collection import Collection

from flashcards.anki import schema18
from flashcards.anki.errors import AnkiPackageError
from flashcards.anki.protobuf import Message
from flashcards.anki.reader import unicase
from flashcards.anki.structure import settings


def rich_collection(path: Path) -> dict[str, list[dict[str, Any]]]:
    """A collection with a bit of everything; Anki's own schema-11 view of it."""
    col = Collection(str(path))
    models = col.models
    basic = models.by_name("Basic")
    assert basic is not None
    vocab = models.copy(basic)
    vocab["name"], vocab["css"] = "Vocab", ".card { color: #333 }"
    example = models.new_field("Example")
    example["sticky"], example["description"] = True, "A sentence using it"
    models.add_field(vocab, example)
    vocab["tmpls"][0]["bqfmt"] = "{{Front}}"
    models.update_dict(vocab)
    week = col.decks.id("Lang::Spanish::Week 1")
    assert week is not None
    deck = col.decks.get(week)
    assert deck is not None
    deck["desc"], deck["reviewLimit"], deck["extendNew"] = "My <b>deck</b>", 50, 3
    slow = col.decks.add_config_returning_id("Slow")
    options = col.decks.get_config(slow)
    assert options is not None
    options["new"]["perDay"], options["new"]["delays"] = 5, [1.5, 20.0]
    options["rev"]["maxIvl"], options["desiredRetention"] = 400, 0.85
    options["fsrsParams6"] = [round(0.1 * i, 1) for i in range(21)]
    options["new"]["order"] = 0  # random
    col.decks.save(options)
    deck["conf"] = slow
    col.decks.save(deck)
    col.decks.new_filtered("Due today")
    note = col.new_note(vocab)
    note["Front"], note["Back"] = "comer", "to eat"
    col.add_note(note, week)
    want = {
        "notetypes": col.models.all(),
        "decks": col.decks.all(),
        "dconf": col.decks.all_config(),
    }
    col.close(downgrade=False)  # schema 18, as a client uploads it
    return {name: sorted(objects, key=lambda o: o["id"]) for name, objects in want.items()}


@pytest.fixture
def schema18_file(tmp_path: Path) -> Iterator[tuple[sqlite3.Connection, dict[str, Any]]]:
    path = tmp_path / "collection.anki2"
    want = rich_collection(path)
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    conn.create_collation("unicase", unicase)
    yield conn, want
    conn.close()


def test_note_types_decks_and_options_are_anki_s_own_schema_11_objects(
    schema18_file: tuple[sqlite3.Connection, dict[str, Any]],
) -> None:
    conn, want = schema18_file
    assert conn.execute("SELECT ver FROM col").fetchone()[0] == 18
    assert schema18.notetypes(conn) == want["notetypes"]
    assert schema18.decks(conn) == want["decks"]
    assert schema18.deck_configs(conn) == want["dconf"]
    assert [d["name"] for d in schema18.decks(conn)].count("Lang::Spanish::Week 1") == 1
    assert "curDeck" in settings(conn)


@pytest.mark.parametrize(
    "blob",
    [b"\x08", b"\x0a\x05ab", b"\x0f", b"\x15\x00\x00", b"\x08" + b"\xff" * 11],
    ids=["cut varint", "short bytes", "unknown wire type", "short fixed32", "varint too long"],
)
def test_a_damaged_protobuf_is_a_package_error(blob: bytes) -> None:
    with pytest.raises(AnkiPackageError, match="damaged protobuf"):
        Message(blob)


def test_nesting_past_anki_s_depth_is_refused() -> None:
    blob = b""
    for _ in range(12):
        blob = b"\x0a" + bytes([len(blob)]) + blob
    message = Message(blob)
    with pytest.raises(AnkiPackageError):
        for _ in range(12):
            inner = message.message(1)
            assert inner is not None
            message = inner


def _edit(path: Path, sql: str, *args: Any) -> None:
    conn = sqlite3.connect(path)
    conn.create_collation("unicase", unicase)
    conn.execute(sql, args)
    conn.commit()
    conn.close()


def _reopened(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    conn.create_collation("unicase", unicase)
    return conn


def test_keys_an_older_anki_kept_in_an_options_groups_parts_join_those_parts(
    tmp_path: Path,
) -> None:
    path = tmp_path / "collection.anki2"
    rich_collection(path)
    extra = json.dumps({"new": {"separate": True}, "rev": {"fuzz": 0.05}}).encode()
    # Field 255 (`other`), length-delimited: Anki before 2.1.28 kept such keys there.
    field = b"\xfa\x0f" + bytes([len(extra)]) + extra
    conn = _reopened(path)
    (config,) = conn.execute("SELECT config FROM deck_config WHERE id = 1").fetchone()
    conn.close()
    _edit(path, "UPDATE deck_config SET config = ? WHERE id = 1", bytes(config) + field)
    conn = _reopened(path)
    (default,) = [c for c in schema18.deck_configs(conn) if c["id"] == 1]
    conn.close()
    assert default["new"]["separate"] is True and default["new"]["perDay"] == 20
    assert default["rev"]["fuzz"] == 0.05 and default["rev"]["perDay"] == 200


def test_a_number_where_a_config_blob_belongs_is_refused_not_expanded(tmp_path: Path) -> None:
    path = tmp_path / "collection.anki2"
    rich_collection(path)
    _edit(path, "UPDATE notetypes SET config = 250000000")
    conn = _reopened(path)
    with pytest.raises(AnkiPackageError, match="damaged protobuf"):
        schema18.notetypes(conn)
    conn.close()
