"""The Anki package API: export with the caller's progress, import as the caller's deck."""

from __future__ import annotations

import io
import sqlite3
import zipfile
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from flask import Flask
from flask.testing import FlaskClient
from fsrs import Rating
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, delete, func, select

from flashcards.storage.engine import transaction
from flashcards.storage.models import CardText, Deck, ReviewLog, ReviewState, Subscription

from . import factories as f
from .conftest import T0
from .test_anki_export import anki_import
from .test_anki_import import SUSPENDED_MESSAGE, edited_package, suspended_package
from .test_api_study import assert_problem, bearer
from .test_schemathesis import CHECKS

OCTET = {"Content-Type": "application/octet-stream"}


class World:
    """Ana studied two cards of 'alpha' (en, es); Ben studied a third and owns 'bens'."""

    def __init__(self, engine: Engine) -> None:
        with transaction(engine) as s:
            self.ana = f.make_user(s)
            self.ben = f.make_user(s)
            self.ana_h = bearer(f.make_token(s, self.ana))
            self.ben_h = bearer(f.make_token(s, self.ben))
            alpha = f.make_deck(s, "alpha", 3, locales=("en", "es"))
            f.make_deck(s, "bens", 2, owner_user_id=self.ben)
            f.subscribe(s, self.ana, alpha)
            f.subscribe(s, self.ben, alpha)
            cards = f.card_ids(s, alpha.id)
            f.answer(s, self.ana, cards[0], Rating.Easy, now=T0)
            f.answer(s, self.ana, cards[1], Rating.Again, now=T0)
            f.answer(s, self.ben, cards[2], Rating.Good, now=T0)


@pytest.fixture
def world(engine: Engine) -> World:
    return World(engine)


def export(client: FlaskClient, headers: dict[str, str], query: str, slug: str = "alpha") -> Any:
    return client.get(f"/api/v1/decks/{slug}/export.apkg?{query}", headers=headers)


def deck_count(engine: Engine) -> int:
    with transaction(engine) as s:
        return s.scalar(select(func.count()).select_from(Deck)) or 0


def test_export_with_progress_has_only_the_callers_state(
    client: FlaskClient, world: World, tmp_path: Path
) -> None:
    response = export(client, world.ana_h, "locale=en&with_scheduling=true")
    assert response.status_code == 200
    assert response.mimetype == "application/octet-stream"
    assert response.headers["Content-Disposition"] == "attachment; filename=alpha-en.apkg"
    assert response.headers["X-Notes"] == "3" and response.headers["X-Reviews"] == "2"
    col, log = anki_import(tmp_path / "c.anki2", response.data)
    try:
        assert len(log.new) == 3
        cards = [col.get_card(c) for c in col.find_cards("")]
        # Ana's two answers, not Ben's: one card in review, one in learning, one new.
        assert sorted(c.type for c in cards) == [0, 1, 2]
        assert all(c.memory_state is not None for c in cards if c.type != 0)
        assert col.db.scalar("select count() from revlog") == 2
        assert sorted(col.db.list("select ease from revlog")) == [1, 4]
    finally:
        col.close()


def test_export_without_progress_or_in_every_language(
    client: FlaskClient, world: World, tmp_path: Path
) -> None:
    plain = export(client, world.ana_h, "")
    assert plain.status_code == 200 and plain.headers["X-Reviews"] == "0"
    col, log = anki_import(tmp_path / "a.anki2", plain.data, with_scheduling=False)
    try:
        assert len(log.new) == 3
        assert {col.get_card(c).type for c in col.find_cards("")} == {0}
    finally:
        col.close()
    every = export(client, world.ben_h, "all_locales=true")
    assert every.status_code == 200
    assert every.headers["Content-Disposition"] == "attachment; filename=alpha-all.apkg"
    col, log = anki_import(tmp_path / "b.anki2", every.data)
    try:
        assert len(log.new) == 6
        names = {d.name for d in col.decks.all_names_and_ids()}
        assert {"alpha (en)::English", "alpha (en)::Español"} <= names
    finally:
        col.close()


def test_export_defaults_to_the_language_the_caller_studies(
    client: FlaskClient, world: World
) -> None:
    assert export(client, world.ana_h, "").headers["Content-Disposition"].endswith("-en.apkg")
    r = client.put("/api/v1/decks/alpha/subscription", json={"locale": "es"}, headers=world.ana_h)
    assert r.status_code == 200
    plain = export(client, world.ana_h, "")
    assert plain.headers["Content-Disposition"] == "attachment; filename=alpha-es.apkg"
    assert (
        export(client, world.ana_h, "locale=en").headers["Content-Disposition"].endswith("-en.apkg")
    )


