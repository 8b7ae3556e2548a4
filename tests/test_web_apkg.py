"""Anki packages on the web: the deck page's download and the library's upload form."""

from __future__ import annotations

import io
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import Engine, delete, func, select
from werkzeug.datastructures import FileStorage, MultiDict
from werkzeug.test import TestResponse, encode_multipart

from flashcards.anki import AnkiPackageError
from flashcards.storage.engine import transaction
from flashcards.storage.models import Card, CardText, Deck, DeckText, ReviewLog, User
from flashcards.web.import_messages import import_error_message

from .test_anki_export import anki_import
from .test_anki_import import anki_native_package, edited_package, suspended_package, zip_of
from .test_api_apkg import without_notes
from .web_helpers import answer_shown_card, csrf, sign_up
from .web_helpers import subscribe as web_subscribe

SLUG = "eks-model-training"


def _download(client: FlaskClient, **args: str) -> bytes:
    response = client.get(f"/decks/{SLUG}/apkg", query_string=args)
    assert response.status_code == 200, response.get_data(as_text=True)
    disposition = response.headers["Content-Disposition"]
    assert disposition.startswith("attachment;") and ".apkg" in disposition
    return response.get_data()


def _upload(
    client: FlaskClient,
    data: bytes,
    *,
    progress: bool = False,
    token: bool = True,
    locale: str | None = None,
    copy: bool = False,
) -> TestResponse:
    form = MultiDict[str, Any]([("package", FileStorage(io.BytesIO(data), "deck.apkg"))])
    if token:
        form.add("csrf_token", csrf(client, "/"))
    if progress:
        form.add("with_scheduling", "1")
    if copy:
        form.add("copy", "1")
    if locale is not None:
        form.add("locale", locale)
    # Encoded here into bytes: the test client would spool a large body to a temporary file
    # that it never closes (a ResourceWarning, an error under -W error).
    boundary, body = encode_multipart(form)
    return client.post(
        "/decks/import", data=body, content_type=f"multipart/form-data; boundary={boundary}"
    )


def _deck_count(engine: Engine) -> int:
    with transaction(engine) as s:
        return s.scalar(select(func.count()).select_from(Deck)) or 0


def test_deck_page_offers_the_download(client: FlaskClient, loaded_engine: Engine) -> None:
    sign_up(client, language="es")
    page = client.get(f"/decks/{SLUG}").get_data(as_text=True)
    assert f'action="/decks/{SLUG}/apkg"' in page and 'name="progress"' in page


def test_download_one_language_or_all_without_progress(
    client: FlaskClient, loaded_engine: Engine, tmp_path: Path
) -> None:
    sign_up(client, language="es")
    web_subscribe(client, "es")
    col, _log = anki_import(tmp_path / "one.anki2", _download(client), with_scheduling=False)
    try:
        assert col.note_count() == 15
        assert col.find_cards("is:review or is:learn") == []
        names = [d.name for d in col.decks.all_names_and_ids()]
        assert "Cuestionario sobre entrenamiento de modelos en EKS" in names
        assert len(col.find_notes("tag:lang::es")) == 15
    finally:
        col.close()
    col, _log = anki_import(tmp_path / "all.anki2", _download(client, languages="all"))
    try:
        assert col.note_count() == 45
    finally:
        col.close()


def test_download_with_my_progress(
    client: FlaskClient, loaded_engine: Engine, tmp_path: Path
) -> None:
    sign_up(client)
    web_subscribe(client, "en")
    answer_shown_card(client, "3")
    answer_shown_card(client, "1")
    data = _download(client, progress="1")
    col, _log = anki_import(tmp_path / "p.anki2", data, with_scheduling=True)
    try:
        assert col.note_count() == 15
        assert len(col.find_cards("-is:new")) == 2
        assert col.db.scalar("select count() from revlog") == 2
    finally:
        col.close()
    # Without the box ticked, the same person's file carries no progress.
    col, _log = anki_import(tmp_path / "n.anki2", _download(client), with_scheduling=True)
    try:
        assert col.find_cards("-is:new") == []
    finally:
        col.close()


