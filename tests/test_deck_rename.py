"""Renaming one's own deck on its page and through the API: the title in one language changes,
the slug (its address) stays; a blank or overlong title, a language the deck lacks, another
person's deck and a shipped one are refused with nothing written. A device's renames are in
`test_anki_sync_device_edits.py`."""

from __future__ import annotations

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import Engine, select

from flashcards.decks import own_decks
from flashcards.storage.engine import transaction
from flashcards.storage.models import Deck, DeckText

from . import factories as f
from .conftest import T0
from .test_sweep_authorization import dump
from .web_helpers import csrf, sign_up


def titles(engine: Engine, slug: str) -> dict[str, str]:
    with transaction(engine) as s:
        rows = s.execute(
            select(DeckText.locale, DeckText.title)
            .join(Deck, Deck.id == DeckText.deck_id)
            .where(Deck.slug == slug)
        )
        return {locale: title for locale, title in rows}


def test_the_deck_page_renames_an_own_deck(client: FlaskClient, engine: Engine) -> None:
    sign_up(client)
    form = {"csrf_token": csrf(client, "/decks/new"), "title": "Kitchen", "locale": "en",
            "other_locales": ["es"]}  # fmt: skip
    slug = client.post("/decks/new", data=form).headers["Location"].split("/")[2]
    page = client.get(f"/decks/{slug}").get_data(as_text=True)
    assert "Rename this deck" in page and 'value="Kitchen"' in page
    rename = {"csrf_token": csrf(client, f"/decks/{slug}"), "locale": "en",
              "title": "  Kitchen::Tools "}  # fmt: skip
    r = client.post(f"/decks/{slug}/rename", data=rename)
    assert r.status_code == 303 and r.headers["Location"] == f"/decks/{slug}"
    page = client.get(f"/decks/{slug}").get_data(as_text=True)
    # A subdeck's path shown muted before its own name; the title itself stays as typed.
    assert "Deck renamed." in page
    assert '><span class="deck-path">Kitchen › </span>Tools</h1>' in page
    library = client.get("/").get_data(as_text=True)
    assert (
        '<h2 lang="en">Kitchen</h2>' in library
        and f'<a href="/decks/{slug}" lang="en">Tools</a>' in library
    )
    assert titles(engine, slug) == {"en": "Kitchen::Tools", "es": "Kitchen"}

    before = dump(engine)
    for field, value, message in [
        ("title", " ", "A title needs 1 to 200 characters."),
        ("title", "x" * 201, "A title needs 1 to 200 characters."),
        ("locale", "ko", "Check “Language”: this value is not allowed."),
    ]:
        r = client.post(f"/decks/{slug}/rename", data={**rename, field: value})
        assert r.status_code == 303
        assert message in client.get(f"/decks/{slug}").get_data(as_text=True)
    assert client.post(f"/decks/{slug}/rename", data={"title": "No token"}).status_code == 400
    assert dump(engine) == before


def test_a_spanish_page_names_the_language_of_the_title(client: FlaskClient) -> None:
    sign_up(client, language="es")
    form = {"csrf_token": csrf(client, "/decks/new"), "title": "Cocina", "locale": "es"}
    slug = client.post("/decks/new", data=form).headers["Location"].split("/")[2]
    page = client.get(f"/decks/{slug}").get_data(as_text=True)
    assert "Cambiar el nombre del mazo" in page and "Título en español" in page


def test_only_ones_own_deck_is_renamed(client: FlaskClient, engine: Engine) -> None:
    with transaction(engine) as s:
        other = f.make_user(s, "other@example.com")
        f.make_deck(s, "theirs", 1, owner_user_id=other)
        f.make_deck(s, "shipped", 1)
    sign_up(client)
    token = csrf(client, "/")
    before = dump(engine)
    assert client.post("/decks/theirs/rename", data={"csrf_token": token, "title": "Mine"}
                       ).status_code == 404  # fmt: skip
    assert client.post("/decks/shipped/rename", data={"csrf_token": token, "title": "Mine"}
                       ).status_code == 403  # fmt: skip
    assert dump(engine) == before


