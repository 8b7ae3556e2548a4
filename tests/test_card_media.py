"""Images and sounds in cards: Anki fields to tokens and back, `.apkg` import into the
person's media folder (names taken, quota, re-import) and export that real Anki reads, and
the web showing and serving them, on SQLite and PostgreSQL."""

from __future__ import annotations

import hashlib
import io
import json
import re
import struct
import zipfile
import zlib
from pathlib import Path

import pytest
import zstandard
from anki import import_export_pb2
from anki.collection import Collection
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import Engine, delete, func, select
from werkzeug.test import TestResponse

from flashcards.anki import AnkiPackageError, export_deck, import_package
from flashcards.anki.importer import read_for_import
from flashcards.anki.reader import names_in_fields
from flashcards.anki.sanitize import html_to_text, text_to_html
from flashcards.decks import media_refs
from flashcards.people import media_folder
from flashcards.storage.engine import transaction
from flashcards.storage.models import (
    AnkiKeptObject,
    Card,
    CardText,
    Deck,
    MediaFile,
    Subscription,
    User,
)
from flashcards.web.media import card_text

from .factories import make_token, make_user
from .test_anki_export import anki_import
from .test_anki_import import anki_export, wall_now
from .test_web_apkg import _upload
from .web_helpers import FormValues, csrf, sign_up

SOUND = b"ID3\x03\x00" + bytes(64)  # enough of an MP3 for a name and a digest
QUOTA = 1000
ID_BASE_NOTE = 1_700_000_000_000  # a note id a device made (a time in ms)


def png(width: int = 3, height: int = 2, shade: int = 0) -> bytes:
    """A real PNG, so a browser can decode it (and a test can tell two apart by `shade`)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + bytes([shade, 110, 190]) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


PNG = png()


def anki_package(
    tmp_path: Path,
    notes: list[tuple[str, str]],
    media: dict[str, bytes],
    *,
    legacy: bool,
    deck: str = "Biology",
) -> bytes:
    """An Anki deck of Basic notes (front, back) whose fields name these media files, made
    and exported by Anki itself (the files written under the names given)."""
    stem = tmp_path / f"made-{len(list(tmp_path.iterdir()))}"
    col = Collection(f"{stem}.anki2")
    try:
        did = col.decks.id(deck)
        basic = col.models.by_name("Basic")
        assert basic is not None
        for name, data in media.items():
            assert col.media.write_data(name, data) == name
        for front, back in notes:
            note = col.new_note(basic)
            note["Front"], note["Back"] = front, back
            col.add_note(note, did)
        return anki_export(col, stem.with_suffix(".apkg"), legacy=legacy)
    finally:
        col.close()


def media_package(tmp_path: Path, *, legacy: bool, image: bytes = PNG) -> bytes:
    """An Anki deck with one note showing an image and playing a sound."""
    note = ('What is this?<br><img src="cell.png">', "A cell [sound:hello.mp3]")
    return anki_package(tmp_path, [note], {"cell.png": image, "hello.mp3": SOUND}, legacy=legacy)


def with_unused_file(package: bytes) -> bytes:
    """A legacy package with one more media file that no note names."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(package)) as source, zipfile.ZipFile(out, "w") as target:
        listing = json.loads(source.read("media"))
        for info in source.infolist():
            if info.filename != "media":
                target.writestr(info, source.read(info))
        listing[str(len(listing))] = "unused.png"
        target.writestr(str(len(listing) - 1), png(shade=9))
        target.writestr("media", json.dumps(listing))
    return out.getvalue()


def folder(engine: Engine, user_id: int) -> dict[str, bytes]:
    with transaction(engine) as s:
        live = media_folder.live_files(
            s, user_id, s.scalars(select(MediaFile.name).where(MediaFile.user_id == user_id))
        )
        data = media_folder.contents(s, user_id, live.values())
    return {name: data[sha1] for name, sha1 in live.items()}


def deck_texts(engine: Engine, deck_id: int) -> list[tuple[str, str]]:
    with transaction(engine) as s:
        rows = s.execute(
            select(CardText.question, CardText.answer)
            .join(Card, Card.id == CardText.card_id)
            .where(Card.deck_id == deck_id)
        )
        return sorted((q, a) for q, a in rows)


# Fields and tokens


