"""A full upload with Anki's own client against a real `flashcards serve`, on SQLite and
PostgreSQL: someone moving from AnkiWeb uploads a collection made with several note types
(Basic, Basic and reversed, Cloze, a custom one with an extra field and its own CSS),
subdecks, an options group of its own, tags, flags, suspended and buried cards and answers;
a second device downloads it and gets the same collection, field by field; edits and
deletions on either device then reach the other. A damaged upload changes nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anki.collection import Collection
from anki.sync_pb2 import SyncAuth, SyncCollectionResponse, SyncStatusResponse
from sqlalchemy import Engine, func, select

from flashcards.anki.schema import NOTETYPE_NAME
from flashcards.anki_sync import snapshot
from flashcards.storage.engine import transaction
from flashcards.storage.models import AnkiKeptObject, ReviewLog, SchedulerSettings
from tests.factories import make_user
from tests.test_anki_sync_client import (
    EMAIL,
    ID_BASE,
    Person,
    downloaded,
    new_device,
    person,
    server,
    sign_in,
)
from tests.test_servers import Server

__all__ = ["person", "server"]  # the fixtures, shared with the sync client's tests
pytestmark = pytest.mark.slow
Required = SyncCollectionResponse.ChangesRequired


@pytest.fixture
def newcomer(engine: Engine) -> int:
    """Someone with an account and nothing in it yet, as on their first day."""
    with transaction(engine) as s:
        return make_user(s, EMAIL)


def fill(col: Collection) -> None:
    """A collection with a bit of everything a long-time Anki user has."""
    models = col.models
    basic, reversed_, cloze = (models.by_name(n) for n in
                               ("Basic", "Basic (and reversed card)", "Cloze"))  # fmt: skip
    assert basic is not None and reversed_ is not None and cloze is not None
    vocab = models.copy(basic)
    vocab["name"], vocab["css"] = "Vocab", ".card { color: #333; }"
    models.add_field(vocab, models.new_field("Example"))
    models.update_dict(vocab)
    week = col.decks.id("Languages::Spanish::Week 1")
    korean = col.decks.id("Languages::Korean")
    assert week is not None and korean is not None
    defaults = col.decks.get_config(1)
    assert defaults is not None
    defaults["new"]["perDay"], defaults["new"]["delays"] = 30, [1.0, 10.0, 60.0]
    col.decks.save(defaults)
    slow = col.decks.add_config_returning_id("Slow")
    options = col.decks.get_config(slow)
    assert options is not None
    options["new"]["perDay"] = 5
    col.decks.save(options)
    deck = col.decks.get(week)
    assert deck is not None
    deck["conf"] = slow
    col.decks.save(deck)
    for i in range(6):
        note = col.new_note(vocab)
        note["Front"], note["Back"], note["Example"] = f"palabra {i}", f"word {i}", "¡Hola!"
        note.tags = ["spanish", "week::1"]
        col.add_note(note, week)
    note = col.new_note(cloze)
    note["Text"] = "{{c1::Seoul}} is the capital of {{c2::Korea}}"
    col.add_note(note, korean)
    note = col.new_note(reversed_)
    note["Front"], note["Back"] = "물", "water"
    col.add_note(note, korean)
    note = col.new_note(basic)
    note["Front"], note["Back"] = "Default deck", "card"
    col.add_note(note, 1)
    cards = sorted(col.find_cards(""))
    col.sched.suspend_cards(cards[:1])
    col.sched.bury_cards(cards[1:2])
    col.set_user_flag_for_cards(3, cards[2:3])
    col.decks.select(week)
    for _ in range(3):  # answers: a review log, cards in learning
        card = col.sched.getCard()
        assert card is not None
        col.sched.answerCard(card, 3)


def snapshot_of(col: Collection) -> dict[str, Any]:
    """What a person sees of their collection: every row that is content or schedule, and
    the note types, decks and options groups but the stamps each device sets on its own."""

    def rows(sql: str) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in col.db.all(sql)]

    stamps = ("mod", "usn")
    cards = [
        (*c[:-1], _schedule_data(c[-1]))
        for c in rows(
            "SELECT id, nid, did, ord, type, queue, due, ivl, factor, reps, lapses, left, odue,"
            " odid, flags, data FROM cards ORDER BY id"
        )
    ]
    return {
        "notes": rows("SELECT id, guid, mid, tags, flds, flags, data FROM notes ORDER BY id"),
        # The browser's tag list, which Anki keeps apart from the notes.
        "tags": sorted(col.tags.all()),
        "cards": cards,
        # The factor of an answer given in a deck studied here is the service's FSRS
        # difficulty then (Anki's own answers in learning have none).
        "revlog": rows("SELECT id, cid, ease, ivl, lastIvl, time, type FROM revlog"),
        "notetypes": sorted(
            ({k: v for k, v in m.items() if k not in stamps} for m in col.models.all()),
            key=lambda m: m["id"],
        ),
        "decks": sorted(
            ({k: v for k, v in d.items() if k not in stamps} for d in col.decks.all()),
            key=lambda d: d["id"],
        ),
        # The default options group (1) is the person's settings here, ours, under its name.
        "default options": col.decks.get_config(1)["name"],
        "options": sorted(
            (
                {k: v for k, v in c.items() if k not in stamps}
                for c in col.decks.all_config()
                if c["id"] != 1
            ),
            key=lambda c: c["id"],
        ),
    }


def _schedule_data(data: str) -> dict[str, Any]:
    """A card's data but its memory state, which the service computes (FSRS, its own
    rounding) for the cards studied here, and Anki's note of a reviewed card's first place
    among the new ones."""
    found = json.loads(data or "{}")
    return {k: v for k, v in found.items() if k not in ("s", "d", "dr", "decay", "pos")}


@pytest.fixture
def uploaded(
    newcomer: int, server: Server, tmp_path: Path
) -> Iterator[tuple[Collection, SyncAuth]]:
    col = new_device(tmp_path)
    fill(col)
    (tmp_path / "before.json").write_text(json.dumps(snapshot_of(col)))
    auth = sign_in(col, server)
    first = col.sync_collection(auth, False)
    assert first.required == Required.FULL_UPLOAD  # we are empty, the device is not
    col.close_for_full_sync()
    col.full_upload_or_download(auth=auth, server_usn=first.server_media_usn, upload=True)
    col.reopen(after_full_sync=True)
    try:
        yield col, auth
    finally:
        col.close()


def test_an_uploaded_collection_downloads_to_another_device_the_same(
    engine: Engine, uploaded: tuple[Collection, SyncAuth], server: Server, tmp_path: Path
) -> None:
    col, auth = uploaded
    col.sync_collection(auth, False)  # a normal sync: whatever the service adds
    assert col.sync_status(auth).required == SyncStatusResponse.NO_CHANGES
    tablet, tablet_auth = downloaded(tmp_path, server, "tablet")
    try:
        assert snapshot_of(tablet) == snapshot_of(col)
        # As the phone had it before uploading, with the service's own note type besides.
        before = json.loads((tmp_path / "before.json").read_text())
        now = json.loads(json.dumps(snapshot_of(tablet)))
        now["notetypes"] = [m for m in now["notetypes"] if m["name"] != NOTETYPE_NAME]
        assert now == before

        # Then each device's edits and deletions reach the other, once.
        nid = tablet.find_notes("tag:spanish")[0]
        note = tablet.get_note(nid)
        note["Back"] = "word, edited on the tablet"
        note.tags.append("tablet::edited")
        tablet.update_note(note)
        gone = tablet.find_notes('"note:Basic (and reversed card)"')
        tablet.remove_notes(gone)
        tablet.sync_collection(tablet_auth, False)
        col.sync_collection(auth, False)
        assert col.get_note(nid)["Back"] == "word, edited on the tablet"
        assert not col.find_notes('"note:Basic (and reversed card)"')
        cloze = col.find_cards('"note:Cloze"')
        col.set_user_flag_for_cards(1, cloze)
        col.sync_collection(auth, False)
        tablet.sync_collection(tablet_auth, False)
        assert {tablet.get_card(c).user_flag() for c in cloze} == {1}
        assert snapshot_of(tablet) == snapshot_of(col)
        assert tablet.sync_status(tablet_auth).required == SyncStatusResponse.NO_CHANGES
    finally:
        tablet.close()


def test_a_second_upload_asks_the_other_devices_for_a_full_sync(
    engine: Engine, uploaded: tuple[Collection, SyncAuth], server: Server, tmp_path: Path
) -> None:
    col, auth = uploaded
    tablet, tablet_auth = downloaded(tmp_path, server, "tablet")
    try:
        col.close_for_full_sync()
        col.full_upload_or_download(auth=auth, server_usn=None, upload=True)
        col.reopen(after_full_sync=True)
        assert tablet.sync_collection(tablet_auth, False).required in (
            Required.FULL_SYNC,
            Required.FULL_DOWNLOAD,
        )
    finally:
        tablet.close()
    with engine.connect() as conn:
        settings = conn.execute(
            select(SchedulerSettings.new_per_day, SchedulerSettings.learning_steps)
        ).one()
        assert (settings.new_per_day, list(settings.learning_steps)) == (30, [60, 600, 3600])
        kept_notes = conn.scalar(select(func.count()).where(AnkiKeptObject.kind == snapshot.NOTE))
    assert kept_notes == 9  # the second upload replaced the first's, not added to it


def test_an_upload_from_a_device_that_studies_our_decks_keeps_them_and_takes_its_answers(
    engine: Engine, person: Person, server: Server, tmp_path: Path
) -> None:
    col, auth = downloaded(tmp_path, server)
    try:
        with engine.connect() as conn:
            logs_before = conn.scalar(select(func.count()).select_from(ReviewLog))
        col.decks.select(ID_BASE + person.deck_ids[0] * 128 + 1)
        card = col.sched.getCard()
        assert card is not None
        col.sched.answerCard(card, 3)
        models = col.models
        basic = models.new("Own basic")  # a note type of the device's own
        for name in ("Front", "Back"):
            models.add_field(basic, models.new_field(name))
        template = models.new_template("Card 1")
        template["qfmt"], template["afmt"] = "{{Front}}", "{{Back}}"
        models.add_template(basic, template)
        models.add_dict(basic)
        note = col.new_note(models.by_name("Own basic"))  # type: ignore[arg-type]
        note["Front"], note["Back"] = "mine", "alone"
        col.add_note(note, col.decks.id("Personal") or 1)
        # The person picks "upload" (as on a conflict Anki cannot merge).
        col.close_for_full_sync()
        col.full_upload_or_download(auth=auth, server_usn=None, upload=True)
        col.reopen(after_full_sync=True)
        with engine.connect() as conn:
            assert conn.scalar(select(func.count()).select_from(ReviewLog)) == logs_before + 1
        col.sync_collection(auth, False)
        assert col.sync_status(auth).required == SyncStatusResponse.NO_CHANGES
        tablet, _ = downloaded(tmp_path, server, "tablet")
        try:
            assert tablet.find_notes("mine")
            assert tablet.decks.name(ID_BASE + person.deck_ids[0] * 128 + 1) == col.decks.name(
                ID_BASE + person.deck_ids[0] * 128 + 1
            )
            assert tablet.card_count() == col.card_count()
            assert tablet.get_card(card.id).reps == col.get_card(card.id).reps
        finally:
            tablet.close()
    finally:
        col.close()
