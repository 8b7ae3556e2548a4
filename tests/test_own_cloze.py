"""A Cloze text typed into one's own deck ("{{c1::Paris}} is in {{c2::France}}") makes a card
for each deletion number, as an Anki Cloze note does, on the web and through the API, and
goes to Anki as one Cloze note (the real `anki` package)."""

from __future__ import annotations

from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from flashcards.anki import export_deck, import_package
from flashcards.decks import own_decks
from flashcards.decks.cloze import MAX_CLOZE_CARDS
from flashcards.errors import TooManyDeletions
from flashcards.srs import card_moves
from flashcards.storage.engine import transaction
from flashcards.storage.models import Card, CardText, Deck, ReviewLog

from . import factories as f
from .conftest import T0
from .test_anki_export import anki_import
from .test_anki_import import anki_export
from .web_helpers import csrf, sign_up

PARIS = "{{c1::Paris}} is the capital of {{c2::France::country}}."


def cards_of(engine: Engine, deck_id: int) -> list[tuple[str, str | None, str, str, str]]:
    with transaction(engine) as s:
        rows = s.execute(
            select(Card.key, Card.note_key, CardText.question, CardText.answer,
                   CardText.explanation)
            .join(CardText, CardText.card_id == Card.id)
            .where(Card.deck_id == deck_id, Card.retired_at.is_(None))
            .order_by(Card.position)
        )  # fmt: skip
        return [tuple(r) for r in rows]


def signed_up_with_a_deck(client: FlaskClient) -> str:
    """A new person's own deck, made on the web; its cards page."""
    sign_up(client)
    token = csrf(client, "/decks/new")
    made = client.post("/decks/new", data={"csrf_token": token, "title": "Capitals",
                                           "locale": "en"})  # fmt: skip
    return str(made.headers["Location"])


def with_paris(client: FlaskClient, engine: Engine, **fields: str) -> tuple[str, int]:
    """A new person's own deck with the PARIS Cloze text added on the web; its slug and id."""
    cards_url = signed_up_with_a_deck(client)
    form = {"csrf_token": csrf(client, cards_url), "question": PARIS, **fields}
    assert client.post(cards_url, data=form).status_code == 303
    with transaction(engine) as s:
        deck_id = s.scalar(select(Card.deck_id).where(Card.key == "c001-c1"))
    assert deck_id is not None
    return cards_url.split("/")[2], deck_id


def test_a_cloze_text_makes_a_sibling_card_for_each_number(engine: Engine) -> None:
    with transaction(engine) as s:
        ana = f.make_user(s)
        deck = own_decks.create_own_deck(s, ana, title="Capitals", locales=["en"], now=T0)
        keys = own_decks.add_card(
            s, ana, deck.slug, question=PARIS, answer="In Europe.", explanation="Since 987.",
            tags=["geo"], now=T0,
        )  # fmt: skip
        # A second Cloze text, and a plain card: keys of their own, never a sibling's.
        more = own_decks.add_card(s, ana, deck.slug, question="{{c1::Rome}} is in Italy.",
                                  answer="", explanation="", tags=None, now=T0)  # fmt: skip
        plain = own_decks.add_card(s, ana, deck.slug, question="Madrid?", answer="Spain",
                                   explanation="", tags=None, now=T0)  # fmt: skip
    whole, extra = "Paris is the capital of France.", "In Europe.\n\nSince 987."
    assert (keys, more, plain) == (["c001-c1", "c001-c2"], ["c003-c1"], ["c004"])
    found = cards_of(engine, deck.id)
    assert [row[:1] + row[2:] for row in found] == [
        ("c001-c1", "[...] is the capital of France.", whole, extra),
        ("c001-c2", "Paris is the capital of [country].", whole, extra),
        ("c003-c1", "[...] is in Italy.", "Rome is in Italy.", ""),
        ("c004", "Madrid?", "Spain", ""),
    ]  # fmt: skip
    # Each text's cards share a note key of their own, no card's key: a card moved to
    # another deck, where another text's cards may have keys like theirs, keeps it apart.
    paris, paris_too, rome, madrid = (row[1] for row in found)
    assert paris == paris_too and paris is not None and paris.startswith("c001-")
    assert rome is not None and rome != paris and madrid is None
    assert {paris, rome}.isdisjoint(row[0] for row in found)


