"""A team deck's page shows its cards a page at a time, searchable in any of its languages,
with each card's forms on the card's own page; a 5,000-card deck's page stays light."""

from __future__ import annotations

import re
import time

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select
from sqlalchemy.engine import Engine

from flashcards.decks.card_pages import PAGE_SIZE
from flashcards.storage.models import Card, Deck

from .web_helpers import csrf, sign_up

CARD_RE = re.compile(r'<li value="(\d+)" id="card-([a-z0-9_-]+)">')


def _post(client: FlaskClient, path: str, data: dict[str, str], page: str):  # type: ignore[no-untyped-def]
    return client.post(path, data={"csrf_token": csrf(client, page), **data})


def _team(app: Flask) -> tuple[FlaskClient, FlaskClient, FlaskClient, int]:
    """A lead, a member of the lead's team and an outsider, and the team's id."""
    lead, member, outsider = app.test_client(), app.test_client(), app.test_client()
    sign_up(lead, "lead@example.com")
    sign_up(member, "mia@example.com", language="es")
    sign_up(outsider, "otto@example.com", language="ko")
    response = _post(lead, "/teams", {"name": "Platform"}, "/teams")
    team = int(response.headers["Location"].rsplit("/", 1)[-1])
    link = _post(lead, f"/teams/{team}/invitations", {"days": "7"}, f"/teams/{team}")
    found = re.search(r"/join#([A-Za-z0-9_-]+)", link.get_data(as_text=True))
    assert found
    _post(member, "/join", {"invitation": f"http://localhost/join#{found[1]}"}, "/join")
    _post(member, "/join/confirm", {"token": found[1]}, "/join")
    return lead, member, outsider, team


def _deck(lead: FlaskClient, team: int, cards: int) -> str:
    """A deck of `cards` cards in English and Spanish; the path of its page."""
    rows = "front,back,key,locale\n" + "".join(
        f"Question {i} in English,Answer {i},c{i},en\n" for i in range(1, cards + 1)
    )
    rows += "".join(f"Pregunta {i} en español,Respuesta {i},c{i},es\n" for i in (7, 77))
    decks = f"/teams/{team}/decks"
    form = {"format": "csv", "title": "Glossary", "locale": "en", "content": rows}
    response = _post(lead, decks, form, decks)
    assert response.status_code == 303, response.get_data(as_text=True)
    return str(response.headers["Location"])


def _cards(page: str) -> list[tuple[int, str]]:
    return [(int(n), key) for n, key in CARD_RE.findall(page)]


def test_the_deck_page_is_paged_and_links_keep_the_search(app: Flask, engine: Engine) -> None:
    lead, member, outsider, team = _team(app)
    deck = _deck(lead, team, 120)
    first = lead.get(deck).get_data(as_text=True)
    assert _cards(first) == [(n, f"c{n}") for n in range(1, PAGE_SIZE + 1)]
    assert "Page 1 of 3" in first and "Cards 1–50 of 120." in first
    assert f'href="{deck}?page=2"' in first and 'rel="prev"' not in first
    last = lead.get(f"{deck}?page=3").get_data(as_text=True)
    assert _cards(last) == [(n, f"c{n}") for n in range(101, 121)]
    assert 'rel="next"' not in last
    # A page past the end shows the last; nonsense shows the first.
    assert _cards(lead.get(f"{deck}?page=99").get_data(as_text=True)) == _cards(last)
    assert _cards(lead.get(f"{deck}?page=x").get_data(as_text=True))[0] == (1, "c1")

    # The member reads Spanish; the search finds Spanish text on an English deck, and a
    # card keeps its number in the deck.
    found = member.get(f"{deck}?q=ESPAÑOL").get_data(as_text=True)
    assert _cards(found) == [(7, "c7"), (77, "c77")]
    assert "2 tarjetas coinciden con «ESPAÑOL»." in found
    assert 'value="ESPAÑOL"' in found
    many = lead.get(f"{deck}?q=Question+1").get_data(as_text=True)  # 1, 10-19, 100-120
    assert len(_cards(many)) == 32 and "Page 1 of" not in many
    paged = lead.get(f"{deck}?q=Answer").get_data(as_text=True)
    assert f'href="{deck}?page=2&amp;q=Answer"' in paged
    # A card's link, and the way back from its page, keep the search and the page.
    second = lead.get(f"{deck}?q=Answer&page=2").get_data(as_text=True)
    assert f'href="{deck}/cards/c51?q=Answer&amp;page=2"' in second
    card = lead.get(f"{deck}/cards/c51?q=Answer&page=2").get_data(as_text=True)
    assert f'href="{deck}?q=Answer&amp;page=2"' in card
    # "%" and "_" are characters, not wildcards.
    assert _cards(lead.get(f"{deck}?q=%25").get_data(as_text=True)) == []
    assert "No card matches this search." in lead.get(f"{deck}?q=_").get_data(as_text=True)
    assert outsider.get(f"{deck}?q=Question").status_code == 404


