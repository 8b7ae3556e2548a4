"""A person's own decks made and edited on the web and through the API: made empty, cards
added, edited (in each language, with tags) and retired, with the person's progress kept;
other people's decks not found, shipped and team decks not theirs to edit; Anki imports the
export of such a deck (the real `anki` package)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from flashcards.anki import export_deck
from flashcards.anki_sync import kept, snapshot
from flashcards.decks import own_decks
from flashcards.errors import EditingRetiredCard, InvalidInput, NotDeckOwner, NotFound
from flashcards.storage.engine import transaction
from flashcards.storage.models import (
    Card,
    CardText,
    Deck,
    DeckText,
    ReviewState,
    Subscription,
    User,
)
from flashcards.teams import team_decks
from flashcards.teams.membership import create_team

from . import factories as f
from .conftest import T0
from .test_anki_export import anki_import, wall_now
from .test_sweep_authorization import dump
from .web_helpers import csrf, sign_up, subscribe


def _texts(s: Session, deck_id: int, key: str) -> dict[str, tuple[str, str, str]]:
    rows = s.scalars(select(CardText).join(Card).where(Card.deck_id == deck_id, Card.key == key))
    return {t.locale: (t.question, t.answer, t.explanation) for t in rows}


def test_a_deck_made_edited_and_retired_keeps_progress(engine: Engine) -> None:
    with transaction(engine) as s:
        ana = f.make_user(s, "ana@example.com")
        deck = own_decks.create_own_deck(
            s, ana, title="  Spanish   verbs ", locales=["en", "es", "en"], now=T0
        )
        slug, deck_id = deck.slug, deck.id
        assert slug == f"user{ana}-spanish-verbs" and deck.default_locale == "en"
        titles = s.scalars(select(DeckText.title).where(DeckText.deck_id == deck_id)).all()
        assert sorted(titles) == ["Spanish verbs", "Spanish verbs"]
        assert s.get(Subscription, (ana, deck_id)) is not None  # studied at once
        (key,) = own_decks.add_card(
            s, ana, slug, question="to eat", answer="comer", explanation="",
            tags=["food", "verb", "food", ""], now=T0,
        )  # fmt: skip
        (other,) = own_decks.add_card(
            s, ana, slug, question="to go", answer="ir", explanation="", tags=None, now=T0
        )
        assert (key, other) == ("c001", "c002")
        card_id = s.scalar(select(Card.id).where(Card.deck_id == deck_id, Card.key == key))
        assert card_id is not None
        f.answer(s, ana, card_id, "good", now=T0)
    with transaction(engine) as s:
        before = s.get(ReviewState, (ana, card_id))
        assert before is not None and before.reps == 1
        due = before.due
        own_decks.edit_card(
            s, ana, slug, key, locale=None, question="to eat (something)", answer=None,
            explanation="irregular? no", tags=["verb"], now=T0,
        )  # fmt: skip
        own_decks.edit_card(
            s, ana, slug, key, locale="es", question="comer", answer="to eat",
            explanation=None, tags=None, now=T0,
        )  # fmt: skip
    with transaction(engine) as s:
        after = s.get(ReviewState, (ana, card_id))
        assert after is not None and (after.reps, after.due) == (1, due)
        assert _texts(s, deck_id, key) == {
            "en": ("to eat (something)", "comer", "irregular? no"),
            "es": ("comer", "to eat", ""),
        }
        assert s.scalar(select(Card.tags).where(Card.id == card_id)) == ["verb"]
        own_decks.retire_card(s, ana, slug, key, now=T0)
    with transaction(engine) as s:
        retired = s.get(Card, card_id)
        assert retired is not None and retired.retired_at is not None
        assert s.get(ReviewState, (ana, card_id)) is not None  # history kept
        with pytest.raises(EditingRetiredCard):
            own_decks.edit_card(
                s, ana, slug, key, locale=None, question="x", answer="y", explanation=None,
                tags=None, now=T0,
            )  # fmt: skip
        with pytest.raises(NotFound):  # editing is not adding
            own_decks.edit_card(
                s, ana, slug, "c099", locale=None, question="x", answer="y", explanation=None,
                tags=None, now=T0,
            )  # fmt: skip
        # The last card of one's own deck may go too: the deck starts over.
        own_decks.retire_card(s, ana, slug, other, now=T0)
        # A new card never takes a retired card's key (its progress would come back).
        assert own_decks.add_card(
            s, ana, slug, question="q", answer="a", explanation="", tags=None, now=T0
        ) == ["c003"]  # fmt: skip


def test_bad_input_and_other_decks_are_refused_with_nothing_written(engine: Engine) -> None:
    with transaction(engine) as s:
        ana, ben = f.make_user(s, "ana@example.com"), f.make_user(s, "ben@example.com")
        slug = own_decks.create_own_deck(s, ana, title="Mine", locales=["en"], now=T0).slug
        own_decks.add_card(s, ana, slug, question="q", answer="a", explanation="", tags=None,
                           now=T0)  # fmt: skip
        f.make_deck(s, "shipped", 1)
        team = create_team(s, ana, "T", now=T0).id
        team_slug = team_decks.create_team_deck(
            s, team, ana, fmt="csv", content="front,back\nQ,A\n", locale="en", title="Team",
            now=T0,
        )[0].slug  # fmt: skip
    before = dump(engine)
    bad: list[tuple[type[Exception], dict[str, Any]]] = [
        (InvalidInput, {"question": " "}),
        (InvalidInput, {"question": "a\x00b"}),
        (InvalidInput, {"tags": ["two words"]}),
        (InvalidInput, {"tags": [f"t{n}" for n in range(21)]}),
        (InvalidInput, {"tags": ["x" * 101]}),
        (InvalidInput, {"locale": "ko"}),  # not one of the deck's languages
        (NotFound, {"slug": "nothing"}),
        (NotDeckOwner, {"slug": "shipped"}),
        (NotDeckOwner, {"slug": team_slug}),  # its leads edit it on the team's pages
        (NotFound, {"user": ben}),
    ]
    for error, change in bad:
        args: dict[str, Any] = {
            "user": ana, "slug": slug, "locale": None, "question": "q2", "tags": None,
        } | change  # fmt: skip
        with transaction(engine) as s, pytest.raises(error):
            own_decks.edit_card(
                s, args["user"], args["slug"], "c001", locale=args["locale"],
                question=args["question"], answer=None, explanation=None, tags=args["tags"],
                now=T0,
            )  # fmt: skip
    for title, locales in [(" ", ["en"]), ("x" * 201, ["en"]), ("T", []), ("T", ["xx"])]:
        with transaction(engine) as s, pytest.raises(InvalidInput):
            own_decks.create_own_deck(s, ana, title=title, locales=locales, now=T0)
    assert dump(engine) == before


def _api(app: Flask, engine: Engine, email: str) -> tuple[FlaskClient, dict[str, str], int]:
    with transaction(engine) as s:
        user = f.make_user(s, email)
        token = f.make_token(s, user)
    return app.test_client(), {"Authorization": f"Bearer {token}"}, user


def test_the_api_makes_and_edits_own_decks(app: Flask, engine: Engine) -> None:
    api, ana, ana_id = _api(app, engine, "ana@example.com")
    _, ben, _ = _api(app, engine, "ben@example.com")
    r = api.post("/api/v1/decks", headers=ana, json={"title": "Verbs", "locales": ["es", "en"]})
    assert r.status_code == 201, r.get_json()
    deck = r.get_json()
    assert deck == {
        "slug": f"user{ana_id}-verbs", "title": "Verbs", "default_locale": "es",
        "locales": ["en", "es"],
    }  # fmt: skip
    cards = f"/api/v1/decks/{deck['slug']}/cards"
    r = api.post(cards, headers=ana, json={"front": "comer", "back": "to eat", "tags": ["v"]})
    assert r.status_code == 201, r.get_json()
    assert r.get_json() == {
        "key": "c001", "keys": ["c001"], "tags": ["v"],
        "texts": {"es": {"front": "comer", "back": "to eat", "explanation": ""}},
    }  # fmt: skip
    r = api.patch(f"{cards}/c001", headers=ana, json={"locale": "en", "front": "eat",
                                                     "back": "comer"})  # fmt: skip
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["texts"]["en"] == {"front": "eat", "back": "comer", "explanation": ""}
    r = api.patch(f"{cards}/c001", headers=ana, json={"tags": ["verb", "a1"]})
    assert r.get_json()["tags"] == ["verb", "a1"]
    assert r.get_json()["texts"]["es"]["front"] == "comer"
    listed = api.get("/api/v1/decks", headers=ana).get_json()["decks"]
    assert [(d["slug"], d["card_count"]) for d in listed] == [(deck["slug"], 1)]

    before = dump(engine)
    for method, url, body, status in [
        ("POST", "/api/v1/decks", {"title": " ", "locales": ["en"]}, 422),
        ("POST", "/api/v1/decks", {"title": "T", "locales": []}, 422),
        ("POST", "/api/v1/decks", {"title": "T", "locales": ["zz"]}, 422),
        ("POST", "/api/v1/decks", {"title": "T"}, 422),
        ("POST", cards, {"front": "", "back": "b"}, 422),
        ("POST", cards, {"front": "a", "back": "b", "tags": ["two words"]}, 422),
        ("POST", cards, {"front": "a", "back": "b", "extra": 1}, 422),
        ("PATCH", f"{cards}/c001", {"locale": "ko", "front": "x"}, 422),
        ("PATCH", f"{cards}/c001", {"front": 3}, 422),
        ("PATCH", f"{cards}/c404", {"front": "x"}, 404),
        ("DELETE", f"{cards}/c404", None, 404),
    ]:
        r = api.open(url, method=method, headers=ana, json=body)
        assert r.status_code == status, (method, url, body, r.get_json())
        assert r.mimetype == "application/problem+json"
    for method, url, body in [
        ("POST", cards, {"front": "a", "back": "b"}),
        ("PATCH", f"{cards}/c001", {"front": "x"}),
        ("DELETE", f"{cards}/c001", None),
    ]:
        r = api.open(url, method=method, headers=ben, json=body)
        assert r.status_code == 404, (method, url, r.get_json())
        assert "comer" not in r.get_data(as_text=True)
    assert dump(engine) == before

    with transaction(engine) as s:
        f.make_deck(s, "shipped", 1)
    r = api.post("/api/v1/decks/shipped/cards", headers=ana, json={"front": "a", "back": "b"})
    assert r.status_code == 403 and r.mimetype == "application/problem+json"
    assert api.delete(f"{cards}/c001", headers=ana).status_code == 204
    r = api.patch(f"{cards}/c001", headers=ana, json={"front": "x"})
    assert r.status_code == 409, r.get_json()


CARD_LINK_RE = re.compile(r'href="(/decks/[^"/]+/cards/c\d+)[^"]*"')


def test_the_web_pages_make_and_edit_own_decks(client: FlaskClient, engine: Engine) -> None:
    sign_up(client)
    library = client.get("/").get_data(as_text=True)
    assert 'href="/decks/new"' in library
    token = csrf(client, "/decks/new")
    r = client.post("/decks/new", data={"csrf_token": token, "title": " ", "locale": "en"})
    assert r.status_code == 422
    r = client.post(
        "/decks/new",
        data={"csrf_token": token, "title": "Kitchen", "locale": "en",
              "other_locales": ["es", "en"]},
    )  # fmt: skip
    assert r.status_code == 303
    cards_url = r.headers["Location"]
    assert re.fullmatch(r"/decks/user\d+-kitchen/cards", cards_url)
    slug = cards_url.split("/")[2]
    assert client.get(f"/decks/{slug}").status_code == 200  # empty, and shown as such
    assert "Kitchen" in client.get("/").get_data(as_text=True)  # studied at once
    page = client.get(cards_url).get_data(as_text=True)
    assert "Add a card" in page and 'name="tags"' in page
    form = {"csrf_token": csrf(client, cards_url), "question": "spoon", "answer": "cuchara",
            "explanation": "", "tags": "kitchen  tools"}  # fmt: skip
    assert client.post(cards_url, data=form).status_code == 303
    form["question"] = " "
    assert client.post(cards_url, data=form).status_code == 303  # refused, with a message
    page = client.get(cards_url).get_data(as_text=True)
    assert "The card was not added. The question and the answer must not be empty." in page
    assert page.count('class="question"') == 1
    link = CARD_LINK_RE.search(page)
    assert link, page
    card_page = client.get(link[1]).get_data(as_text=True)
    assert "spoon" in card_page and 'value="kitchen tools"' in card_page
    edit = {"csrf_token": csrf(client, link[1]), "locale": "es", "question": "cuchara",
            "answer": "spoon", "explanation": ""}  # fmt: skip
    assert client.post(link[1], data=edit).status_code == 303
    # A refused edit shows the form again as it was sent.
    r = client.post(link[1], data={**edit, "question": " ", "answer": "a long answer typed"})
    assert r.status_code == 400 and r.mimetype == "text/html"
    assert "The question and the answer must not be empty" in r.get_data(as_text=True)
    assert ">a long answer typed</textarea>" in r.get_data(as_text=True)
    study = client.get("/study").get_data(as_text=True)
    assert f'id="edit-card" class="link" href="{link[1]}?study=*"' in study
    # Opened while studying (`e`), the card's page goes back to studying once a change is
    # saved, to the deck studied alone if it was.
    opened = client.get(f"{link[1]}?study=*").get_data(as_text=True)
    assert '<a href="/study">Back to studying</a>' in opened
    assert '<input type="hidden" name="study" value="*">' in opened
    saved = client.post(link[1], data={**edit, "study": "*"})
    assert saved.status_code == 303 and saved.headers["Location"] == "/study"
    study = client.get(f"/study?deck={slug}").get_data(as_text=True)
    assert f'href="{link[1]}?study={slug}"' in study
    saved = client.post(link[1], data={**edit, "study": slug})
    assert saved.headers["Location"] == f"/study?deck={slug}"
    refused = client.post(link[1], data={**edit, "question": " ", "study": slug})
    assert f'<input type="hidden" name="study" value="{slug}">' in refused.get_data(as_text=True)
    # From custom study, back to custom study.
    token = csrf(client, "/study/custom")
    started = {"csrf_token": token, "mode": "preview", "deck": slug, "amount": "5"}
    assert client.post("/study/custom", data=started).status_code == 303
    custom = client.get("/study/custom").get_data(as_text=True)
    assert f'id="edit-card" class="link" href="{link[1]}?study=%2B"' in custom
    opened = client.get(f"{link[1]}?study=%2B").get_data(as_text=True)
    assert '<a href="/study/custom">Back to studying</a>' in opened
    saved = client.post(link[1], data={**edit, "study": "+"})
    assert saved.status_code == 303 and saved.headers["Location"] == "/study/custom"
    with transaction(engine) as s:
        deck_id = s.scalar(select(Deck.id).where(Deck.slug == slug))
        assert deck_id is not None
        assert _texts(s, deck_id, "c001") == {
            "en": ("spoon", "cuchara", ""), "es": ("cuchara", "spoon", ""),
        }  # fmt: skip
        assert s.scalar(select(Card.tags).where(Card.deck_id == deck_id)) == ["kitchen", "tools"]
    # Retiring is asked once more: its button is behind a disclosure.
    assert '<details class="retire">' in card_page
    retire = {"csrf_token": csrf(client, link[1])}
    assert client.post(f"{link[1]}/retire", data=retire).status_code == 303
    assert client.get(link[1]).status_code == 404
    with transaction(engine) as s:
        live = select(func.count()).where(Card.deck_id == deck_id, Card.retired_at.is_(None))
        assert s.scalar(live) == 0


def test_an_edit_opened_on_the_answer_side_comes_back_to_the_answer(
    client: FlaskClient,
) -> None:
    sign_up(client)
    token = csrf(client, "/decks/new")
    made = client.post("/decks/new", data={"csrf_token": token, "title": "Sea", "locale": "en"})
    cards_url = made.headers["Location"]
    form = {"csrf_token": csrf(client, cards_url), "question": "fish", "answer": "pez",
            "explanation": "", "tags": ""}  # fmt: skip
    assert client.post(cards_url, data=form).status_code == 303
    card_url = CARD_LINK_RE.search(client.get(cards_url).get_data(as_text=True))
    assert card_url
    front = client.get("/study").get_data(as_text=True)
    reveal = re.search(
        r'id="reveal" [^>]*href="/study\?card=(\d+)&amp;show=([0-9a-f-]{36})"', front
    )
    assert reveal, front
    card_id, review_id = reveal.groups()
    # The question side's link comes back to the question; the answer side's, to the answer.
    answer_side = f"{card_url[1]}?study=*&amp;card={card_id}&amp;show={review_id}"
    assert f'href="{card_url[1]}?study=*" data-answer-href="{answer_side}"' in front
    back = client.get(f"/study?card={card_id}&show={review_id}").get_data(as_text=True)
    assert f'id="edit-card" class="link" href="{answer_side}"' in back
    opened = client.get(answer_side.replace("&amp;", "&")).get_data(as_text=True)
    assert f'<input type="hidden" name="show" value="{review_id}">' in opened
    edit = {"csrf_token": csrf(client, card_url[1]), "locale": "en", "question": "fish",
            "answer": "el pez", "explanation": "", "study": "*", "show": review_id,
            "card": card_id}  # fmt: skip
    saved = client.post(card_url[1], data=edit)
    assert saved.headers["Location"] == f"/study?card={card_id}&show={review_id}"
    shown = client.get(saved.headers["Location"]).get_data(as_text=True)
    assert 'class="study revealed"' in shown and "el pez" in shown
    assert 'id="stale-reveal"' not in shown
    # Only a reveal's own shape travels: anything else goes back to the question.
    for bad in ({"show": "<b>"}, {"card": "x"}, {"show": review_id, "card": "1" * 30}):
        saved = client.post(card_url[1], data={**edit, **bad})
        assert saved.headers["Location"] == "/study"
    # Custom study's answer side is its own `show=1`.
    token = csrf(client, "/study/custom")
    slug = cards_url.split("/")[2]
    started = {"csrf_token": token, "mode": "preview", "deck": slug, "amount": "5"}
    assert client.post("/study/custom", data=started).status_code == 303
    custom = client.get("/study/custom?show=1").get_data(as_text=True)
    assert f'id="edit-card" class="link" href="{card_url[1]}?study=%2B&amp;show=1"' in custom
    saved = client.post(card_url[1], data={**edit, "study": "+", "show": "1", "card": ""})
    assert saved.headers["Location"] == "/study/custom?show=1"


def test_a_shipped_decks_cards_page_has_no_editing(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client)
    page = client.get("/decks/eks-model-training/cards").get_data(as_text=True)
    assert "Add a card" not in page and "Edit card" not in page
    assert client.get("/decks/eks-model-training/cards/tensor-parallelism").status_code == 403


def test_anki_imports_an_own_deck_made_on_the_web(engine: Engine, tmp_path: Path) -> None:
    now = wall_now()
    with transaction(engine) as s:
        ana = f.make_user(s, "ana@example.com")
        deck = own_decks.create_own_deck(s, ana, title="Kitchen", locales=["en", "es"], now=now)
        for question, answer in [("spoon", "cuchara"), ("fork", "tenedor")]:
            own_decks.add_card(s, ana, deck.slug, question=question, answer=answer,
                               explanation="", tags=["kitchen"], now=now)  # fmt: skip
        own_decks.edit_card(s, ana, deck.slug, "c001", locale="es", question="cuchara",
                            answer="spoon", explanation=None, tags=None, now=now)  # fmt: skip
        f.answer(s, ana, f.card_ids(s, deck.id)[0], "good", now=now)
        package = export_deck(
            s, deck.id, locales=["en"], user_id=ana, with_scheduling=True, now=now
        ).data
    col, log = anki_import(tmp_path / "c.anki2", package)
    try:
        assert len(log.new) == 2 and not log.duplicate
        notes = {dict(n.items())["Key"]: n for n in (col.get_note(i) for i in col.find_notes(""))}
        assert dict(notes["c001"].items())["Front"] == "spoon"
        assert "kitchen" in notes["c002"].tags
        studied = [col.get_card(c) for c in col.find_cards("Key:c001")]
        assert [c.type for c in studied] != [0]  # answered: no longer a new card
    finally:
        col.close()


def test_the_settings_page_links_to_study_options_and_leeches(client: FlaskClient) -> None:
    sign_up(client)
    page = client.get("/settings").get_data(as_text=True)
    assert 'href="/study-options"' in page and 'href="/leeches"' in page


def test_a_card_of_an_anki_note_is_edited_through_its_note_on_the_web_and_the_api(
    app: Flask, client: FlaskClient, engine: Engine
) -> None:
    """A card a device made from a note of its own note type (`anki_sync.adopted`) takes
    its text from the note. Without the note here, its page shows it without an editor and
    an edit through the form or the API is refused with the reason, the card unchanged; with
    it, an edit changes the note's fields the card shows."""
    sign_up(client)
    with transaction(engine) as s:
        ana = s.scalars(select(User.id).where(User.email == "ana@example.com")).one()
        deck = own_decks.create_own_deck(s, ana, title="Spanish::Week 1", locales=["en"], now=T0)
        deck.anki_deck_id = 1_700_000_000_000
        (key,) = own_decks.add_card(
            s, ana, deck.slug, question="hola", answer="hello", explanation="", tags=None, now=T0
        )
        card = s.scalars(select(Card).where(Card.deck_id == deck.id, Card.key == key)).one()
        card.anki_note_id, card.anki_card_id, card.anki_ord = (
            1_700_000_000_001,
            1_700_000_000_002,
            0,
        )
        slug, deck_id = deck.slug, deck.id
        token = f.make_token(s, ana)
    page = client.get(f"/decks/{slug}/cards/{key}").get_data(as_text=True)
    assert "edit the note in Anki" in page and "hola" in page and "hello" in page
    assert 'name="question"' not in page and 'name="file"' not in page
    form = {"csrf_token": csrf(client, f"/decks/{slug}/cards"), "question": "changed",
            "answer": "hello", "explanation": "", "locale": "en"}  # fmt: skip
    r = client.post(f"/decks/{slug}/cards/{key}", data=form)
    assert r.status_code == 409 and "edit the note in Anki" in r.get_data(as_text=True)
    assert "changed" not in r.get_data(as_text=True)  # read-only: the card's text, not the form's
    r = app.test_client().patch(
        f"/api/v1/decks/{slug}/cards/{key}",
        json={"front": "changed"},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert r.status_code == 409
    assert r.get_json()["type"].endswith("card-of-anki-note")
    with Session(engine) as s:
        assert _texts(s, deck_id, key) == {"en": ("hola", "hello", "")}

    # With its note and note type kept (a Basic card: its question and answer are two of the
    # note's fields), the page edits it, and the edit goes into the note for the devices.
    basic = {"id": 1_700_000_000_003, "name": "Basic", "type": 0, "mod": 1, "sortf": 0,
             "flds": [{"name": "Front", "ord": 0}, {"name": "Back", "ord": 1}],
             "tmpls": [{"name": "Card 1", "ord": 0, "qfmt": "{{Front}}",
                        "afmt": "{{FrontSide}}<hr id=answer>{{Back}}"}]}  # fmt: skip
    # Bold on the question (which the web shows as plain "hola"), and tags the web hides.
    note = [1_700_000_000_001, "g1", basic["id"], 1, 0, " leech vocab ", "<b>hola</b>\x1fhello",
            "hola", 0, 0, ""]  # fmt: skip
    with transaction(engine) as s:
        kept.keep(s, ana, snapshot.NOTETYPE, {basic["id"]: basic}, usn=0, now=T0)
        kept.keep(s, ana, snapshot.NOTE, {note[0]: note}, usn=0, now=T0)
    page = client.get(f"/decks/{slug}/cards/{key}").get_data(as_text=True)
    assert "saving changes the note" in page
    assert 'name="question"' in page and 'name="explanation"' not in page
    form = {"csrf_token": csrf(client, f"/decks/{slug}/cards"), "question": "hola",
            "answer": "hello <3\r\nhi", "locale": "en", "tags": "greeting"}  # fmt: skip
    assert client.post(f"/decks/{slug}/cards/{key}", data=form).status_code == 303
    with Session(engine) as s:
        assert _texts(s, deck_id, key) == {"en": ("hola", "hello <3\nhi", "")}
        row = kept.payloads(s, ana, snapshot.NOTE, [note[0]])[note[0]]
        # The question, sent unchanged, keeps its bold; the note keeps its hidden tag.
        assert row[6] == "<b>hola</b>\x1fhello &lt;3<br>hi" and row[5] == " greeting leech "
        assert row[3] > 1  # newer: devices take it
    # Changing the bold question here would flatten it on every device: refused, and the
    # form comes back as it was sent, nothing typed lost.
    form["question"], form["answer"] = "hola!", "hello, typed again"
    r = client.post(f"/decks/{slug}/cards/{key}", data=form)
    assert r.status_code == 409 and r.mimetype == "text/html"
    page = r.get_data(as_text=True)
    assert "formatting or pictures the web does not keep" in page
    assert ">hola!</textarea>" in page and ">hello, typed again</textarea>" in page
    with Session(engine) as s:
        assert kept.payloads(s, ana, snapshot.NOTE, [note[0]])[note[0]] == row

    # A card added through the API to the deck is a Basic note like the deck's others,
    # with the deck's new-card id, its text as the note's fields and no tags of ours.
    r = app.test_client().post(
        f"/api/v1/decks/{slug}/cards",
        json={"front": "adiós", "back": "bye & see you", "tags": ["farewell"]},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert r.status_code == 201, r.get_json()
    with Session(engine) as s:
        added = s.scalars(
            select(Card).where(Card.deck_id == deck_id, Card.key == r.get_json()["key"])
        ).one()
        assert added.anki_ord == 0 and added.anki_note_id is not None
        made = kept.payloads(s, ana, snapshot.NOTE, [added.anki_note_id])[added.anki_note_id]
        assert made[2] == basic["id"] and made[5] == " farewell "
        assert made[6] == "adiós\x1fbye &amp; see you"


def test_lists_name_a_cards_media_and_say_when_a_language_has_no_text(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client)
    token = csrf(client, "/decks/new")
    made = client.post("/decks/new", data={"csrf_token": token, "title": "Cells", "locale": "en",
                                           "other_locales": ["es"]})  # fmt: skip
    cards_url = made.headers["Location"]
    slug = cards_url.split("/")[2]
    form = {"csrf_token": csrf(client, cards_url), "question": "What is this? [image:cell.png]",
            "answer": "A cell [sound:cell.mp3]"}  # fmt: skip
    assert client.post(cards_url, data=form).status_code == 303
    # The browser's line names the image by its file, not by its token.
    browse = client.get(f"/browse?deck={slug}").get_data(as_text=True)
    assert "What is this? \N{FRAME WITH PICTURE} cell.png</a>" in browse
    assert "[image:" not in browse
    # Studied in Spanish, which the card has no text in: its list says so, and names the media
    # of the text it shows instead.
    subscribe(client, "es", slug)
    page = client.get(cards_url).get_data(as_text=True)
    assert "No text in Spanish yet: studied in it, this card shows in its other language." in page
    assert "What is this? \N{FRAME WITH PICTURE} cell.png — A cell \N{SPEAKER} cell.mp3" in page
