"""Anki's media sync (`/msync/`) with Anki's own client (the `anki` package) against a real
`flashcards serve`, on SQLite and PostgreSQL: files added, replaced and deleted on one device
reach the other; what is stored; and uploads refused whole (a bad zip, a full quota)."""

from __future__ import annotations

import hashlib
import io
import json
import time
import unicodedata
import zipfile
from pathlib import Path

import pytest
import zstandard
from anki.collection import Collection
from anki.sync_pb2 import SyncAuth
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import Engine, delete, select
from sqlalchemy.orm import Session
from werkzeug.test import TestResponse

from flashcards.anki_sync import media, wire
from flashcards.decks import card_editing
from flashcards.people import media_folder
from flashcards.storage.engine import transaction
from flashcards.storage.models import Card, CardText, Deck, MediaBlob, MediaFile, User
from flashcards.storage.schema import utcnow
from tests.factories import card_ids, make_deck, make_user, subscribe
from tests.test_anki_sync_client import ID_BASE, Person, downloaded, person, server
from tests.test_anki_sync_wire import (
    CLIENT,
    EMAIL,
    answer_json,
    decoded,
    host_key,
    refused,
    sync_header,
)
from tests.test_servers import Server

__all__ = ["person", "server"]  # the fixtures, shared with the sync client's tests
pytestmark = pytest.mark.slow

PICTURE = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40
SOUND = b"ID3" + b"\x01\x02" * 5000
ACCENTED = unicodedata.normalize("NFC", "canción del día.mp3")


def sync_media(col: Collection, auth: SyncAuth) -> None:
    """One media sync, to its end; Anki's client raises here if it failed."""
    col.sync_media(auth)
    deadline = time.monotonic() + 30
    while col.media_sync_status().active:
        assert time.monotonic() < deadline, "media sync did not end"
        time.sleep(0.05)


def files_of(col: Collection) -> dict[str, bytes]:
    folder = Path(col.media.dir())
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def stored(engine: Engine, user_id: int) -> dict[str, tuple[int, str]]:
    """The person's media rows: name -> (size, sha1)."""
    with Session(engine) as s:
        rows = s.scalars(select(MediaFile).where(MediaFile.user_id == user_id))
        return {r.name: (r.size, r.sha1) for r in rows}


def blobs(engine: Engine, user_id: int) -> set[str]:
    with Session(engine) as s:
        return set(s.scalars(select(MediaBlob.sha1).where(MediaBlob.user_id == user_id)))


def test_media_added_replaced_and_deleted_on_one_device_reach_the_other(
    engine: Engine, person: Person, server: Server, tmp_path: Path
) -> None:
    phone, phone_auth = downloaded(tmp_path, server, "phone")
    tablet, tablet_auth = downloaded(tmp_path, server, "tablet")
    try:
        assert phone.media.write_data("pic.png", PICTURE) == "pic.png"
        assert phone.media.write_data(ACCENTED, SOUND) == ACCENTED
        sync_media(phone, phone_auth)
        saved = stored(engine, person.user_id)
        assert {name: size for name, (size, _) in saved.items()} == {
            "pic.png": len(PICTURE),
            ACCENTED: len(SOUND),
        }
        # The collection's meta names the media usn, so a device knows there is media to fetch.
        assert tablet.sync_collection(tablet_auth, False).server_media_usn == 2

        sync_media(tablet, tablet_auth)
        assert files_of(tablet) == {"pic.png": PICTURE, ACCENTED: SOUND}

        # Added and deleted on the tablet: both reach the phone.
        assert tablet.media.write_data("chart.svg.png", PICTURE[::-1]) == "chart.svg.png"
        tablet.media.trash_files([ACCENTED])
        sync_media(tablet, tablet_auth)
        sync_media(phone, phone_auth)
        assert files_of(phone) == {"pic.png": PICTURE, "chart.svg.png": PICTURE[::-1]}
        saved = stored(engine, person.user_id)
        assert saved[ACCENTED][0] == 0  # the deletion is kept, for devices to learn of
        # The deleted file's content is gone; the live ones are kept.
        assert blobs(engine, person.user_id) == {saved["pic.png"][1], saved["chart.svg.png"][1]}
        # Nothing left to do on either side: both report the same count to the server's check.
        sync_media(phone, phone_auth)
        sync_media(tablet, tablet_auth)
    finally:
        phone.close()
        tablet.close()


def upload_zip(entries: list[tuple[str, bytes | None]], *, listing: object = None) -> bytes:
    """An `uploadChanges` zip as Anki's client makes it: entries "0", "1"... and `_meta`."""
    out = io.BytesIO()
    names: list[list[str | None]] = []
    with zipfile.ZipFile(out, "w") as archive:
        for index, (name, data) in enumerate(entries):
            if data is None:
                names.append([name, None])
            else:
                archive.writestr(str(index), data)
                names.append([name, str(index)])
        archive.writestr("_meta", json.dumps(names if listing is None else listing))
    return out.getvalue()