def test_a_card_is_edited_and_retired_on_its_own_page(app: Flask, engine: Engine) -> None:
    lead, member, outsider, team = _team(app)
    deck = _deck(lead, team, 80)
    listing = lead.get(deck).get_data(as_text=True)
    assert "<textarea" not in listing.split("Add a card")[0]  # no form per card
    card = f"{deck}/cards/c77"
    page = lead.get(card).get_data(as_text=True)
    assert page.count('class="stack card-edit"') == 2  # English and Spanish
    assert "Pregunta 77 en español" in page and "Question 77 in English" in page
    member_page = member.get(card).get_data(as_text=True)
    assert "<textarea" not in member_page and "Pregunta 77 en español" in member_page
    assert outsider.get(card).status_code == 404
    assert lead.get(f"{deck}/cards/nope").status_code == 404

    form = {"locale": "es", "question": "¿Pregunta 77?", "answer": "Sí", "page": "2", "q": "77"}
    response = _post(lead, card, form, card)
    assert response.status_code == 303
    assert response.headers["Location"] == f"{card}?q=77&page=2"
    assert "¿Pregunta 77?" in member.get(f"{deck}?q=77").get_data(as_text=True)
    assert _post(member, card, form, card).status_code == 403
    # Refused: the page comes back with the text as typed, and its way back to the listing.
    refused = _post(
        lead, card, {**form, "answer": " ", "question": "¿Pregunta 77, otra vez?"}, card
    )
    assert refused.status_code == 400 and refused.mimetype == "text/html"
    assert ">¿Pregunta 77, otra vez?</textarea>" in refused.get_data(as_text=True)
    assert f'href="{deck}?q=77&amp;page=2"' in refused.get_data(as_text=True)

    retire = _post(lead, f"{card}/retire", {"q": "Question", "page": "2"}, card)
    assert retire.headers["Location"] == f"{deck}?q=Question&page=2"
    assert lead.get(card).status_code == 404
    assert "Cards 1–50 of 79." in lead.get(deck).get_data(as_text=True)


def test_a_5000_card_team_deck_page_is_light(app: Flask, engine: Engine) -> None:
    lead, member, _outsider, team = _team(app)
    deck = _deck(lead, team, 5000)
    for client in (lead, member):
        client.get(deck)  # warm
        started = time.perf_counter()
        response = client.get(deck)
        elapsed = time.perf_counter() - started
        page = response.get_data()
        assert response.status_code == 200
        assert len(page) < 200_000, len(page)
        assert page.count(b"<form") <= 6  # the header's, the search; a lead's add and upload
        assert len(_cards(page.decode())) == PAGE_SIZE
        assert elapsed < 3, elapsed  # a loose bound for a shared machine; the bench measures
    listing = lead.get(f"/teams/{team}/decks").get_data(as_text=True)
    assert "5,000 cards" in listing


def test_a_decks_cards_are_listed_and_searched(app: Flask, loaded_engine: Engine) -> None:
    reader = app.test_client()
    sign_up(reader, "reader@example.com")
    deck = reader.get("/decks/eks-model-training").get_data(as_text=True)
    assert 'href="/decks/eks-model-training/cards"' in deck
    page = reader.get("/decks/eks-model-training/cards").get_data(as_text=True)
    assert [n for n, _key in _cards(page)] == list(range(1, 16))
    assert '<form method="post"' not in page.split("</header>")[-1]  # read-only
    # Korean text finds its card on an English page, numbered as in the deck.
    found = reader.get("/decks/eks-model-training/cards?q=텐서").get_data(as_text=True)
    assert 0 < len(_cards(found)) < 15
    assert "텐서" in found
    assert reader.get("/decks/no-such-deck/cards").status_code == 404