@pytest.mark.parametrize(
    ("field", "text"),
    [
        ('Look<img src="cell.png">', "Look[image:cell.png]"),
        ('<img src="a b &amp; c.png">', "[image:a b & c.png]"),
        ("Hear [sound:hi.mp3]", "Hear [sound:hi.mp3]"),
        # An image from elsewhere would load a URL: nothing of it stays.
        ('<img src="https://evil.example/x.png">x', "x"),
        ('<img src="data:image/png;base64,AAAA">x', "x"),
        ('<img src="javascript:alert(1)" onerror="alert(2)">x', "x"),
        ('<img src="../../etc/passwd">x', "x"),
        ('<img src="sub/dir.png">x', "x"),
        ('<img src="a]b.png">x', "x"),  # no token can name it
        ("<img>x", "x"),
    ],
)
def test_an_anki_field_keeps_its_own_images_as_tokens(field: str, text: str) -> None:
    assert html_to_text(field) == text


def test_tokens_go_back_to_anki_as_it_writes_them() -> None:
    text = 'Look [image:a "b" & <c>.png]\n[sound:hi & bye.mp3]'
    field = text_to_html(text)
    assert field == (
        'Look <img src="a &quot;b&quot; &amp; &lt;c&gt;.png"><br>[sound:hi &amp; bye.mp3]'
    )
    assert html_to_text(field) == text  # and back again unchanged
    assert {'a "b" & <c>.png', "hi & bye.mp3"} <= names_in_fields([field])  # what exports read


@pytest.mark.parametrize(
    "token", ["[image:a/b.png]", "[image:C:x.png]", "[image:http://evil.example/x.png]"]
)
def test_a_token_naming_no_file_of_the_folder_goes_out_as_text(token: str) -> None:
    # As an <img> it would load from elsewhere in Anki, and come back as nothing.
    assert text_to_html(token) == token
    assert html_to_text(text_to_html(token)) == token


def test_tokens_are_split_renamed_and_dropped() -> None:
    text = "a [image:x.png] b [sound:y.mp3]"
    assert media_refs.split(text) == [
        "a ",
        media_refs.MediaRef("image", "x.png"),
        " b ",
        media_refs.MediaRef("sound", "y.mp3"),
    ]
    assert media_refs.renamed(text, {"x.png": "x-1.png"}) == "a [image:x-1.png] b [sound:y.mp3]"
    assert media_refs.without_images(text) == "a  b [sound:y.mp3]"
    assert media_refs.names(text, "[image:z.gif]") == {"x.png", "y.mp3", "z.gif"}


# Import and export


@pytest.mark.parametrize("legacy", [True, False], ids=["legacy", "zstd"])
def test_import_puts_the_cards_media_in_the_owners_folder(
    loaded_engine: Engine, tmp_path: Path, legacy: bool
) -> None:
    package = media_package(tmp_path, legacy=legacy)
    with transaction(loaded_engine) as s:
        user_id = make_user(s, "media@example.com")
        report = import_package(
            s, package, owner_user_id=user_id, now=wall_now(), media_quota_mb=QUOTA
        )
        usn = media_folder.last_usn(s, user_id)
    assert report.media_added == 2 and report.media_unused == 0 and report.media_left_out == 0
    assert deck_texts(loaded_engine, report.deck_id) == [
        ("What is this?\n[image:cell.png]", "A cell [sound:hello.mp3]")
    ]
    assert folder(loaded_engine, user_id) == {"cell.png": PNG, "hello.mp3": SOUND}
    assert usn == 2  # each file a change the person's devices fetch at their next sync


def test_files_no_card_uses_are_left_out_and_said(loaded_engine: Engine, tmp_path: Path) -> None:
    package = with_unused_file(media_package(tmp_path, legacy=True))
    with transaction(loaded_engine) as s:
        user_id = make_user(s, "unused@example.com")
        report = import_package(
            s, package, owner_user_id=user_id, now=wall_now(), media_quota_mb=QUOTA
        )
    assert report.media_added == 2 and report.media_unused == 1
    assert "1 media file(s) were left out: no card imported uses them." in report.messages
    assert sorted(folder(loaded_engine, user_id)) == ["cell.png", "hello.mp3"]


def test_a_name_taken_by_other_content_gets_a_name_of_its_own(
    loaded_engine: Engine, tmp_path: Path
) -> None:
    mine = png(shade=200)
    with transaction(loaded_engine) as s:
        user_id = make_user(s, "taken@example.com")
        changes = [media_folder.Change("cell.png", mine)]
        media_folder.apply_changes(s, user_id, changes, quota_mb=QUOTA, now=wall_now())
    with transaction(loaded_engine) as s:
        report = import_package(
            s,
            media_package(tmp_path, legacy=False),
            owner_user_id=user_id,
            now=wall_now(),
            media_quota_mb=QUOTA,
        )
    own = f"cell-{hashlib.sha1(PNG).hexdigest()[:8]}.png"
    assert folder(loaded_engine, user_id) == {"cell.png": mine, own: PNG, "hello.mp3": SOUND}
    assert deck_texts(loaded_engine, report.deck_id)[0][0] == f"What is this?\n[image:{own}]"