def test_download_in_my_language_keeps_a_card_it_lacks_with_my_progress(
    client: FlaskClient, loaded_engine: Engine, tmp_path: Path
) -> None:
    sign_up(client, language="es")
    web_subscribe(client, "es")
    with transaction(loaded_engine) as s:
        first = s.scalars(
            select(Card).join(Deck).where(Deck.slug == SLUG).order_by(Card.position).limit(1)
        ).one()
        key = first.key
        s.execute(delete(CardText).where(CardText.card_id == first.id, CardText.locale == "es"))
    answer_shown_card(client, "3")  # that card, shown in English
    col, _log = anki_import(tmp_path / "p.anki2", _download(client, progress="1"))
    try:
        assert col.note_count() == 15
        (nid,) = col.find_notes("tag:lang::en")
        assert col.get_note(nid)["Key"] == key
        assert col.find_cards("-is:new") == list(col.find_cards(f"nid:{nid}"))
        assert col.db.scalar("select count() from revlog") == 1
    finally:
        col.close()


def test_download_of_an_invisible_deck_is_404(client: FlaskClient, loaded_engine: Engine) -> None:
    sign_up(client)
    assert client.get("/decks/nope/apkg").status_code == 404


def test_upload_of_our_export_updates_the_deck_studied_or_makes_a_private_copy(
    app: Flask, client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client)
    web_subscribe(client, "en")
    answer_shown_card(client, "3")
    data = _download(client, progress="1")
    before = _deck_count(loaded_engine)
    # Back to the shipped deck it came from: no second deck whose cards would be studied
    # twice, and the person's progress as it was.
    response = _upload(client, data, progress=True)
    assert response.headers["Location"].endswith(f"/decks/{SLUG}"), response.headers
    page = client.get(response.headers["Location"]).get_data(as_text=True)
    assert "so that deck was updated instead of copied" in page
    assert "Nothing in it had changed." in page
    assert _deck_count(loaded_engine) == before
    with transaction(loaded_engine) as s:
        assert s.scalar(select(func.count()).select_from(ReviewLog)) == 1
    # Asked for, a copy of their own.
    response = _upload(client, data, progress=True, copy=True)
    assert response.status_code == 302, response.get_data(as_text=True)
    slug = response.headers["Location"].rsplit("/", 1)[-1]
    assert slug != SLUG
    page = client.get(f"/decks/{slug}").get_data(as_text=True)
    assert "Imported 15 cards" in page and "Unsubscribe" in page  # subscribed at once
    with transaction(loaded_engine) as s:
        deck = s.scalars(select(Deck).where(Deck.slug == slug)).one()
        owner = s.scalars(select(User).where(User.email == "ana@example.com")).one()
        assert deck.owner_user_id == owner.id
        cards = s.scalar(select(func.count()).select_from(Card).where(Card.deck_id == deck.id))
        assert cards == 15
        logs = s.scalar(
            select(func.count())
            .select_from(ReviewLog)
            .join(Card, Card.id == ReviewLog.card_id)
            .where(Card.deck_id == deck.id)
        )
        assert logs == 1
    assert slug in client.get("/").get_data(as_text=True)

    other = app.test_client()
    sign_up(other, "bo@example.com")
    assert client.get(f"/decks/{slug}/apkg").status_code == 200
    assert other.get(f"/decks/{slug}").status_code == 404
    assert other.get(f"/decks/{slug}/apkg").status_code == 404
    assert slug not in other.get("/").get_data(as_text=True)


def test_corrupt_upload_shows_the_error_and_writes_nothing(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client, language="es")
    before = _deck_count(loaded_engine)
    response = _upload(client, b"PK\x03\x04 definitely not a zip")
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    assert 'role="alert"' in page and "Anki" in page and "<h1>" in page
    assert "no es un paquete de Anki" in page
    # Above the site-wide 1 MiB body limit, the upload route still reads the file.
    response = _upload(client, b"\0" * (3 * 1024 * 1024))
    assert response.status_code == 422
    assert _deck_count(loaded_engine) == before


def test_a_visitor_gets_no_package_sized_upload(client: FlaskClient) -> None:
    # Over the site-wide 1 MiB limit, refused before the body is read: no one is signed in.
    body = b'--b\r\nContent-Disposition: form-data; name="package"; filename="x.apkg"\r\n\r\n'
    response = client.post(
        "/decks/import",
        data=body + b"\0" * (2 * 1024 * 1024) + b"\r\n--b--\r\n",
        content_type="multipart/form-data; boundary=b",
    )
    assert response.status_code == 413