def test_a_lead_adds_a_cloze_text_as_a_card_for_each_number(app: Flask, engine: Engine) -> None:
    lead, member, _outsider, team = _team(app)
    deck = _deck(lead, team, 80)
    assert "makes a card for each number" in lead.get(deck).get_data(as_text=True)
    form = {"question": "{{c1::Kubernetes}} schedules {{c2::pods}}.", "answer": ""}
    added = _post(lead, f"{deck}/cards", form, deck)
    assert added.status_code == 303
    page = lead.get(added.headers["Location"]).get_data(as_text=True)
    assert "2 cards added from the Cloze text, one for each deletion number." in page
    listing = member.get(f"{deck}?q=schedules").get_data(as_text=True)
    assert [key for _n, key in _cards(listing)] == ["c081-c1", "c081-c2"]
    assert "[...] schedules pods." in listing and "Kubernetes schedules [...]." in listing
    # A lead edits the text as a whole; a member sees the cards, no form.
    card = f"{deck}/cards/c081-c1"
    assert "{{c1::Kubernetes}} schedules {{c2::pods}}.</textarea>" in lead.get(card).get_data(
        as_text=True
    )
    assert "<textarea" not in member.get(card).get_data(as_text=True)
    text = {"cloze": "{{c1::Kubernetes}} schedules {{c2::pods}} on {{c3::nodes}}.", "extra": ""}
    assert _post(member, f"{card}/cloze", text, card).status_code == 403
    saved = _post(lead, f"{card}/cloze", text, card)
    assert saved.status_code == 303 and saved.headers["Location"].endswith(card)
    assert (
        "Cloze text saved: 3 cards. 1 of them is new, for a number added. Everyone keeps their "
        "progress on 2 of them."
    ) in lead.get(saved.headers["Location"]).get_data(as_text=True)
    listing = member.get(f"{deck}?q=nodes").get_data(as_text=True)
    assert [key for _n, key in _cards(listing)] == ["c081-c1", "c081-c2", "c081-c3"]


def _tags(engine: Engine, key: str) -> list[str]:
    """The tags of the card `key` of the deck `_deck` made (keys are a deck's own)."""
    with engine.connect() as c:
        found = c.scalar(
            select(Card.tags).join(Deck).where(Deck.owner_team_id.is_not(None), Card.key == key)
        )
        return list(found or [])


def test_a_lead_tags_the_teams_cards_as_the_person_tags_their_own(
    app: Flask, engine: Engine
) -> None:
    """Tags are a card's, set with its first language: a lead adds a card with tags, changes
    them on the card's page (a translation's form leaves them be), and a bad tag changes
    nothing; a member sees no form."""
    lead, member, _outsider, team = _team(app)
    deck = _deck(lead, team, 80)
    page = lead.get(deck).get_data(as_text=True)
    assert 'id="new-tags"' in page
    assert 'id="new-tags"' not in member.get(deck).get_data(as_text=True)
    form = {"question": "What is a pod?", "answer": "A group of containers.", "tags": "k8s week-1"}
    assert _post(lead, f"{deck}/cards", form, deck).status_code == 303
    assert _tags(engine, "c081") == ["k8s", "week-1"]

    card = f"{deck}/cards/c7"
    page = lead.get(card).get_data(as_text=True)
    assert page.count('name="tags"') == 1  # on the English form, not on the Spanish one
    english = {"locale": "en", "question": "Question 7?", "answer": "Answer 7", "tags": "week-2"}
    assert _post(lead, card, english, card).status_code == 303
    assert _tags(engine, "c7") == ["week-2"]
    spanish = {"locale": "es", "question": "¿Pregunta 7?", "answer": "Respuesta 7"}
    assert _post(lead, card, spanish, card).status_code == 303
    assert _tags(engine, "c7") == ["week-2"]
    assert 'value="week-2"' in lead.get(card).get_data(as_text=True)

    refused = _post(lead, card, {**english, "question": "Changed?", "tags": "x" * 200}, card)
    assert refused.status_code == 400
    assert "Tags are single words separated by spaces" in refused.get_data(as_text=True)
    assert _tags(engine, "c7") == ["week-2"]
    assert "Changed?" not in lead.get(f"{deck}?q=Changed").get_data(as_text=True)
    assert _post(member, card, english, card).status_code == 403

    # A Cloze text's tags are its cards', as its text is.
    cloze = {"question": "{{c1::Pods}} run on {{c2::nodes}}.", "answer": "", "tags": "k8s"}
    assert _post(lead, f"{deck}/cards", cloze, deck).status_code == 303
    first = f"{deck}/cards/c082-c1"
    assert 'value="k8s"' in lead.get(first).get_data(as_text=True)
    text = {"cloze": "{{c1::Pods}} run on {{c2::nodes}}.", "extra": "", "tags": "k8s week-3"}
    assert _post(lead, f"{first}/cloze", text, first).status_code == 303
    assert _tags(engine, "c082-c1") == _tags(engine, "c082-c2") == ["k8s", "week-3"]
    # A number added takes the text's tags, as a new card of an Anki note does.
    text = {**text, "cloze": "{{c1::Pods}} run on {{c2::nodes}} of {{c3::clusters}}."}
    assert _post(lead, f"{first}/cloze", text, first).status_code == 303
    assert _tags(engine, "c082-c3") == ["k8s", "week-3"]