def rezipped(package: bytes, media: dict[str, bytes], listing: object = None) -> bytes:
    """A legacy package with these media files in place of its own."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(package)) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            if info.filename != "media" and not info.filename.isdigit():
                target.writestr(info, source.read(info))
        for index, data in enumerate(media.values()):
            target.writestr(str(index), data, compress_type=zipfile.ZIP_DEFLATED)
        own = {str(i): name for i, name in enumerate(media)}
        target.writestr("media", json.dumps(own if listing is None else listing))
    return out.getvalue()


def test_only_the_files_the_notes_name_are_read(tmp_path: Path) -> None:
    # 600 MiB of zeros deflate to well under a MiB: read, it would sit in memory.
    bomb = bytes(600 << 20)
    package = rezipped(
        media_package(tmp_path, legacy=True),
        {"cell.png": PNG, "hello.mp3": SOUND, "unused.png": bomb},
    )
    del bomb
    assert len(package) < 2 << 20
    coll = read_for_import(package, with_scheduling=False, with_media=True)
    assert coll.media == {"cell.png": PNG, "hello.mp3": SOUND} and coll.media_files == 3


def test_media_that_unpack_far_past_the_package_are_refused(tmp_path: Path) -> None:
    package = rezipped(
        media_package(tmp_path, legacy=True), {"cell.png": bytes(50 << 20), "hello.mp3": SOUND}
    )
    with pytest.raises(AnkiPackageError) as refused:
        read_for_import(package, with_scheduling=False, with_media=True)
    assert refused.value.kind == "unpacks_too_large"


def test_files_the_list_names_but_the_zip_lacks_are_left_out(tmp_path: Path) -> None:
    package = rezipped(
        media_package(tmp_path, legacy=True),
        {"cell.png": PNG},
        listing={"0": "cell.png", "1": "hello.mp3", "2": "x.png"},
    )
    coll = read_for_import(package, with_scheduling=False, with_media=True)
    assert coll.media == {"cell.png": PNG}


def test_a_media_list_naming_one_member_for_many_files_is_damage(tmp_path: Path) -> None:
    entries = import_export_pb2.MediaEntries(
        entries=[
            import_export_pb2.MediaEntries.MediaEntry(name=n, size=1, legacy_zip_filename=0)
            for n in ("cell.png", "hello.mp3")
        ]
    )
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(media_package(tmp_path, legacy=False))) as source, \
            zipfile.ZipFile(out, "w") as target:  # fmt: skip
        for info in source.infolist():
            if info.filename != "media":
                target.writestr(info, source.read(info))
        target.writestr("media", zstandard.compress(entries.SerializeToString()))
    with pytest.raises(AnkiPackageError, match="media list is damaged"):
        read_for_import(out.getvalue(), with_scheduling=False, with_media=True)


def test_an_empty_file_is_left_out(loaded_engine: Engine, tmp_path: Path) -> None:
    package = rezipped(media_package(tmp_path, legacy=True), {"cell.png": b"", "hello.mp3": SOUND})
    with transaction(loaded_engine) as s:
        user_id = make_user(s, "empty@example.com")
        report = import_package(
            s, package, owner_user_id=user_id, now=wall_now(), media_quota_mb=QUOTA
        )
    assert report.media_added == 1 and folder(loaded_engine, user_id) == {"hello.mp3": SOUND}
    with transaction(loaded_engine) as s:
        assert s.scalar(select(func.count()).where(MediaFile.name == "cell.png")) == 0


def test_a_question_that_was_an_image_alone_is_left_out_without_media(
    loaded_engine: Engine, tmp_path: Path
) -> None:
    package = anki_package(
        tmp_path,
        [('<img src="cell.png">', "A cell"), ("Plain?", "Yes")],
        {"cell.png": PNG},
        legacy=True,
    )
    with transaction(loaded_engine) as s:
        report = import_package(s, package, owner_user_id=None, now=wall_now())
    assert report.cards == 1 and report.skipped == {"empty_front": 1}
    assert deck_texts(loaded_engine, report.deck_id) == [("Plain?", "Yes")]


def test_files_missing_from_the_package_or_never_shown_are_said(
    loaded_engine: Engine, tmp_path: Path
) -> None:
    svg = b'<svg xmlns="http://www.w3.org/2000/svg"/>'
    note = ('A drawing<img src="drawing.svg"><img src="gone.png">', "[sound:gone.wav]")
    package = anki_package(tmp_path, [note], {"drawing.svg": svg}, legacy=True)
    with transaction(loaded_engine) as s:
        user_id = make_user(s, "said@example.com")
        report = import_package(
            s, package, owner_user_id=user_id, now=wall_now(), media_quota_mb=QUOTA
        )
    assert report.media_missing == ["gone.png", "gone.wav"] and report.media_not_shown == 1
    # The SVG is kept for the person's devices (Anki shows it); the pages do not.
    assert sorted(folder(loaded_engine, user_id)) == ["drawing.svg"]
    joined = " ".join(report.messages)
    assert "2 media file(s) the cards use are not in the package (gone.png, gone.wav)" in joined
    assert "1 media file(s) are kept for Anki but not shown on these pages" in joined


def test_a_name_taken_twice_over_gets_a_numbered_one(loaded_engine: Engine, tmp_path: Path) -> None:
    sha8 = hashlib.sha1(PNG).hexdigest()[:8]
    theirs = {"cell.png": png(shade=1), f"cell-{sha8}.png": png(shade=2)}
    with transaction(loaded_engine) as s:
        user_id = make_user(s, "twice@example.com")
        changes = [media_folder.Change(name, data) for name, data in theirs.items()]
        media_folder.apply_changes(s, user_id, changes, quota_mb=QUOTA, now=wall_now())
        report = import_package(
            s, media_package(tmp_path, legacy=True), owner_user_id=user_id, now=wall_now(),
            media_quota_mb=QUOTA,
        )  # fmt: skip
    own = f"cell-{sha8}-2.png"
    assert folder(loaded_engine, user_id) == {**theirs, own: PNG, "hello.mp3": SOUND}
    assert deck_texts(loaded_engine, report.deck_id)[0][0] == f"What is this?\n[image:{own}]"


def test_two_files_of_a_package_never_share_a_name(loaded_engine: Engine, tmp_path: Path) -> None:
    # The folder's cell.png is other content, so the package's takes cell-<sha8>.png: a name
    # the package also has, for a third picture.
    sha8 = hashlib.sha1(PNG).hexdigest()[:8]
    second = f"cell-{sha8}.png"
    package = anki_package(
        tmp_path,
        [('<img src="cell.png">', f'<img src="{second}">')],
        {"cell.png": PNG, second: png(shade=3)},
        legacy=False,
    )
    with transaction(loaded_engine) as s:
        user_id = make_user(s, "pair@example.com")
        mine = [media_folder.Change("cell.png", png(shade=4))]
        media_folder.apply_changes(s, user_id, mine, quota_mb=QUOTA, now=wall_now())
        report = import_package(
            s, package, owner_user_id=user_id, now=wall_now(), media_quota_mb=QUOTA
        )
    ((question, answer),) = deck_texts(loaded_engine, report.deck_id)
    files = folder(loaded_engine, user_id)
    shown = [question.removeprefix("[image:")[:-1], answer.removeprefix("[image:")[:-1]]
    assert [files[shown[0]], files[shown[1]]] == [PNG, png(shade=3)]
    assert files["cell.png"] == png(shade=4)


def test_media_over_the_quota_refuses_the_whole_import(
    loaded_engine: Engine, tmp_path: Path
) -> None:
    package = media_package(tmp_path, legacy=True)
    with transaction(loaded_engine) as s:
        user_id = make_user(s, "full@example.com")
    with pytest.raises(AnkiPackageError) as refused, transaction(loaded_engine) as s:
        import_package(s, package, owner_user_id=user_id, now=wall_now(), media_quota_mb=0)
    assert refused.value.kind == "media_quota" and refused.value.limit == 0
    with transaction(loaded_engine) as s:
        assert s.scalar(select(func.count()).where(Deck.owner_user_id == user_id)) == 0
        assert s.scalar(select(func.count()).where(MediaFile.user_id == user_id)) == 0


def test_a_deck_that_keeps_no_media_drops_its_images(loaded_engine: Engine, tmp_path: Path) -> None:
    with transaction(loaded_engine) as s:
        report = import_package(
            s, media_package(tmp_path, legacy=True), owner_user_id=None, now=wall_now()
        )
    assert report.media_left_out == 2 and report.media_added == 0
    assert deck_texts(loaded_engine, report.deck_id) == [
        ("What is this?", "A cell [sound:hello.mp3]")
    ]


def test_the_same_package_again_adds_no_media(loaded_engine: Engine, tmp_path: Path) -> None:
    package = media_package(tmp_path, legacy=False)
    with transaction(loaded_engine) as s:
        user_id = make_user(s, "again@example.com")
        first = import_package(
            s, package, owner_user_id=user_id, now=wall_now(), media_quota_mb=QUOTA
        )
    with transaction(loaded_engine) as s:
        again = import_package(
            s, package, owner_user_id=user_id, now=wall_now(), media_quota_mb=QUOTA,
            update_existing=True,
        )  # fmt: skip
        usn = media_folder.last_usn(s, user_id)
    assert again.updated and again.deck_id == first.deck_id and again.media_added == 0
    assert usn == 2 and sorted(folder(loaded_engine, user_id)) == ["cell.png", "hello.mp3"]


def test_export_carries_the_media_anki_then_shows(loaded_engine: Engine, tmp_path: Path) -> None:
    with transaction(loaded_engine) as s:
        user_id = make_user(s, "export@example.com")
        report = import_package(
            s,
            media_package(tmp_path, legacy=False),
            owner_user_id=user_id,
            now=wall_now(),
            media_quota_mb=QUOTA,
        )
        package = export_deck(s, report.deck_id, locales=None, user_id=user_id, now=wall_now())
    with zipfile.ZipFile(io.BytesIO(package.data)) as archive:
        listing = json.loads(archive.read("media"))
        assert {name: archive.read(member) for member, name in listing.items()} == {
            "cell.png": PNG,
            "hello.mp3": SOUND,
        }
    (tmp_path / "back").mkdir()
    col, _log = anki_import(tmp_path / "back" / "collection.anki2", package.data)
    try:
        (nid,) = col.find_notes("")
        fields = " ".join(col.get_note(nid).fields)
        assert '<img src="cell.png">' in fields and "[sound:hello.mp3]" in fields
        media_dir = Path(col.media.dir())
        assert (media_dir / "cell.png").read_bytes() == PNG
        assert (media_dir / "hello.mp3").read_bytes() == SOUND
        check = col.media.check()
        assert not check.missing and not check.unused
    finally:
        col.close()


# The web


def imported_card(client: FlaskClient, tmp_path: Path, email: str) -> tuple[str, str]:
    """Someone new who imported `media_package` on the web: their deck's list of cards, and
    its one card's page."""
    sign_up(client, email)
    assert _upload(client, media_package(tmp_path, legacy=True)).status_code == 302
    slug = re.search(r'href="/decks/(user\d+-[^/"]+)"', client.get("/").get_data(as_text=True))
    assert slug is not None
    cards = f"/decks/{slug[1]}/cards"
    key = re.search(rf'href="{cards}/([^"?]+)', client.get(cards).get_data(as_text=True))
    assert key is not None
    return cards, f"{cards}/{key[1]}"