def msync(client: FlaskClient, method: str, body: object, *, key: str) -> TestResponse:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {"Content-Type": "application/octet-stream", wire.HEADER: sync_header(key)}
    return client.post(f"/msync/{method}", data=zstandard.compress(data), headers=headers)


@pytest.fixture
def learner(engine: Engine) -> int:
    with transaction(engine) as s:
        return make_user(s, EMAIL, locale="es")


def test_each_media_message_as_anki_sends_it(
    client: FlaskClient, engine: Engine, learner: int
) -> None:
    key = host_key(client)
    assert answer_json(msync(client, "begin", {"v": CLIENT}, key=key)) == {
        "data": {"usn": 0, "sk": key},
        "err": "",
    }
    zipped = upload_zip([("a.png", PICTURE), ("b.mp3", SOUND), ("gone.txt", None)])
    # Two files kept; the deletion of a file never kept changes nothing and takes no usn.
    assert answer_json(msync(client, "uploadChanges", zipped, key=key)) == {
        "data": [3, 2],
        "err": "",
    }
    same_again = upload_zip([("a.png", PICTURE)])
    assert answer_json(msync(client, "uploadChanges", same_again, key=key))["data"] == [1, 2]
    # A new content under a name takes a usn; the old content, no longer used, goes.
    replaced = upload_zip([("b.mp3", SOUND[::-1])])
    assert answer_json(msync(client, "uploadChanges", replaced, key=key))["data"] == [1, 3]
    replaced_back = upload_zip([("b.mp3", SOUND)])
    assert answer_json(msync(client, "uploadChanges", replaced_back, key=key))["data"] == [1, 4]
    assert blobs(engine, learner) == {
        hashlib.sha1(PICTURE).hexdigest(),
        hashlib.sha1(SOUND).hexdigest(),
    }
    changes = answer_json(msync(client, "mediaChanges", {"lastUsn": 0}, key=key))["data"]
    assert changes == [
        ["a.png", 1, hashlib.sha1(PICTURE).hexdigest()],
        ["b.mp3", 4, hashlib.sha1(SOUND).hexdigest()],
    ]
    assert answer_json(msync(client, "mediaChanges", {"lastUsn": 4}, key=key))["data"] == []
    files = decoded(msync(client, "downloadFiles", {"files": ["b.mp3", "a.png"]}, key=key))
    with zipfile.ZipFile(io.BytesIO(files)) as archive:
        assert json.loads(archive.read("_meta")) == {"0": "b.mp3", "1": "a.png"}
        assert archive.read("0") == SOUND and archive.read("1") == PICTURE
    assert answer_json(msync(client, "mediaSanity", {"local": 2}, key=key))["data"] == "OK"
    assert answer_json(msync(client, "mediaSanity", {"local": 3}, key=key))["data"] == (
        "mediaSanity"
    )
    deleted = upload_zip([("a.png", None)])
    assert answer_json(msync(client, "uploadChanges", deleted, key=key))["data"] == [1, 5]
    assert answer_json(msync(client, "mediaChanges", {"lastUsn": 4}, key=key))["data"] == [
        ["a.png", 5, ""]
    ]
    assert blobs(engine, learner) == {hashlib.sha1(SOUND).hexdigest()}
    # A deleted file is not served; nor is one never kept.
    refused(msync(client, "downloadFiles", {"files": ["a.png"]}, key=key), 409, "Conflict")
    refused(msync(client, "downloadFiles", {"files": ["nope"]}, key=key), 409, "Conflict")


def test_one_persons_media_is_not_anothers(
    client: FlaskClient, engine: Engine, learner: int
) -> None:
    key = host_key(client)
    msync(client, "uploadChanges", upload_zip([("a.png", PICTURE)]), key=key)
    with transaction(engine) as s:
        make_user(s, "other@example.com")
    other = host_key(client, "other@example.com")
    assert answer_json(msync(client, "mediaChanges", {"lastUsn": 0}, key=other))["data"] == []
    refused(msync(client, "downloadFiles", {"files": ["a.png"]}, key=other), 409, "Conflict")
    assert answer_json(msync(client, "begin", {}, key=other))["data"]["usn"] == 0


def _zip_without_listing() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("0", PICTURE)
    return out.getvalue()


BAD_UPLOADS = {
    "not a zip": b"PK\x03\x04 and then nothing",
    "no file list": _zip_without_listing(),
    "a path": upload_zip([("../evil.png", PICTURE)]),
    "a folder": upload_zip([("dir/evil.png", PICTURE)]),
    "not NFC": upload_zip([(unicodedata.normalize("NFD", "canción.mp3"), SOUND)]),
    "a long name": upload_zip([("x" * 256 + ".png", PICTURE)]),
    "an empty file": upload_zip([("empty.png", b"")]),
    "26 files": upload_zip([(f"{i}.png", PICTURE) for i in range(26)]),
    "a name twice": upload_zip([("a.png", PICTURE), ("a.png", SOUND)]),
    "a missing entry": upload_zip([("a.png", PICTURE)], listing=[["a.png", "7"]]),
    "a list that is not one": upload_zip([("a.png", PICTURE)], listing={"a.png": "0"}),
}