def test_upload_over_the_package_limit_is_413(
    app: Flask, client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client)
    data = _download(client)
    app.config["MAX_UPLOAD_BYTES"] = len(data) - 1
    response = _upload(client, data)
    assert response.status_code == 413
    assert "too large" in response.get_data(as_text=True)
    # Far above it, the body is refused before it is read, with the same page.
    response = _upload(client, b"\0" * (len(data) + 200_000))
    assert response.status_code == 413
    assert "too large" in response.get_data(as_text=True)
    assert _deck_count(loaded_engine) == 1


def test_upload_of_a_zip_bomb_says_it_unpacks_too_large(
    app: Flask, client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client)
    app.config["MAX_UPLOAD_BYTES"] = 200_000  # unpacked limit: ten times that
    bomb = zip_of({"collection.anki2": b"\0" * (8 << 20)})  # a few KiB, 8 MiB unpacked
    assert len(bomb) < 200_000
    response = _upload(client, bomb)
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    assert "This package unpacks to more than 1.9 MiB" in page and "too large" not in page
    assert _deck_count(loaded_engine) == 1


def test_size_limits_are_written_as_numbers_of_the_pages_language(
    app: Flask, client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client, language="es")
    app.config["MAX_UPLOAD_BYTES"] = int(2.5 * 2**20)
    response = _upload(client, b"\0" * (int(2.5 * 2**20) + 1))
    assert response.status_code == 413
    page = response.get_data(as_text=True)
    assert "demasiado grande" in page and "2,5 MiB" in page and "2.5" not in page
    app.config["MAX_UPLOAD_BYTES"] = 200_000  # unpacked limit: 1.9 MiB
    response = _upload(client, zip_of({"collection.anki2": b"\0" * (8 << 20)}))
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    assert "1,9 MiB" in page and "1.9" not in page
    assert _deck_count(loaded_engine) == 1


def test_upload_needs_the_csrf_token(client: FlaskClient, loaded_engine: Engine) -> None:
    sign_up(client)
    data = _download(client)
    assert _upload(client, data, token=False).status_code == 400
    assert _deck_count(loaded_engine) == 1


def test_upload_of_a_package_with_nothing_usable(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client)
    response = _upload(client, b"")
    assert response.status_code == 422
    assert re.search(r"Choose an \.apkg file", response.get_data(as_text=True))


def test_upload_of_an_anki_deck_lists_what_was_left_out(
    client: FlaskClient, loaded_engine: Engine, tmp_path: Path
) -> None:
    sign_up(client, language="es")
    response = _upload(client, anki_native_package(tmp_path))
    assert response.status_code == 302
    page = client.get(response.headers["Location"]).get_data(as_text=True)
    assert "Se han importado 4 tarjetas en «Biology::Cells»" in page
    assert "1 nota Cloze se ha convertido en tarjetas de pregunta y respuesta" in page
    assert "Se ha añadido 1 imagen o sonido a tus archivos multimedia" in page
    assert "<script>alert" not in page