def test_the_study_page_shows_the_cards_image_and_sound(
    client: FlaskClient, app: Flask, tmp_path: Path
) -> None:
    cards, url = imported_card(client, tmp_path, "web-media@example.com")
    page = client.get("/study?show=1").get_data(as_text=True)
    assert '<img class="card-media" src="/media/cell.png" alt="cell.png">' in page
    assert '<audio controls preload="none" src="/media/hello.mp3"' in page
    # The card's history shows its question and its answer, with their media.
    card_id = re.search(r'name="card_id" value="(\d+)"', page)
    assert card_id is not None
    history = client.get(f"/browse/cards/{card_id[1]}").get_data(as_text=True)
    assert 'src="/media/cell.png"' in history and 'src="/media/hello.mp3"' in history

    served = client.get("/media/cell.png")
    assert served.status_code == 200 and served.data == PNG
    assert served.mimetype == "image/png"
    assert served.headers["Content-Security-Policy"] == "default-src 'none'; sandbox"
    assert served.headers["X-Content-Type-Options"] == "nosniff"
    # Kept, and asked about again each time: a file replaced under its name shows at once.
    assert {"private", "no-cache"} <= set(served.headers["Cache-Control"].split(", "))
    etag = served.headers["ETag"]
    assert client.get("/media/cell.png", headers={"If-None-Match": etag}).status_code == 304
    sound = client.get("/media/hello.mp3", headers={"Range": "bytes=0-3"})
    assert sound.status_code == 206 and sound.data == SOUND[:4] and sound.mimetype == "audio/mpeg"
    assert client.get("/media/missing.png").status_code == 404
    # The deck's card list shows the picture; its editor says how the tokens work.
    assert '<img class="card-media" src="/media/cell.png"' in client.get(cards).get_data(
        as_text=True
    )
    editor = client.get(url).get_data(as_text=True)
    assert "Images and sounds are written as [image:name] and [sound:name]" in editor
    assert "[image:cell.png]</textarea>" in editor

    # Saved from the form (which sends CRLF line breaks) unchanged: nothing changes.
    form = FormValues(url)
    form.feed(editor)
    values = {k: v.replace("\n", "\r\n") for k, v in form.values.items()}
    saved = client.post(url, data=values, follow_redirects=True)
    assert "Card saved" in saved.get_data(as_text=True)
    with app.app_context():
        engine = app.extensions["flashcards.engine"]
    with transaction(engine) as s:
        question = s.scalars(select(CardText.question).where(CardText.question.like("%cell.png%")))
        assert question.one() == "What is this?\n[image:cell.png]"
    # A token naming a file the person has not got: saved, with a warning.
    values["question"] = "What is this?\r\n[image:nothere.png]"
    warned = client.post(url, data=values, follow_redirects=True)
    assert "No file named nothere.png is in your media yet" in warned.get_data(as_text=True)

    # Someone else's file is not theirs to see, and signed out it is nobody's.
    other = app.test_client()
    sign_up(other, "someone-else@example.com")
    assert other.get("/media/cell.png").status_code == 404
    anonymous = app.test_client()
    assert anonymous.get("/media/cell.png").status_code == 302