def test_too_many_numbers_or_a_plain_card_without_answer_are_refused(engine: Engine) -> None:
    with transaction(engine) as s:
        ana = f.make_user(s)
        deck = own_decks.create_own_deck(s, ana, title="Capitals", locales=["en"], now=T0)
    many = " ".join(f"{{{{c{n}::w{n}}}}}" for n in range(1, MAX_CLOZE_CARDS + 2))
    with pytest.raises(TooManyDeletions), transaction(engine) as s:
        own_decks.add_card(s, ana, deck.slug, question=many, answer="", explanation="",
                           tags=None, now=T0)  # fmt: skip
    assert cards_of(engine, deck.id) == []


def test_the_siblings_go_to_anki_as_one_cloze_note(engine: Engine, tmp_path: Path) -> None:
    with transaction(engine) as s:
        ana = f.make_user(s)
        deck = own_decks.create_own_deck(s, ana, title="Capitals", locales=["en"], now=T0)
        own_decks.add_card(s, ana, deck.slug, question=PARIS, answer="", explanation="",
                           tags=None, now=T0)  # fmt: skip
        package = export_deck(s, deck.id, locales=["en"], user_id=ana, now=T0).data
    col, _log = anki_import(tmp_path / "capitals.anki2", package)
    try:
        (nid,) = col.find_notes("")
        note = col.get_note(nid)
        assert note.note_type()["type"] == 1  # Cloze
        assert note.fields[0] == PARIS and len(note.card_ids()) == 2
    finally:
        col.close()


def test_a_cloze_text_comes_back_from_anki_as_the_same_cards(
    engine: Engine, tmp_path: Path
) -> None:
    """Exported, studied and exported again in Anki, imported back: the text's cards are
    updated, not added again (their keys are not those the package makes of its note's)."""
    with transaction(engine) as s:
        ana = f.make_user(s)
        deck = own_decks.create_own_deck(s, ana, title="Capitals", locales=["en"], now=T0)
        own_decks.add_card(s, ana, deck.slug, question=PARIS, answer="", explanation="",
                           tags=None, now=T0)  # fmt: skip
        f.answer(s, ana, s.scalar(select(Card.id).where(Card.key == "c001-c1")), 3, now=T0)
        package = export_deck(
            s, deck.id, locales=["en"], user_id=ana, with_scheduling=True, now=T0
        ).data
    before = cards_of(engine, deck.id)
    col, _log = anki_import(tmp_path / "capitals.anki2", package)
    try:
        again = anki_export(col, tmp_path / "again.apkg", legacy=True)
    finally:
        col.close()
    for sent in (package, again):
        with transaction(engine) as s:
            report = import_package(s, sent, owner_user_id=ana, with_scheduling=True,
                                    now=T0, update_existing=True)  # fmt: skip
        assert report.updated and report.added == 0 and report.deck_id == deck.id
        assert cards_of(engine, deck.id) == before
    with transaction(engine) as s:
        logs = s.scalar(select(func.count()).select_from(ReviewLog).where(ReviewLog.user_id == ana))
    assert logs == 1


