"""The deck-centred library and the study forms bound to the card shown (no JavaScript)."""

from __future__ import annotations

import re
import uuid

from flask.testing import FlaskClient
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from flashcards.storage.models import ReviewLog

from .factories import make_deck
from .web_helpers import CARD_ID_RE, REVIEW_ID_RE, csrf, settings_form, sign_up, subscribe

REVEAL_RE = re.compile(r'id="reveal"[^>]* href="([^"]+)"')
QUESTION_RE = re.compile(r'<h1 id="question"[^>]*>([^<]+)<')
HIDDEN_ANSWER_RE = re.compile(r'<div id="answer"[^>]*hidden')


def _logs(engine: Engine) -> int:
    with Session(engine) as s:
        return s.scalar(select(func.count()).select_from(ReviewLog)) or 0


def _item(page: str, slug: str) -> str:
    """The library's list item of one studied deck."""
    start = page.index(f'id="deck-{slug}"')
    end = page.find('<li class="deck"', start)
    return page[start : end if end != -1 else page.index("</ul>", start)]


def _counts(html: str) -> list[str]:
    return re.findall(r'class="num">(\d+)<', html)


def _front(client: FlaskClient, path: str = "/study") -> dict[str, str]:
    page = client.get(path).get_data(as_text=True)
    card, review, reveal = (
        CARD_ID_RE.search(page),
        REVIEW_ID_RE.search(page),
        REVEAL_RE.search(page),
    )
    question = QUESTION_RE.search(page)
    assert card and review and reveal and question, page
    return {
        "card_id": card[1],
        "review_id": review[1],
        "reveal": reveal[1].replace("&amp;", "&"),
        "question": question[1],
    }


def _answer(client: FlaskClient, shown: dict[str, str], rating: str = "3", deck: str = "") -> str:
    form = {
        "deck": deck,
        "csrf_token": csrf(client, "/"),
        "card_id": shown["card_id"],
        "review_id": shown["review_id"],
        "rating": rating,
    }
    response = client.post("/study/answer", data=form)
    assert response.status_code == 303
    return client.get(response.location).get_data(as_text=True)


def _second_deck(engine: Engine, cards: int = 3) -> None:
    with Session(engine) as s:
        make_deck(s, "second-deck", cards)
        s.commit()