def test_svg_and_unknown_types_are_never_served_or_shown(
    client: FlaskClient, app: Flask, engine: Engine
) -> None:
    sign_up(client, "svg@example.com")
    with transaction(engine) as s:
        user_id = s.scalars(select(User.id).where(User.email == "svg@example.com")).one()
        changes = [
            media_folder.Change("x.svg", b'<svg onload="alert(1)"/>'),
            media_folder.Change("page.html", b"<script>alert(1)</script>"),
        ]
        media_folder.apply_changes(s, user_id, changes, quota_mb=QUOTA, now=wall_now())
    assert client.get("/media/x.svg").status_code == 404
    assert client.get("/media/page.html").status_code == 404
    with app.test_request_context("/"):
        assert str(card_text("a [image:x.svg] <b>")) == (
            'a <span class="media-note" lang="en">Image not shown here: x.svg</span> &lt;b&gt;'
        )
        shown = str(card_text('[image:a"b.png]'))
        assert shown == '<img class="card-media" src="/media/a%22b.png" alt="a&#34;b.png">'
        assert str(card_text("[sound:v.mp4]")).startswith('<video class="card-media" controls')
        # A name that is a path would point the browser at another page: it is not shown.
        assert str(card_text("[sound:../../logout.mp3]")) == (
            '<span class="media-note" lang="en">Sound not played here: ../../logout.mp3</span>'
        )