def test_export_in_a_language_missing_a_card_keeps_it_in_the_decks_language(
    client: FlaskClient, world: World, engine: Engine, tmp_path: Path
) -> None:
    with transaction(engine) as s:
        alpha = s.scalars(select(Deck).where(Deck.slug == "alpha")).one()
        studied_again = f.card_ids(s, alpha.id)[1]  # Ana's Again: a learning card
        s.execute(
            delete(CardText).where(CardText.card_id == studied_again, CardText.locale == "es")
        )
    response = export(client, world.ana_h, "locale=es&with_scheduling=true")
    assert response.status_code == 200
    assert response.headers["X-Notes"] == "3" and response.headers["X-Reviews"] == "2"
    col, log = anki_import(tmp_path / "c.anki2", response.data)
    try:
        assert len(log.new) == 3
        # Shown in English, as the study page shows it, and tagged so.
        (nid,) = col.find_notes("tag:lang::en")
        note = col.get_note(nid)
        assert note["Key"] == "c02" and note["Front"] == "alpha q2 en"
        assert len(col.find_notes("tag:lang::es")) == 2
        (cid,) = col.find_cards(f"nid:{nid}")
        assert col.get_card(cid).type == 1  # with Ana's progress
        assert sorted(col.db.list("select ease from revlog")) == [1, 4]
    finally:
        col.close()


def test_export_refusals(client: FlaskClient, world: World) -> None:
    assert_problem(export(client, world.ana_h, "", slug="bens"), 404)
    assert_problem(export(client, world.ana_h, "", slug="nope"), 404)
    assert export(client, world.ben_h, "", slug="bens").status_code == 200
    assert_problem(export(client, world.ana_h, "locale=ko"), 422, "locale")
    assert_problem(export(client, world.ana_h, "locale=en&all_locales=true"), 422, "locale")
    assert_problem(export(client, world.ana_h, "with_scheduling=maybe"), 422, "with_scheduling")
    assert_problem(export(client, {}, ""), 401)


def decks_of(client: FlaskClient, headers: dict[str, str]) -> dict[str, Any]:
    response = client.get("/api/v1/decks", headers=headers)
    assert response.status_code == 200
    return {d["slug"]: d for d in response.get_json()["decks"]}


def test_import_of_our_export_is_the_callers_deck(
    client: FlaskClient, world: World, engine: Engine
) -> None:
    package = export(client, world.ana_h, "locale=en&with_scheduling=true").data
    response = client.post(
        "/api/v1/imports?slug=mine&with_scheduling=true",
        data=package,
        headers={**world.ana_h, **OCTET},
    )
    assert response.status_code == 201, response.get_data(as_text=True)
    report = response.get_json()
    slug = f"user{world.ana}-mine"  # a user's decks are named in their own space
    assert report["deck"]["slug"] == slug and report["deck"]["default_locale"] == "en"
    assert report["cards"] == 3 and report["texts"] == 3
    assert report["review_states"] == 2 and report["review_logs"] == 2
    assert isinstance(report["messages"], list)
    with transaction(engine) as s:
        deck = s.scalars(select(Deck).where(Deck.slug == slug)).one()
        assert deck.owner_user_id == world.ana
        assert s.get(Subscription, (world.ana, deck.id)) is not None
        states = s.scalar(
            select(func.count()).select_from(ReviewState).where(ReviewState.deck_id == deck.id)
        )
        logs = s.scalars(select(ReviewLog.user_id).where(ReviewLog.deck_id == deck.id)).all()
        assert states == 2 and logs == [world.ana, world.ana]
    mine = decks_of(client, world.ana_h)[slug]
    assert mine["card_count"] == 3 and mine["subscription"] == {"locale": "en"}
    assert slug not in decks_of(client, world.ben_h)
    assert_problem(export(client, world.ben_h, "", slug=slug), 404)
    # The same slug again is a conflict, and nothing more is written.
    before = deck_count(engine)
    again = client.post("/api/v1/imports?slug=mine", data=package, headers={**world.ana_h, **OCTET})
    assert_problem(again, 409, "slug")
    assert deck_count(engine) == before
    # Another user asking for the same name gets it in their own space: neither a refusal
    # nor a renamed deck tells them that Ana has a private deck called so.
    bens = client.post("/api/v1/imports?slug=mine", data=package, headers={**world.ben_h, **OCTET})
    assert bens.status_code == 201, bens.get_data(as_text=True)
    assert bens.get_json()["deck"]["slug"] == f"user{world.ben}-mine"
    # The name must leave room for the prefix in the 100 characters a slug has.
    longest = 100 - len(f"user{world.ben}-")
    too_long = client.post(
        f"/api/v1/imports?slug={'a' * (longest + 1)}", data=package,
        headers={**world.ben_h, **OCTET},
    )  # fmt: skip
    assert_problem(too_long, 422, "slug")
    assert f"at most {longest}" in too_long.get_json()["detail"]