def test_the_api_renames_an_own_deck(app: Flask, engine: Engine) -> None:
    with transaction(engine) as s:
        ana = f.make_user(s, "ana@example.com")
        ben = f.make_user(s, "ben@example.com")
        headers = {"Authorization": f"Bearer {f.make_token(s, ana)}"}
        ben_headers = {"Authorization": f"Bearer {f.make_token(s, ben)}"}
        f.make_deck(s, "shipped", 1)
    api = app.test_client()
    deck = api.post(
        "/api/v1/decks", headers=headers, json={"title": "Verbs", "locales": ["es", "en"]}
    ).get_json()
    url = f"/api/v1/decks/{deck['slug']}"
    r = api.patch(url, headers=headers, json={"title": "Verbos"})
    assert r.status_code == 200, r.get_json()
    assert r.get_json() == {**deck, "title": "Verbos"}
    r = api.patch(url, headers=headers, json={"title": "Verbs", "locale": "en"})
    assert r.get_json()["title"] == "Verbos"  # the default language's
    assert titles(engine, deck["slug"]) == {"es": "Verbos", "en": "Verbs"}

    before = dump(engine)
    for who, target, body, status in [
        (headers, url, {"title": " "}, 422),
        (headers, url, {"title": "x" * 201}, 422),
        (headers, url, {"title": "T", "locale": "ko"}, 422),
        (headers, url, {}, 422),
        (headers, url, {"title": "T", "extra": 1}, 422),
        (ben_headers, url, {"title": "T"}, 404),
        (headers, "/api/v1/decks/shipped", {"title": "T"}, 403),
    ]:
        r = api.patch(target, headers=who, json=body)
        assert r.status_code == status, (body, r.get_json())
        assert r.mimetype == "application/problem+json"
    assert dump(engine) == before


def test_a_parent_renamed_takes_its_own_subdecks_and_a_taken_title_is_refused(
    app: Flask, engine: Engine
) -> None:
    with transaction(engine) as s:
        ana = f.make_user(s, "ana@example.com")
        headers = {"Authorization": f"Bearer {f.make_token(s, ana)}"}
    api = app.test_client()
    slugs = {}
    for title in ["Training", "Training::Notes", "Training::Notes::NCCL", "Trainings",
                  "Old::Training", "Ops::Training::Notes"]:  # fmt: skip
        r = api.post("/api/v1/decks", headers=headers, json={"title": title, "locales": ["en"]})
        assert r.status_code == 201, r.get_json()
        slugs[title] = r.get_json()["slug"]
    r = api.post("/api/v1/decks", headers=headers, json={"title": "Trainings", "locales": ["en"]})
    assert r.status_code == 409 and r.get_json()["type"].endswith("deck-title-taken")

    r = api.patch(f"/api/v1/decks/{slugs['Training']}", headers=headers, json={"title": "ML"})
    assert r.status_code == 200, r.get_json()
    assert {title: titles(engine, slug)["en"] for title, slug in slugs.items()} == {
        "Training": "ML",
        "Training::Notes": "ML::Notes",
        "Training::Notes::NCCL": "ML::Notes::NCCL",
        "Trainings": "Trainings",  # a name that starts alike is no subdeck
        "Old::Training": "Old::Training",
        "Ops::Training::Notes": "Ops::Training::Notes",
    }

    # A rename onto a title they have, or whose subdeck would land on one, changes nothing.
    before = dump(engine)
    for slug, title in [(slugs["Trainings"], "ML"), (slugs["Training"], "Ops::Training"),
                        (slugs["Trainings"], "ML::Notes")]:  # fmt: skip
        r = api.patch(f"/api/v1/decks/{slug}", headers=headers, json={"title": title})
        assert r.status_code == 409, (title, r.get_json())
    assert dump(engine) == before


def test_a_new_deck_title_is_read_as_anki_names_decks(client: FlaskClient, engine: Engine) -> None:
    sign_up(client)

    def create(title: str) -> tuple[int, str]:
        form = {"csrf_token": csrf(client, "/decks/new"), "title": title, "locale": "en"}
        response = client.post("/decks/new", data=form)
        return response.status_code, response.get_data(as_text=True)

    status, _page = create("Training:: ")
    assert status == 303
    with transaction(engine) as s:
        assert set(s.scalars(select(DeckText.title))) == {"Training"}  # no empty subdeck name
    for taken in ("Training", "training", " TRAINING :: "):  # as Anki compares deck names
        status, page = create(taken)
        assert status == 409 and "You already have a deck of that name" in page
    status, page = create(" :: ")
    assert status == 422 and "A title needs 1 to 200 characters." in page
    with transaction(engine) as s:
        assert s.scalars(select(DeckText.title)).all() == ["Training"]


def test_a_name_from_a_device_is_taken_as_it_is(engine: Engine) -> None:
    """A device renames each subdeck itself, and its names are its own: neither moved with
    their parent nor refused for a title the person has here."""
    with transaction(engine) as s:
        ana = f.make_user(s, "ana@example.com")
        decks = {
            title: own_decks.create_own_deck(s, ana, title=title, locales=["en"], now=T0).slug
            for title in ("Training", "Training::Notes", "ML")
        }
        own_decks.rename_own_deck(s, ana, decks["Training"], title="ML", from_device=True)
        made = own_decks.create_own_deck(s, ana, title="ml", locales=["en"], now=T0,
                                         from_device=True)  # fmt: skip
    assert titles(engine, decks["Training"]) == {"en": "ML"}
    assert titles(engine, decks["Training::Notes"]) == {"en": "Training::Notes"}
    assert titles(engine, made.slug) == {"en": "ml"}