def test_the_api_serves_the_callers_own_files(
    client: FlaskClient, engine: Engine, tmp_path: Path
) -> None:
    with transaction(engine) as s:
        owner = make_user(s, "api-media@example.com")
        other = make_user(s, "api-other@example.com")
        tokens = {u: make_token(s, u) for u in (owner, other)}
        changes = [media_folder.Change("cell.png", PNG), media_folder.Change("x.svg", b"<svg/>")]
        media_folder.apply_changes(s, owner, changes, quota_mb=QUOTA, now=wall_now())

    def get(user: int | None, name: str) -> TestResponse:
        headers = {} if user is None else {"Authorization": f"Bearer {tokens[user]}"}
        return client.get(f"/api/v1/media/{name}", headers=headers)

    served = get(owner, "cell.png")
    assert served.status_code == 200 and served.data == PNG and served.mimetype == "image/png"
    assert served.headers["Content-Security-Policy"] == "default-src 'none'; sandbox"
    for user, name, status in [(other, "cell.png", 404), (owner, "x.svg", 404),
                               (owner, "none.png", 404), (None, "cell.png", 401)]:  # fmt: skip
        refused = get(user, name)
        assert refused.status_code == status and refused.mimetype == "application/problem+json"


def test_a_picture_or_sound_added_on_the_web_goes_on_the_card(
    client: FlaskClient, app: Flask, tmp_path: Path
) -> None:
    _cards, url = imported_card(client, tmp_path, "adds@example.com")
    editor = client.get(url).get_data(as_text=True)
    assert 'name="file" type="file"' in editor and "Add an image or a sound" in editor

    def add(name: str, data: bytes, side: str = "answer") -> str:
        form = {
            "csrf_token": csrf(client, url), "locale": "en", "side": side,
            "file": (io.BytesIO(data), name),
        }  # fmt: skip
        response = client.post(f"{url}/media", data=form, content_type="multipart/form-data")
        assert response.status_code == 303
        return client.get(response.headers["Location"]).get_data(as_text=True)

    # A client that sends a path: the file's own name is kept.
    page = add("photos/leaf.png", png(shade=77))
    assert "leaf.png was added to the card." in page
    # Another file of that name but other content: a name of its own, never over the first.
    again = add("leaf.png", png(shade=78), side="question")
    own = f"leaf-{hashlib.sha1(png(shade=78)).hexdigest()[:8]}.png"
    assert f"{own} was added to the card." in again
    with app.app_context():
        engine = app.extensions["flashcards.engine"]
    with transaction(engine) as s:
        user_id = s.scalars(select(User.id).where(User.email == "adds@example.com")).one()
    files = folder(engine, user_id)
    assert files["leaf.png"] == png(shade=77) and files[own] == png(shade=78)
    study = client.get("/study?show=1").get_data(as_text=True)
    assert 'src="/media/leaf.png"' in study and f'src="/media/{own}"' in study

    refused = add("drawing.svg", b"<svg/>")
    assert "The file was not added: only images" in refused
    assert "drawing.svg" not in folder(engine, user_id)
    empty = client.post(
        f"{url}/media",
        data={"csrf_token": csrf(client, url), "locale": "en", "side": "answer"},
        content_type="multipart/form-data",
        follow_redirects=True,
    )
    assert "Choose an image or a sound to add." in empty.get_data(as_text=True)

    app.config["MEDIA_QUOTA_MB"] = 0
    full = add("big.png", png(shade=90))
    assert "The file was not added." in full and "big.png" not in folder(engine, user_id)
    app.config["MAX_UPLOAD_BYTES"] = 1000
    too_large = add("huge.png", bytes(5000))
    assert "This file is too large: images and sounds up to" in too_large