def test_import_as_a_multipart_form_without_progress(
    client: FlaskClient, world: World, engine: Engine
) -> None:
    package = export(client, world.ana_h, "all_locales=true").data
    response = client.post(
        "/api/v1/imports?copy=true",  # Ben studies alpha too: else it would update it
        data={"file": (io.BytesIO(package), "alpha.apkg")},
        headers=world.ben_h,
        content_type="multipart/form-data",
    )
    assert response.status_code == 201, response.get_data(as_text=True)
    report = response.get_json()
    assert report["cards"] == 3 and report["texts"] == 6 and report["review_states"] == 0
    slug = report["deck"]["slug"]
    assert slug not in {"alpha", "bens"}
    assert slug in decks_of(client, world.ben_h) and slug not in decks_of(client, world.ana_h)
    with transaction(engine) as s:
        deck = s.scalars(select(Deck).where(Deck.slug == slug)).one()
        assert deck.owner_user_id == world.ben
        assert s.scalar(select(func.count()).select_from(ReviewLog).where(
            ReviewLog.deck_id == deck.id)) == 0  # fmt: skip
    missing = client.post(
        "/api/v1/imports",
        data={"other": (io.BytesIO(package), "alpha.apkg")},
        headers=world.ben_h,
        content_type="multipart/form-data",
    )
    assert_problem(missing, 422, "file")


def test_import_reports_suspended_cards_made_active(
    client: FlaskClient, world: World, tmp_path: Path
) -> None:
    # Without progress: with it, they stay suspended (tests/test_anki_import.py).
    response = client.post(
        "/api/v1/imports?with_scheduling=false",
        data=suspended_package(tmp_path),
        headers={**world.ana_h, **OCTET},
    )
    assert response.status_code == 201, response.get_data(as_text=True)
    report = response.get_json()
    assert report["cards"] == 6 and report["suspended_made_active"] == 3
    assert SUSPENDED_MESSAGE in report["messages"]


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def without_notes(package: bytes, tmp: Path, drop: list[tuple[str, str]]) -> bytes:
    """The package with the notes of these (key, language) pairs taken out."""

    def delete(db: sqlite3.Connection) -> None:
        for key, locale in drop:
            gone = db.execute(
                "DELETE FROM notes WHERE flds LIKE ? AND tags LIKE ?",
                (f"%\x1f{key}", f"% lang::{locale} %"),
            ).rowcount
            assert gone == 1, (key, locale)

    return edited_package(package, tmp, delete)


def test_imported_deck_language_has_every_card(
    client: FlaskClient, world: World, engine: Engine, tmp_path: Path
) -> None:
    package = export(client, world.ana_h, "all_locales=true").data  # en and es, 3 cards each
    before = deck_count(engine)

    def post(query: str, body: bytes) -> Any:
        # Each a new deck: the second would otherwise update the first (test_anki_reimport).
        return client.post(
            f"/api/v1/imports?copy=true&{query}", data=body, headers={**world.ben_h, **OCTET}
        )

    # A language the package does not have, or lacks a card in, cannot be the deck's.
    assert (
        "for 0 of its 3 cards"
        in assert_problem(post("locale=fr", package), 422, "locale")["detail"]
    )
    gappy = without_notes(package, tmp_path, [("c02", "es")])
    problem = assert_problem(post("locale=es", gappy), 422, "locale")
    assert "for 2 of its 3 cards" in problem["detail"] and "every card: en" in problem["detail"]
    assert deck_count(engine) == before
    # Unasked, the deck takes a language that has every card; the other stays for the rest.
    response = post("", gappy)
    assert response.status_code == 201, response.get_data(as_text=True)
    assert response.get_json()["deck"]["default_locale"] == "en"
    # With no complete language at all there is nothing to show some cards in: refused.
    none_complete = without_notes(package, tmp_path, [("c01", "en"), ("c02", "es")])
    assert "no language" in assert_problem(post("", none_complete), 422)["detail"]
    assert deck_count(engine) == before + 1