@pytest.mark.parametrize("case", sorted(BAD_UPLOADS))
def test_a_bad_upload_is_refused_whole_and_writes_nothing(
    client: FlaskClient, engine: Engine, learner: int, case: str
) -> None:
    key = host_key(client)
    refused(msync(client, "uploadChanges", BAD_UPLOADS[case], key=key), 400, "Bad Request")
    with Session(engine) as s:
        assert s.scalars(select(MediaFile)).all() == []
        assert s.scalars(select(MediaBlob.sha1)).all() == []


def test_a_bomb_is_cut_off_at_the_files_limit() -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("0", b"\0" * (media_folder.MAX_FILE_BYTES + 1))
        archive.writestr("_meta", json.dumps([["bomb.bin", "0"]]))
    assert len(out.getvalue()) < 200_000
    with pytest.raises(wire.Refused) as refusal:
        media.read_upload(out.getvalue(), max_total=10 * media_folder.MAX_FILE_BYTES)
    assert refusal.value.status == 400 and "100 MiB" in refusal.value.detail


def test_an_upload_over_the_quota_is_refused_in_the_persons_language(
    app: Flask, client: FlaskClient, engine: Engine, learner: int
) -> None:
    app.config["MEDIA_QUOTA_MB"] = 1
    key = host_key(client)
    first = upload_zip([("small.png", PICTURE)])
    assert answer_json(msync(client, "uploadChanges", first, key=key))["data"] == [1, 1]
    big = upload_zip([("big.bin", b"\1" * (1024 * 1024))])
    answer = answer_json(msync(client, "uploadChanges", big, key=key))
    assert "data" not in answer
    assert "1 MB" in answer["err"] and "Verificar archivos multimedia" in answer["err"]
    assert set(stored(engine, learner)) == {"small.png"}  # nothing of it kept
    assert blobs(engine, learner) == {hashlib.sha1(PICTURE).hexdigest()}
    # Deleting one file and adding another in the same zip counts what is left.
    swap = upload_zip([("small.png", None), ("other.png", SOUND)])
    assert answer_json(msync(client, "uploadChanges", swap, key=key))["data"] == [2, 3]


def test_media_goes_with_the_account(client: FlaskClient, engine: Engine, learner: int) -> None:
    key = host_key(client)
    msync(client, "uploadChanges", upload_zip([("a.png", PICTURE)]), key=key)
    with transaction(engine) as s:
        s.execute(delete(User).where(User.id == learner))
    with Session(engine) as s:
        assert s.scalars(select(MediaBlob.sha1)).all() == []
        assert s.scalars(select(MediaFile.name)).all() == []


def test_a_picture_added_to_a_note_in_anki_shows_on_the_web_and_reaches_other_devices(
    engine: Engine, person: Person, server: Server, tmp_path: Path
) -> None:
    with transaction(engine) as s:
        mine = make_deck(s, "pictures", 1, owner_user_id=person.user_id)
        subscribe(s, person.user_id, mine, "en")
        first = card_ids(s, mine.id)[0]
    phone, phone_auth = downloaded(tmp_path, server, "phone")
    tablet, tablet_auth = downloaded(tmp_path, server, "tablet")
    try:
        ours = phone.get_note(ID_BASE + first * 64).note_type()
        assert ours is not None
        assert phone.media.write_data("cell.png", PICTURE) == "cell.png"
        note = phone.new_note(ours)
        note["Front"], note["Back"] = 'Which organelle?<br><img src="cell.png">', "Mitochondria"
        phone.add_note(note, ID_BASE + mine.id * 128 + 1)
        phone.sync_collection(phone_auth, False)
        sync_media(phone, phone_auth)

        # The card names the picture, and the picture is in the folder the web shows it from.
        with Session(engine) as s:
            card = s.scalars(select(Card).where(Card.anki_note_id == note.id)).one()
            text = s.get(CardText, (card.id, "en"))
            assert text is not None and text.question == "Which organelle?\n[image:cell.png]"
            found = media_folder.read_file(s, person.user_id, "cell.png")
            assert found is not None and found[1] == PICTURE
            key = card.key

        # Edited on the web, picture kept: the other device gets the note and the picture.
        with transaction(engine) as s:
            card_editing.set_card(
                s, s.get(Deck, mine.id), key, locale="en",  # type: ignore[arg-type]
                question="Which organelle is this?\n[image:cell.png]", answer=None,
                explanation=None, now=utcnow(), create=False,
            )  # fmt: skip
        tablet.sync_collection(tablet_auth, False)
        sync_media(tablet, tablet_auth)
        assert (
            tablet.get_note(note.id)["Front"] == 'Which organelle is this?<br><img src="cell.png">'
        )
        assert files_of(tablet) == {"cell.png": PICTURE}
        check = tablet.media.check()
        assert not check.missing
    finally:
        phone.close()
        tablet.close()