def test_adding_a_file_refused_says_why_and_changes_nothing(
    client: FlaskClient, app: Flask, tmp_path: Path
) -> None:
    _cards, url = imported_card(client, tmp_path, "why@example.com")

    def post(data: dict[str, object]) -> str:
        form = {"csrf_token": csrf(client, url), "locale": "en", **data}
        response = client.post(
            f"{url}/media", data=form, content_type="multipart/form-data", follow_redirects=True
        )
        assert response.status_code == 200  # back on the card's page, never an error page
        return response.get_data(as_text=True)

    no_side = post({"file": (io.BytesIO(png(shade=5)), "a.png")})
    assert "The file was not added." in no_side
    # Its answer at the length limit: one more line would pass it.
    editor = client.get(url).get_data(as_text=True)
    form = FormValues(url)
    form.feed(editor)
    long_answer = dict(form.values, answer="x" * (20_000 - 5))
    assert "Card saved" in client.post(url, data=long_answer, follow_redirects=True).get_data(
        as_text=True
    )
    too_long = post({"side": "answer", "file": (io.BytesIO(png(shade=6)), "b.png")})
    assert "The file was not added." in too_long
    # A Korean name past the folder's 255 bytes is shortened, not refused.
    korean = post({"side": "question", "file": (io.BytesIO(png(shade=7)), "사진" * 60 + ".png")})
    assert "was added to the card." in korean
    with app.app_context():
        engine = app.extensions["flashcards.engine"]
    with transaction(engine) as s:
        user_id = s.scalars(select(User.id).where(User.email == "why@example.com")).one()
    files = folder(engine, user_id)
    assert "a.png" not in files and "b.png" not in files
    (name,) = [n for n in files if n.startswith("사진")]
    assert name.endswith(".png") and len(name.encode()) <= 200

    # A save naming many files not there names three of them, not every one.
    values = dict(form.values, answer="".join(f"[image:p{i}.png]" for i in range(50)))
    warned = client.post(url, data=values, follow_redirects=True).get_data(as_text=True)
    assert "No files named p0.png, p1.png, p10.png … are in your media yet" in warned