def test_each_studied_deck_has_its_counts_and_its_own_study_button(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    _second_deck(loaded_engine)
    sign_up(client)
    subscribe(client, "en")
    subscribe(client, "en", slug="second-deck")
    # The second deck allows one new card a day: its count respects it, as the queue does.
    r = client.post(
        "/decks/second-deck/settings",
        data={"csrf_token": csrf(client, "/decks/second-deck"), "new_per_day": "1"},
    )
    assert r.status_code == 302
    _answer(client, _front(client, "/study?deck=eks-model-training"))

    page = client.get("/").get_data(as_text=True)
    eks, second = _item(page, "eks-model-training"), _item(page, "second-deck")
    assert _counts(eks) == ["14", "1", "0"]
    assert _counts(second) == ["1", "0", "0"]
    assert _counts(page)[:3] == ["15", "1", "0"]  # "Study all": the two added up
    assert 'href="/study">Study all</a>' in page
    assert 'href="/study?deck=second-deck"' in second
    assert 'href="/study?deck=eks-model-training"' in eks
    # A choice of language only where there is one: the shipped deck has three.
    assert '<select id="locale-eks-model-training"' in eks
    assert "<select" not in second and "Change language" not in second
    assert "All done" not in page


def test_a_decks_study_button_studies_that_deck_only(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    _second_deck(loaded_engine, cards=2)
    sign_up(client)
    subscribe(client, "en")
    subscribe(client, "en", slug="second-deck")
    seen = []
    for _ in range(2):
        shown = _front(client, "/study?deck=second-deck")
        seen.append(shown["question"])
        page = _answer(client, shown, rating="4", deck="second-deck")  # Easy: done today
    assert seen == ["second-deck q1 en", "second-deck q2 en"]
    assert "All done for now" in page  # this deck is done...
    library = client.get("/").get_data(as_text=True)
    assert "Nothing is due in this deck right now." in _item(library, "second-deck")
    assert _counts(_item(library, "eks-model-training")) == ["15", "0", "0"]  # ...not the other
    assert _front(client)["question"] != seen[0]


def test_the_study_card_names_its_deck(client: FlaskClient, loaded_engine: Engine) -> None:
    _second_deck(loaded_engine)
    sign_up(client, language="es")
    subscribe(client, "en", slug="second-deck")
    page = client.get("/study").get_data(as_text=True)
    deck = '<a href="/decks/second-deck" lang="en">second-deck (en)</a>'
    assert f'<p class="card-deck">Del mazo {deck}</p>' in page, page


def test_an_empty_library_asks_to_pick_a_deck(client: FlaskClient, loaded_engine: Engine) -> None:
    sign_up(client)
    page = client.get("/").get_data(as_text=True)
    assert "Pick a deck to study" in page and 'id="empty-library"' in page
    assert "Study all" not in page and "All done" not in page
    assert 'href="/study/custom"' not in page  # nothing to study in a custom way yet
    # The decks there are to pick from, each with its Subscribe button.
    assert 'action="/decks/eks-model-training/subscription"' in page
    r = client.get("/study")
    assert r.status_code == 303 and r.location == "/"
    assert "Pick a deck to study first" in client.get("/").get_data(as_text=True)


def test_a_stale_reveal_shows_the_card_due_now_face_down(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client)
    subscribe(client, "en")
    first = _front(client)
    revealed = client.get(first["reveal"]).get_data(as_text=True)
    assert not HIDDEN_ANSWER_RE.search(revealed)
    assert client.get("/study").headers["Cache-Control"] == "no-store"
    _answer(client, first)
    # Back to the first card's reveal address, or the old "show=1": the card due now, face down.
    for path in (first["reveal"], "/study?show=1", f"/study?card={first['card_id']}&show=1"):
        page = client.get(path).get_data(as_text=True)
        assert QUESTION_RE.search(page)[1] != first["question"], path  # type: ignore[index]
        assert HIDDEN_ANSWER_RE.search(page), path
        assert 'id="stale-reveal"' in page
    assert 'id="stale-reveal"' not in client.get("/study").get_data(as_text=True)
    # The next card's own reveal shows it.
    second = _front(client)
    assert second["reveal"] != first["reveal"]
    assert not HIDDEN_ANSWER_RE.search(client.get(second["reveal"]).get_data(as_text=True))


def test_an_answer_to_a_card_not_shown_at_its_state_is_refused(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client)
    subscribe(client, "en")
    first = _front(client)
    _answer(client, first)
    assert _logs(loaded_engine) == 1
    second = _front(client)
    refused = "That card was answered or changed after it was shown"
    for card_id, review_id in [
        (second["card_id"], str(uuid.uuid4())),  # the card due, with a review id never issued
        (str(int(second["card_id"]) + 1), str(uuid.uuid4())),  # a card never shown
        (first["card_id"], str(uuid.uuid4())),  # answered already: a stale tab's other form
    ]:
        page = _answer(client, {"card_id": card_id, "review_id": review_id})
        assert refused in page, (card_id, review_id)
    # The first card's own form sent again is a resend: applied once, no complaint.
    page = _answer(client, first)
    assert refused not in page
    assert _logs(loaded_engine) == 1
    # The form of the card shown still answers it.
    _answer(client, second)
    assert _logs(loaded_engine) == 2


def test_settings_flag_every_bad_field_at_once_and_keep_what_was_typed(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client)
    form = settings_form(
        client,
        display_name="Ana",
        timezone="Mars/Olympus",
        desired_retention="0.95",
        new_per_day="lots",
        reviews_per_day="150",
        learning_steps="1m 10x",
    )
    r = client.post("/settings", data=form)
    page = r.get_data(as_text=True)
    assert r.status_code == 422
    flagged = set(re.findall(r'<p class="field-error" id="([a-z_]+)-error">', page))
    assert flagged == {"timezone", "new_per_day", "learning_steps"}
    for field in flagged:
        assert re.search(rf'id="{field}"[^>]*aria-invalid="true"', page, re.S), field
    assert "3 fields need a change" in page and '<a href="#learning_steps">' in page
    # Every value as typed, the good and the bad.
    for field in (
        "timezone",
        "new_per_day",
        "learning_steps",
        "desired_retention",
        "reviews_per_day",
    ):
        assert f'value="{form[field]}"' in page, field
    # Nothing was saved, not even the good fields.
    settings = client.get("/settings").get_data(as_text=True)
    assert 'value="0.9"' in settings and 'value="200"' in settings