def test_the_import_form_says_what_a_cloze_note_becomes(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    # It used to say Cloze notes were left out, while the importer makes their cards.
    sign_up(client)
    page = client.get("/").get_data(as_text=True)
    assert (
        "A Cloze note becomes one card for each deletion; the images and sounds its cards use "
        "come along." in page
    )
    assert "Cloze notes and media are left out" not in page


def test_upload_of_an_anki_deck_with_suspended_cards_says_they_are_active(
    client: FlaskClient, loaded_engine: Engine, tmp_path: Path
) -> None:
    sign_up(client)
    # Without progress: with it, they stay suspended (tests/test_anki_import.py).
    response = _upload(client, suspended_package(tmp_path), progress=False)
    assert response.status_code == 302
    page = client.get(response.headers["Location"]).get_data(as_text=True)
    assert "Imported 6 cards" in page  # the reversed note's two are two here too
    assert (
        "3 cards suspended in Anki were imported as active, as the deck came without your "
        "progress: import it with “Keep my progress” to keep them suspended." in page
    )


def test_upload_where_no_language_has_every_card_is_refused(
    client: FlaskClient, loaded_engine: Engine, tmp_path: Path
) -> None:
    sign_up(client, language="ko")
    package = _download(client, languages="all")  # en, es and ko
    with transaction(loaded_engine) as s:
        keys = s.scalars(select(Card.key).join(Deck).where(Deck.slug == SLUG).limit(3)).all()
    gaps = list(zip(keys, ("en", "es", "ko"), strict=True))
    response = _upload(client, without_notes(package, tmp_path, gaps))
    assert response.status_code == 422
    assert "모든 카드가 들어 있는 언어가 없어서" in response.get_data(as_text=True)
    assert _deck_count(loaded_engine) == 1


def test_a_package_that_names_no_deck_gets_a_title_in_the_importers_language(
    client: FlaskClient, loaded_engine: Engine, tmp_path: Path
) -> None:
    sign_up(client, language="es")
    package = _download(client)

    def unnamed(db: sqlite3.Connection) -> None:
        (decks,) = db.execute("SELECT decks FROM col").fetchone()
        renamed = {k: {**v, "name": "Default"} for k, v in json.loads(decks).items()}
        db.execute("UPDATE col SET decks = ?", (json.dumps(renamed),))

    response = _upload(client, edited_package(package, tmp_path, unnamed))
    assert response.status_code == 302
    with transaction(loaded_engine) as s:
        titles = s.scalars(select(DeckText.title).join(Deck).where(Deck.owner_user_id.is_not(None)))
        assert set(titles) == {"Importado de Anki"}


def test_note_counts_are_written_as_numbers_of_the_pages_language(app: Flask) -> None:
    error = AnkiPackageError("too many", kind="too_many_notes", count=12_500, limit=10_000)
    with app.test_request_context(headers={"Accept-Language": "es"}):
        message = import_error_message(error)
    assert "12.500" in message and "10.000" in message, message


def test_too_many_reviews_says_to_import_without_progress(app: Flask) -> None:
    error = AnkiPackageError("too many", kind="too_many_reviews", count=1_200_000, limit=10**6)
    with app.test_request_context(headers={"Accept-Language": "es"}):
        message = import_error_message(error)
    assert "1.200.000 repasos" in message and "sin el progreso" in message, message


def test_too_many_cards_from_cloze_notes_is_said_as_such(app: Flask) -> None:
    error = AnkiPackageError("too many", kind="too_many_cards", count=60_000, limit=50_000)
    with app.test_request_context(headers={"Accept-Language": "ko"}):
        message = import_error_message(error)
    assert "카드 60,000장" in message and "50,000장" in message, message


def test_the_import_form_takes_the_cards_language(
    client: FlaskClient, loaded_engine: Engine, tmp_path: Path
) -> None:
    # An English speaker importing a Korean deck made in Anki: its cards are Korean here.
    sign_up(client, language="en")
    page = client.get("/").get_data(as_text=True)
    assert '<option value="">Automatic: the deck it updates, else English</option>' in page
    response = _upload(client, anki_native_package(tmp_path), locale="ko")
    assert response.status_code == 302
    slug = response.headers["Location"].rsplit("/", 1)[-1]
    with transaction(loaded_engine) as s:
        deck = s.scalars(select(Deck).where(Deck.slug == slug)).one()
        assert deck.default_locale == "ko"


def test_a_cloze_cards_blank_and_its_answer_are_marked(
    client: FlaskClient, loaded_engine: Engine, tmp_path: Path
) -> None:
    """As Anki shows a Cloze card: the part asked for stands out on both sides; a Basic
    card's texts are not marked."""
    sign_up(client)
    response = _upload(client, anki_native_package(tmp_path))
    assert response.status_code == 302
    with transaction(loaded_engine) as s:
        slug = s.scalar(select(Deck.slug).order_by(Deck.id.desc()).limit(1))
    page = client.get(f"/decks/{slug}/cards").get_data(as_text=True)
    assert '<mark class="blank">[...]</mark> make proteins' in page
    assert '<mark class="blank">Ribosomes</mark> make proteins' in page
    assert page.count('<mark class="blank">') == 2