CLOZE_CSV = (
    "front,back,key,locale\n"
    '"{{c1::Kubernetes}} schedules {{c2::pods::what}}.",On nodes.,k8s,en\n'
    "What runs a pod?,A node.,node,en\n"
    '"{{c1::Kubernetes}} planifica {{c2::pods::qué}}.",,k8s,es\n'
)


def _note_keys(engine: Engine, slug: str) -> dict[str, str | None]:
    with engine.connect() as c:
        rows = c.execute(
            select(Card.key, Card.note_key)
            .join(Deck, Deck.id == Card.deck_id)
            .where(Deck.slug == slug, Card.retired_at.is_(None))
        )
        return {key: note_key for key, note_key in rows}


def test_a_cloze_csv_row_makes_a_card_for_each_number(app: Flask, engine: Engine) -> None:
    lead, member, _outsider, team = _team(app)
    decks = f"/teams/{team}/decks"
    form = {"format": "csv", "title": "Cluster", "locale": "en", "content": CLOZE_CSV}
    made = _post(lead, decks, form, decks)
    assert made.status_code == 303, made.get_data(as_text=True)
    deck = str(made.headers["Location"])
    slug = deck.rsplit("/", 1)[-1]
    listing = member.get(deck).get_data(as_text=True)
    assert _cards(listing) == [(1, "k8s-c1"), (2, "k8s-c2"), (3, "node")]
    assert "[...] planifica pods." in listing and "Kubernetes planifica [qué]." in listing
    # One note, as Anki's: the lead edits the cards as the text they came from.
    notes = _note_keys(engine, slug)
    assert notes["k8s-c1"] == notes["k8s-c2"] is not None and notes["node"] is None
    card = f"{deck}/cards/k8s-c2"
    page = lead.get(card).get_data(as_text=True)
    assert "{{c1::Kubernetes}} schedules {{c2::pods::what}}.</textarea>" in page
    assert ">On nodes.</textarea>" in page

    # The member studies them once the deck is assigned, the deletion marked as Anki does.
    _post(lead, f"/teams/{team}/assignments", {"deck": slug}, f"/teams/{team}")
    study = member.get(f"/study?deck={slug}").get_data(as_text=True)
    assert '<mark class="blank">[...]</mark> planifica pods.' in study
    assert '<mark class="blank">Kubernetes</mark> planifica pods.' in study
    answer = {name: re.findall(rf'name="{name}" value="([^"]+)"', study)[0]
              for name in ("card_id", "review_id", "deck")}  # fmt: skip
    answered = _post(member, "/study/answer", {**answer, "rating": "3"}, f"/study?deck={slug}")
    assert answered.status_code == 303

    # The same CSV again changes nothing: the same keys, so everyone keeps their progress,
    # and the same note in Anki.
    again = _post(lead, f"{deck}/source", form, deck)
    assert again.status_code == 303, again.get_data(as_text=True)
    assert _cards(member.get(deck).get_data(as_text=True)) == _cards(listing)
    assert _note_keys(engine, slug) == notes
    study = member.get(f"/study?deck={slug}").get_data(as_text=True)
    assert re.findall(r'class="num">(\d+)<', study)[:3] == ["2", "1", "0"]