def test_the_web_form_and_the_api_add_cloze_cards(
    app: Flask, client: FlaskClient, engine: Engine
) -> None:
    cards_url = signed_up_with_a_deck(client)
    page = client.get(cards_url).get_data(as_text=True)
    assert "makes a card for each number" in page
    form = {"csrf_token": csrf(client, cards_url), "question": PARIS, "answer": ""}
    page = client.post(cards_url, data=form, follow_redirects=True).get_data(as_text=True)
    assert "2 cards added from the Cloze text, one for each deletion number." in page
    form["question"] = "A plain card needs its answer"
    page = client.post(cards_url, data=form, follow_redirects=True).get_data(as_text=True)
    assert "The question and the answer must not be empty." in page
    with transaction(engine) as s:
        api_user = f.make_user(s, "ben@example.com")
        bearer = {"Authorization": f"Bearer {f.make_token(s, api_user)}"}
        slug = own_decks.create_own_deck(s, api_user, title="Rivers", locales=["en"], now=T0).slug
    api = app.test_client()
    r = api.post(f"/api/v1/decks/{slug}/cards", headers=bearer,
                 json={"front": "The {{c1::Nile}} flows north."})  # fmt: skip
    assert r.status_code == 201, r.get_json()
    body = r.get_json()
    assert body["keys"] == ["c001-c1"] and body["key"] == "c001-c1"
    assert body["texts"]["en"] == {
        "front": "The [...] flows north.", "back": "The Nile flows north.", "explanation": ""
    }  # fmt: skip
    many = " ".join(f"{{{{c{n}::w{n}}}}}" for n in range(1, MAX_CLOZE_CARDS + 2))
    r = api.post(f"/api/v1/decks/{slug}/cards", headers=bearer, json={"front": many})
    assert r.status_code == 422 and r.get_json()["type"].endswith("too-many-deletions")
    r = api.post(f"/api/v1/decks/{slug}/cards", headers=bearer, json={"front": "no back"})
    assert r.status_code == 422


def test_cloze_texts_moved_into_one_deck_stay_two_notes(engine: Engine, tmp_path: Path) -> None:
    with transaction(engine) as s:
        ana = f.make_user(s)
        first = own_decks.create_own_deck(s, ana, title="Europe", locales=["en"], now=T0)
        second = own_decks.create_own_deck(s, ana, title="Asia", locales=["en"], now=T0)
        moved = own_decks.add_card(s, ana, first.slug, question=PARIS, answer="",
                                   explanation="", tags=None, now=T0)  # fmt: skip
        own_decks.add_card(s, ana, second.slug, question="{{c1::Seoul}} is in {{c2::Korea}}.",
                           answer="", explanation="", tags=None, now=T0)  # fmt: skip
        for key in moved:
            card = s.scalars(select(Card).where(Card.deck_id == first.id, Card.key == key)).one()
            card_moves.move_card(s, card.id, second, now=T0)
        package = export_deck(s, second.id, locales=["en"], user_id=ana, now=T0).data
    col, _log = anki_import(tmp_path / "asia.anki2", package)
    try:
        texts = sorted(col.get_note(n).fields[0] for n in col.find_notes(""))
    finally:
        col.close()
    assert texts == [PARIS, "{{c1::Seoul}} is in {{c2::Korea}}."]