BAD_PACKAGES = {
    # name: (body, words the problem's detail must contain)
    "empty": (b"", "zip"),
    "not a zip": (b"PK\x03\x04 certainly not a real archive" * 10, "zip"),
    "zip without a collection": (_zip({"readme.txt": b"hello"}), "no collection"),
    "collection that is not SQLite": (
        _zip({"collection.anki2": b"SQLite format 2\x00" * 64}),
        "not a readable Anki database",
    ),
    "zip bomb": (_zip({"collection.anki2": b"\x00" * (8 << 20)}), "unpack"),
}


@pytest.mark.parametrize("name", sorted(BAD_PACKAGES))
def test_bad_packages_are_422_with_nothing_written(
    app: Flask, client: FlaskClient, world: World, engine: Engine, name: str
) -> None:
    if name == "zip bomb":
        # 8 MiB of zeros deflate to a few KiB: over ten times this limit once unpacked.
        app.config["MAX_UPLOAD_BYTES"] = 200_000
    data, words = BAD_PACKAGES[name]
    before = deck_count(engine)
    response = client.post(
        "/api/v1/imports?with_scheduling=true",
        data=data,
        headers={**world.ana_h, "Content-Type": "application/zip"},
    )
    assert words in assert_problem(response, 422)["detail"]
    assert deck_count(engine) == before


def test_body_limits(app: Flask, client: FlaskClient, world: World, engine: Engine) -> None:
    package = export(client, world.ana_h, "").data
    # JSON bodies keep their small limit, and the package endpoint is not bound by it.
    app.config["MAX_CONTENT_LENGTH"] = 1000
    assert len(package) > 1000
    ok = client.post("/api/v1/imports", data=package, headers={**world.ana_h, **OCTET})
    assert ok.status_code == 200, ok.get_data(as_text=True)  # alpha, which Ana studies
    before = deck_count(engine)
    app.config["MAX_UPLOAD_BYTES"] = len(package) - 1
    body = assert_problem(
        client.post("/api/v1/imports", data=package, headers={**world.ana_h, **OCTET}), 413
    )
    assert str(len(package) - 1) in body["detail"]
    form = client.post(
        "/api/v1/imports",
        data={"file": (io.BytesIO(package), "alpha.apkg")},
        headers=world.ana_h,
        content_type="multipart/form-data",
    )
    assert_problem(form, 413)
    assert deck_count(engine) == before


def test_import_refusals_before_reading(client: FlaskClient, world: World) -> None:
    package = b"PK"
    assert_problem(client.post("/api/v1/imports", data=package, headers=OCTET), 401)
    plain = client.post(
        "/api/v1/imports", data=package, headers={**world.ana_h, "Content-Type": "text/plain"}
    )
    assert_problem(plain, 415)
    bad_slug = client.post(
        "/api/v1/imports?slug=Not%20A%20Slug", data=package, headers={**world.ana_h, **OCTET}
    )
    assert_problem(bad_slug, 422, "slug")


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_schemathesis_with_real_slugs(app: Flask, world: World) -> None:
    """The binary 200s conform too: the suite-wide run only ever meets unknown slugs."""
    schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", app)
    statuses: dict[str, set[int]] = {}
    for result in schema.get_all_operations():
        operation = result.ok()
        if operation.path not in {"/api/v1/decks/{slug}/export.apkg", "/api/v1/imports"}:
            continue
        statuses.setdefault(operation.path, set())

        @given(case=operation.as_strategy(), slug=st.sampled_from(["alpha", "bens"]))
        @settings(
            max_examples=15,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def check(case: Any, slug: str) -> None:
            if case.path_parameters and "slug" in case.path_parameters:
                case.path_parameters["slug"] = slug
            response = case.call_and_validate(headers=world.ana_h, checks=CHECKS)
            statuses[case.operation.path].add(response.status_code)

        check()
    assert 200 in statuses["/api/v1/decks/{slug}/export.apkg"]
    assert statuses["/api/v1/imports"]