def test_a_file_past_ankis_limit_is_not_added(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(media_folder, "MAX_FILE_BYTES", 10)
    with transaction(engine) as s:
        user_id = make_user(s, "limit@example.com")
        with pytest.raises(media_folder.InvalidMediaName):
            media_folder.add_file(s, user_id, "a.png", bytes(11), quota_mb=QUOTA, now=wall_now())


def test_files_already_in_the_folder_are_not_said_to_be_missing(
    loaded_engine: Engine, tmp_path: Path
) -> None:
    # Media synced from Anki, then a package exported without them.
    package = anki_package(tmp_path, [('<img src="cell.png">', "A cell")], {}, legacy=True)
    with transaction(loaded_engine) as s:
        user_id = make_user(s, "synced@example.com")
        changes = [media_folder.Change("cell.png", PNG)]
        media_folder.apply_changes(s, user_id, changes, quota_mb=QUOTA, now=wall_now())
        report = import_package(
            s, package, owner_user_id=user_id, now=wall_now(), media_quota_mb=QUOTA
        )
    assert report.media_missing == [] and report.media_added == 0
    assert deck_texts(loaded_engine, report.deck_id) == [("[image:cell.png]", "A cell")]


def test_the_api_adds_files_as_a_cards_page_does(
    client: FlaskClient, app: Flask, engine: Engine
) -> None:
    with transaction(engine) as s:
        owner = make_user(s, "api-adds@example.com")
        token = make_token(s, owner)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "image/png"}

    def post(name: str, data: bytes) -> TestResponse:
        return client.post(f"/api/v1/media/{name}", data=data, headers=headers)

    first = post("leaf.png", png(shade=11))
    assert first.status_code == 200 and first.json == {
        "name": "leaf.png",
        "size": len(png(shade=11)),
    }
    other = post("leaf.png", png(shade=12))
    own = f"leaf-{hashlib.sha1(png(shade=12)).hexdigest()[:8]}.png"
    assert other.status_code == 200 and other.json is not None and other.json["name"] == own
    assert folder(engine, owner) == {"leaf.png": png(shade=11), own: png(shade=12)}
    for refused, status in [
        (post("x.svg", b"<svg/>"), 422),
        (post("page.html", b"<p>"), 422),
        (post("empty.png", b""), 422),
        (client.post("/api/v1/media/a.png", data=png()), 401),
    ]:
        assert refused.status_code == status, refused.get_data(as_text=True)
        assert refused.mimetype == "application/problem+json"
    app.config["MAX_UPLOAD_BYTES"] = 100
    assert post("big.png", bytes(101)).status_code == 413
    app.config["MAX_UPLOAD_BYTES"] = 1 << 20
    app.config["MEDIA_QUOTA_MB"] = 0
    full = post("full.png", png(shade=13))
    assert full.status_code == 413 and full.json is not None
    assert full.json["type"].endswith("media-quota-exceeded")
    assert sorted(folder(engine, owner)) == sorted(["leaf.png", own])
    # Someone else's file of the same name is theirs: adding one never touches it.
    with transaction(engine) as s:
        other_person = make_user(s, "api-other-adds@example.com")
        other_token = make_token(s, other_person)
    app.config["MEDIA_QUOTA_MB"] = QUOTA
    theirs = client.post(
        "/api/v1/media/leaf.png",
        data=png(shade=14),
        headers={"Authorization": f"Bearer {other_token}"},
    )
    assert theirs.status_code == 200 and theirs.json is not None
    assert theirs.json["name"] == "leaf.png"
    assert folder(engine, owner)["leaf.png"] == png(shade=11)
    assert folder(engine, other_person) == {"leaf.png": png(shade=14)}


def test_the_media_page_shows_the_room_taken_and_deletes_what_nothing_uses(
    client: FlaskClient, app: Flask, tmp_path: Path
) -> None:
    imported_card(client, tmp_path, "room@example.com")
    with app.app_context():
        engine = app.extensions["flashcards.engine"]
    with transaction(engine) as s:
        user_id = s.scalars(select(User.id).where(User.email == "room@example.com")).one()
        # A file no card names, one a device's own note names (as Anki's HTML, escaped), and
        # a note type's font (Anki never counts those as unused).
        changes = [
            media_folder.Change("stray.png", png(shade=21)),
            media_folder.Change("a&b.png", png(shade=22)),
            media_folder.Change("_font.ttf", b"font"),
        ]
        media_folder.apply_changes(s, user_id, changes, quota_mb=QUOTA, now=wall_now())
        note = [ID_BASE_NOTE, "guid", 1, 0, 0, "", 'Q<img src="a&amp;b.png">\x1fA', "", 0, 0, ""]
        s.add(AnkiKeptObject(user_id=user_id, kind=2, oid=ID_BASE_NOTE, usn=0, payload=note,
                             updated_at=wall_now()))  # fmt: skip
    page = client.get("/media").get_data(as_text=True)
    assert "5 files." in page
    assert "<td>stray.png</td>" in page
    for used in ("cell.png", "hello.mp3", "a&amp;b.png", "_font.ttf"):
        assert f"<td>{used}</td>" not in page
    assert "Delete 1 unused file" in page
    assert "Your images and sounds" in client.get("/settings").get_data(as_text=True)

    # Their own deck's files stay in use when they stop studying it.
    with transaction(engine) as s:
        s.execute(delete(Subscription).where(Subscription.user_id == user_id))
    form = {"csrf_token": csrf(client, "/media")}
    done = client.post("/media/unused", data=form, follow_redirects=True)
    assert "1 unused file was deleted." in done.get_data(as_text=True)
    assert sorted(folder(engine, user_id)) == ["_font.ttf", "a&b.png", "cell.png", "hello.mp3"]
    with transaction(engine) as s:
        # Kept as a deletion, for devices to learn of at their next media sync.
        gone = s.get(MediaFile, (user_id, "stray.png"))
        assert gone is not None and gone.size == 0
    assert "Every file is used by a card or a note." in client.get("/media").get_data(as_text=True)
    assert client.post("/media/unused", data={}).status_code == 400  # no CSRF token