def test_a_cloze_text_is_edited_as_a_whole_and_progress_kept(
    client: FlaskClient, engine: Engine
) -> None:
    slug, deck_id = with_paris(client, engine, answer="Europe")
    with transaction(engine) as s:
        first = s.scalar(select(Card.id).where(Card.key == "c001-c1"))
    page_url = f"/decks/{slug}/cards/c001-c1"
    page = client.get(page_url).get_data(as_text=True)
    assert "{{c1::Paris}} is the capital of {{c2::France::country}}.</textarea>" in page
    assert ">Europe</textarea>" in page
    answered = client.post(
        f"/decks/{slug}/cards/c001-c1/cloze",
        data={"csrf_token": csrf(client, page_url), "extra": "In Europe.",
              "cloze": "{{c1::Paris}} is the capital and largest city of {{c3::France}}."},
    )  # fmt: skip
    assert answered.status_code == 303 and answered.headers["Location"].endswith(page_url)
    saved = client.get(answered.headers["Location"]).get_data(as_text=True)
    assert (
        "Cloze text saved: 2 cards. 1 of them is new, for a number added. Your progress on 1 "
        "of them is kept. 1 card was retired with the number taken out: it no longer comes up, "
        "and its answers stay in the history."
    ) in saved.replace("&#39;", "'")
    whole = "Paris is the capital and largest city of France."
    found = cards_of(engine, deck_id)
    assert [(r[0], r[2], r[3], r[4]) for r in found] == [
        ("c001-c1", "[...] is the capital and largest city of France.", whole, "In Europe."),
        ("c001-c3", "Paris is the capital and largest city of [...].", whole, "In Europe."),
    ]  # c2 retired, c3 added, one text
    assert found[0][1] == found[1][1]
    with transaction(engine) as s:
        assert (
            s.scalar(select(Card.id).where(Card.deck_id == deck_id, Card.key == "c001-c1")) == first
        )
    # No deletion left: refused, the text as typed kept on the page, nothing written.
    refused = client.post(
        f"/decks/{slug}/cards/c001-c1/cloze",
        data={"csrf_token": csrf(client, page_url), "cloze": "Paris, no blanks", "extra": ""},
    )
    assert refused.status_code == 400
    assert "A Cloze text needs at least one deletion" in refused.get_data(as_text=True)
    assert ">Paris, no blanks</textarea>" in refused.get_data(as_text=True)
    assert cards_of(engine, deck_id) == found
    # A number taken out alone: the card left keeps its progress, the other is retired.
    answered = client.post(
        f"/decks/{slug}/cards/c001-c1/cloze",
        data={"csrf_token": csrf(client, page_url), "extra": "",
              "cloze": "{{c1::Paris}} is the capital and largest city of France."},
    )  # fmt: skip
    assert (
        "Cloze text saved: 1 card. Your progress on it is kept. 1 card was retired with the "
        "number taken out"
    ) in client.get(answered.headers["Location"]).get_data(as_text=True)


def test_the_api_edits_a_cloze_text_as_a_whole(app: Flask, engine: Engine) -> None:
    with transaction(engine) as s:
        ben = f.make_user(s, "ben@example.com")
        bearer = {"Authorization": f"Bearer {f.make_token(s, ben)}"}
        slug = own_decks.create_own_deck(s, ben, title="Rivers", locales=["en"], now=T0).slug
        own_decks.add_card(s, ben, slug, question="Plain?", answer="Yes", explanation="",
                           tags=None, now=T0)  # fmt: skip
    api = app.test_client()
    cards = f"/api/v1/decks/{slug}/cards"
    added = api.post(cards, headers=bearer, json={"front": "The {{c1::Nile}} flows north."})
    assert added.get_json()["keys"] == ["c002-c1"]
    body = {"text": "The {{c1::Nile}} flows {{c2::north}}.\r\n", "extra": " Egypt "}
    r = api.put(f"{cards}/c002-c1/cloze", headers=bearer, json=body)
    assert r.status_code == 200, r.get_json()
    assert r.get_json() == {
        "text": "The {{c1::Nile}} flows {{c2::north}}.", "extra": "Egypt",
        "keys": ["c002-c1", "c002-c2"], "added": ["c002-c2"], "retired": [],
    }  # fmt: skip
    assert api.get(f"{cards}/c002-c2/cloze", headers=bearer).get_json() == {
        **r.get_json(),
        "added": [],
        "retired": [],
    }
    plain = api.get(f"{cards}/c001/cloze", headers=bearer)
    assert plain.status_code == 404 and plain.get_json()["type"].endswith("/not-cloze-card")
    # A plain card, another person's deck, a text without a deletion: refused, nothing written.
    r = api.put(f"{cards}/c001/cloze", headers=bearer, json={"text": "{{c1::x}}"})
    assert r.status_code == 404 and r.get_json()["type"].endswith("/not-cloze-card")
    with transaction(engine) as s:
        other = {"Authorization": f"Bearer {f.make_token(s, f.make_user(s, 'eve@example.com'))}"}
    assert (
        api.put(f"{cards}/c002-c1/cloze", headers=other, json={"text": "{{c1::x}}"}).status_code
        == 404
    )
    r = api.put(f"{cards}/c002-c1/cloze", headers=bearer, json={"text": "no blanks"})
    assert r.status_code == 422 and r.get_json()["type"].endswith("no-cloze-deletion")
    with transaction(engine) as s:
        deck_id = s.scalar(select(Card.deck_id).where(Card.key == "c002-c1"))
    assert [row[0] for row in cards_of(engine, deck_id)] == ["c001", "c002-c1", "c002-c2"]


