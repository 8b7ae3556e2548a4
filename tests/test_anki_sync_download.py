"""A full download after answers alone: the kept file with the answered cards' rows made
again (`download.patched`) is the file a whole build gives, row for row, and its bookkeeping
the same; any other change, or an undone answer, builds it all again. Real databases (both),
real collection files."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, delete, select, update
from sqlalchemy.orm import Session

from flashcards.anki_sync import download, sessions
from flashcards.anki_sync.wire import decompress
from flashcards.srs import study
from flashcards.storage.engine import transaction
from flashcards.storage.models import (
    AnkiCollectionFile,
    AnkiSyncObject,
    Card,
    CardText,
)
from flashcards.storage.schema import utcnow
from tests.factories import answer, card_ids, make_deck, make_user, subscribe


def person_with_answers(engine: Engine) -> tuple[int, list[int]]:
    now = utcnow() - timedelta(days=3)
    with transaction(engine) as s:
        uid = make_user(s, "patch@example.com")
        deck = make_deck(s, "patch", cards=8, locales=("en", "es"))
        subscribe(s, uid, deck, "es")
        cards = card_ids(s, deck.id)
        for card_id in cards[:4]:
            answer(s, uid, card_id, 3, now=now)
    return uid, cards


def downloaded(engine: Engine, uid: int, path: Path) -> Path:
    with transaction(engine) as s:
        made = download.collection_file(s, uid, now=utcnow())
    path.write_bytes(decompress(made.compressed, made.size))
    return path


def contents(path: Path) -> dict[str, Any]:
    """What a device reads from the file, stamps (mod, usn) aside."""
    with sqlite3.connect(path) as conn:
        tables = {
            name: conn.execute(f"SELECT * FROM {name} ORDER BY id").fetchall()
            for name in ("notes", "cards", "revlog")
        }
        decks, dconf, conf, tags = conn.execute(
            "SELECT decks, dconf, conf, tags FROM col"
        ).fetchone()
    objects = {}
    for name, blob in (("decks", decks), ("dconf", dconf)):
        objects[name] = {
            k: {f: v for f, v in o.items() if f not in ("mod", "usn")}
            for k, o in json.loads(blob).items()
        }
    return {**tables, **objects, "conf": json.loads(conf), "tags": sorted(json.loads(tags))}


def digests(engine: Engine, uid: int) -> dict[tuple[int, int], str | None]:
    with engine.connect() as conn:
        rows = conn.execute(
            select(AnkiSyncObject.kind, AnkiSyncObject.oid, AnkiSyncObject.digest).where(
                AnkiSyncObject.user_id == uid
            )
        )
        return {(r.kind, r.oid): r.digest for r in rows}


def patch_applies(session: Session, uid: int) -> bool:
    stamps = sessions.collection(session, uid, utcnow())
    kept = session.get(AnkiCollectionFile, uid)
    found = download.patched(
        session, uid, kept, stamps, sessions.fingerprint(session, uid),
        now=utcnow(), mod_ms=stamps.mod + 1,
    )  # fmt: skip
    session.rollback()
    return found is not None


def built_afresh(engine: Engine, uid: int, path: Path) -> Path:
    """The whole build's file: the kept one forgotten first."""
    with transaction(engine) as s:
        s.execute(delete(AnkiCollectionFile).where(AnkiCollectionFile.user_id == uid))
    return downloaded(engine, uid, path)