def tags_of(engine: Engine, deck_id: int) -> dict[str, list[str]]:
    with transaction(engine) as s:
        rows = s.execute(
            select(Card.key, Card.tags).where(Card.deck_id == deck_id, Card.retired_at.is_(None))
        )
        return {key: list(tags or ()) for key, tags in rows}


def test_a_cloze_texts_tags_are_its_cards_on_the_web_and_the_api(
    app: Flask, client: FlaskClient, engine: Engine
) -> None:
    # As an Anki note's tags: one field for the text, every card takes them, a new number too.
    slug, deck_id = with_paris(client, engine, tags="geo")
    page_url = f"/decks/{slug}/cards/c001-c2"
    page = client.get(page_url).get_data(as_text=True)
    assert page.count('name="tags"') == 1 and 'name="tags" value="geo"' in page
    saved = client.post(
        f"/decks/{slug}/cards/c001-c2/cloze",
        data={"csrf_token": csrf(client, page_url), "extra": "", "tags": "geo europe geo",
              "cloze": "{{c1::Paris}} is in {{c2::France}}, on the {{c3::Seine}}."},
    )  # fmt: skip
    assert saved.status_code == 303
    assert tags_of(engine, deck_id) == {k: ["geo", "europe"] for k in ("c001-c1", "c001-c2",
                                                                       "c001-c3")}  # fmt: skip
    # Refused: the tags as typed come back in the form, and nothing is written.
    refused = client.post(
        f"/decks/{slug}/cards/c001-c2/cloze",
        data={"csrf_token": csrf(client, page_url), "cloze": "no blanks", "tags": "rivers"},
    )
    assert refused.status_code == 400
    assert 'name="tags" value="rivers"' in refused.get_data(as_text=True)
    assert set(map(tuple, tags_of(engine, deck_id).values())) == {("geo", "europe")}

    # The API: tags left out are kept (a new number's card takes its siblings'), given are set.
    with transaction(engine) as s:
        bearer = {"Authorization": f"Bearer {f.make_token(s, own_deck_owner(s, deck_id))}"}
    api = app.test_client()
    cloze = f"/api/v1/decks/{slug}/cards/c001-c1/cloze"
    # One card tagged apart (the API edits a card's tags alone): an edit without tags keeps it.
    one = api.patch(f"/api/v1/decks/{slug}/cards/c001-c3", headers=bearer, json={"tags": ["river"]})
    assert one.status_code == 200, one.get_json()
    text = "{{c1::Paris}} is in {{c2::France}}, on the {{c3::Seine}}, near {{c4::Versailles}}."
    assert api.put(cloze, headers=bearer, json={"text": text}).status_code == 200
    assert tags_of(engine, deck_id) == {
        "c001-c1": ["geo", "europe"], "c001-c2": ["geo", "europe"], "c001-c3": ["river"],
        "c001-c4": ["geo", "europe"],
    }  # fmt: skip
    r = api.put(cloze, headers=bearer, json={"text": text, "tags": ["capitals"]})
    assert r.status_code == 200
    assert set(map(tuple, tags_of(engine, deck_id).values())) == {("capitals",)}
    bad = api.put(cloze, headers=bearer, json={"text": text, "tags": ["two words"]})
    assert bad.status_code == 422
    assert set(map(tuple, tags_of(engine, deck_id).values())) == {("capitals",)}


def own_deck_owner(session: Session, deck_id: int) -> int:
    owner = session.scalar(select(Deck.owner_user_id).where(Deck.id == deck_id))
    assert owner is not None
    return owner