def test_answers_alone_patch_the_kept_file_into_the_whole_builds(
    engine: Engine, tmp_path: Path
) -> None:
    uid, cards = person_with_answers(engine)
    first = contents(downloaded(engine, uid, tmp_path / "first.anki2"))
    when = utcnow()
    with transaction(engine) as s:
        # One card answered before (its log grows), one new to the person, twice; the first
        # two in the same millisecond (Anki's revlog ids are milliseconds, and unique).
        for card_id, at in ((cards[1], when), (cards[6], when), (cards[6], when + timedelta(1))):
            answer(s, uid, card_id, 3, now=at, reviewed_at=at)
    with Session(engine) as s:
        assert patch_applies(s, uid)
    patched = contents(downloaded(engine, uid, tmp_path / "patched.anki2"))
    patched_digests = digests(engine, uid)
    assert patched != first
    assert len(patched["revlog"]) == len(first["revlog"]) + 3
    assert {row[0] for row in patched["revlog"]} >= {
        int(when.timestamp() * 1000) + i for i in (0, 1)
    }
    whole = contents(built_afresh(engine, uid, tmp_path / "whole.anki2"))
    assert patched == whole
    assert patched_digests == digests(engine, uid)


def test_an_answer_to_a_retired_card_builds_the_whole_file(engine: Engine, tmp_path: Path) -> None:
    """A retired card's answers go with the whole collection alone (`projection`): one
    answered after the kept file (a study page open since) is no patch."""
    uid, cards = person_with_answers(engine)
    with transaction(engine) as s:
        s.execute(update(Card).where(Card.id == cards[1]).values(retired_at=utcnow()))
    first = contents(downloaded(engine, uid, tmp_path / "first.anki2"))
    with transaction(engine) as s:
        answer(s, uid, cards[1], 3, now=utcnow())
    with Session(engine) as s:
        assert not patch_applies(s, uid)
    after = contents(downloaded(engine, uid, tmp_path / "after.anki2"))
    assert len(after["revlog"]) == len(first["revlog"]) + 1


def test_a_text_edit_builds_the_whole_file(engine: Engine, tmp_path: Path) -> None:
    uid, cards = person_with_answers(engine)
    downloaded(engine, uid, tmp_path / "first.anki2")
    with transaction(engine) as s:
        answer(s, uid, cards[5], 3, now=utcnow())
        text = s.get(CardText, (cards[2], "es"))
        assert text is not None
        text.question, text.updated_at = "¿Editada?", utcnow()
    with Session(engine) as s:
        assert not patch_applies(s, uid)
    edited = contents(downloaded(engine, uid, tmp_path / "edited.anki2"))
    assert any("¿Editada?" in note[6] for note in edited["notes"])
    assert edited == contents(built_afresh(engine, uid, tmp_path / "whole.anki2"))


def test_an_undone_answer_builds_the_whole_file(engine: Engine, tmp_path: Path) -> None:
    uid, cards = person_with_answers(engine)
    with transaction(engine) as s:
        answer(s, uid, cards[7], 3, now=utcnow())
    downloaded(engine, uid, tmp_path / "first.anki2")
    with transaction(engine) as s:
        study.undo(s, uid, now=utcnow())  # an answer the kept file holds
        answer(s, uid, cards[6], 3, now=utcnow())
    with Session(engine) as s:
        assert not patch_applies(s, uid)
    undone = contents(downloaded(engine, uid, tmp_path / "undone.anki2"))
    assert undone == contents(built_afresh(engine, uid, tmp_path / "whole.anki2"))


def test_an_undone_answer_whose_id_comes_again_builds_the_whole_file(
    engine: Engine, tmp_path: Path
) -> None:
    # SQLite gives the undone answer's row id to the next answer: the log then has as many
    # rows up to the kept file's newest as it had, and the cards answered after it are not
    # the only ones that changed.
    uid, cards = person_with_answers(engine)
    with transaction(engine) as s:
        answer(s, uid, cards[7], 3, now=utcnow())
    downloaded(engine, uid, tmp_path / "first.anki2")
    with transaction(engine) as s:
        study.undo(s, uid, now=utcnow())
        answer(s, uid, cards[6], 3, now=utcnow())
        answer(s, uid, cards[5], 3, now=utcnow())
    with Session(engine) as s:
        assert not patch_applies(s, uid)
    undone = contents(downloaded(engine, uid, tmp_path / "undone.anki2"))
    assert undone == contents(built_afresh(engine, uid, tmp_path / "whole.anki2"))
