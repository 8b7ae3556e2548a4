"""The card browser's API: GET /api/v1/cards (search, sort, paging), a card's history, and
POST /api/v1/cards/actions with its undo; bad values and other people's cards. SQLite and
PostgreSQL through the Flask test client."""

from __future__ import annotations

from typing import Any

from flask.testing import FlaskClient
from sqlalchemy import Engine, func, select

from flashcards.srs import marks as mk
from flashcards.storage.engine import transaction
from flashcards.storage.models import CardAction

from . import factories as f
from .test_api_study import World, assert_problem, review_body, world

__all__ = ["world"]


def _cards(client: FlaskClient, world: World, query: str = "") -> Any:
    r = client.get(f"/api/v1/cards{query}", headers=world.ana_h)
    assert r.status_code == 200, r.get_data(as_text=True)
    return r.get_json()


def _act(client: FlaskClient, world: World, body: Any, headers: Any = None) -> Any:
    return client.post("/api/v1/cards/actions", json=body, headers=headers or world.ana_h)


def test_search_and_history(client: FlaskClient, world: World) -> None:
    body = _cards(client, world)
    assert [c["id"] for c in body["cards"]] == world.cards
    assert (body["total"], body["page"], body["pages"], body["page_size"]) == (3, 1, 1, 50)
    assert body["cards"][0]["state"] == "new" and body["cards"][0]["deck"] == "alpha"
    r = client.post("/api/v1/reviews", json=review_body(world.cards[1]), headers=world.ana_h)
    assert r.status_code in (200, 201), r.get_data(as_text=True)
    today = _cards(client, world, "?reviewed_today=true&sort=stability&order=desc")
    assert [c["id"] for c in today["cards"]] == [world.cards[1]]
    assert today["cards"][0]["state"] == "learning" and today["cards"][0]["reviews"] == 1
    assert _cards(client, world, "?q=alpha%20q3")["total"] == 1
    assert _cards(client, world, "?state=new&deck=alpha")["total"] == 2
    history = client.get(f"/api/v1/cards/{world.cards[1]}/history", headers=world.ana_h)
    answers = history.get_json()["answers"]
    assert [a["rating"] for a in answers] == [3] and answers[0]["stability"] > 0
    # Ben's own deck is not Ana's to search, see or change.
    assert world.bens_card not in [c["id"] for c in _cards(client, world)["cards"]]
    r = client.get(f"/api/v1/cards/{world.bens_card}/history", headers=world.ana_h)
    assert_problem(r, 404)


def test_bad_search_values_are_422_naming_the_field(client: FlaskClient, world: World) -> None:
    for query, field in (
        ("?state=sleeping", "state"),
        ("?flag=8", "flag"),
        ("?flag=x", "flag"),
        ("?suspended=maybe", "suspended"),
        ("?due_from=2026-13-01", "due_from"),
        ("?sort=colour", "sort"),
        ("?order=up", "order"),
        ("?page=0", "page"),
        ("?colour=red", "colour"),
        ("?state=new&state=review", "state"),
    ):
        assert_problem(client.get(f"/api/v1/cards{query}", headers=world.ana_h), 422, field)


def test_bulk_actions_undo_and_refusals(client: FlaskClient, world: World, engine: Engine) -> None:
    a, b, c = world.cards
    r = _act(client, world, {"card_ids": [a, b], "action": "suspend"})
    assert r.status_code == 200, r.get_data(as_text=True)
    assert r.get_json()["card_ids"] == [a, b]
    assert [x["id"] for x in _cards(client, world, "?suspended=true")["cards"]] == [a, b]
    r = client.post("/api/v1/reviews/undo", headers=world.ana_h)
    assert r.status_code == 200, r.get_data(as_text=True)
    assert _cards(client, world, "?suspended=true")["total"] == 0
    r = _act(client, world, {"card_ids": [b, c], "action": "add_tag", "tag": "verbos"})
    assert r.status_code == 200
    assert [x["id"] for x in _cards(client, world, "?tag=verbos")["cards"]] == [b, c]
    with transaction(engine) as s:
        actions = s.scalar(select(func.count()).select_from(CardAction))
    for body, status, field in (
        ({"card_ids": [a, world.bens_card], "action": "suspend"}, 404, None),
        ({"card_ids": [a, 99999999], "action": "flag", "flag": 1}, 404, None),
        ({"card_ids": [], "action": "suspend"}, 422, "card_ids"),
        ({"card_ids": [a], "action": "explode"}, 422, "action"),
        ({"card_ids": [a], "action": "flag"}, 422, "flag"),
        ({"card_ids": [a], "action": "flag", "flag": 8}, 422, "flag"),
        ({"card_ids": [a], "action": "add_tag", "tag": "two words"}, 422, "tag"),
        ({"card_ids": [a], "action": "add_tag", "tag": "leech"}, 422, "tag"),
        ({"card_ids": [a], "action": "due", "due": "soon"}, 422, "due"),
        ({"card_ids": [a], "action": "due", "due": 3}, 409, None),  # new: no schedule
        ({"card_ids": ["1"], "action": "suspend"}, 422, "card_ids"),
    ):
        assert_problem(_act(client, world, body), status, field)
    with transaction(engine) as s:
        assert s.scalar(select(func.count()).select_from(CardAction)) == actions
        assert not mk.card_marks(s, world.ana, a).suspended


def test_bulk_forget_puts_cards_back_among_the_new_ones(
    client: FlaskClient, world: World, engine: Engine
) -> None:
    a, b, c = world.cards
    for card in (a, b):
        r = client.post("/api/v1/reviews", json=review_body(card, "easy"), headers=world.ana_h)
        assert r.status_code == 201
    body = {"card_ids": [b, a], "action": "forget", "reset_counts": True}
    r = _act(client, world, body)
    assert r.status_code == 200, r.get_data(as_text=True)
    found = _cards(client, world, "?state=new")
    assert found["total"] == 3
    for card in found["cards"]:
        assert (card["state"], card["due"], card["reviews"]) == ("new", None, 0)
    # After the card never studied, in the order forgotten; counted as new.
    shown = []
    for _ in range(3):
        nxt = client.get("/api/v1/study/next", headers=world.ana_h).get_json()
        assert nxt["counts"]["new"] == 3 - len(shown) and nxt["card"]["kind"] == "new"
        shown.append(nxt["card"]["id"])
        answered = review_body(nxt["card"]["id"], "good")
        assert client.post("/api/v1/reviews", json=answered, headers=world.ana_h).status_code == 201
    assert shown == [c, b, a]
    # Undone answer by answer, then the forget itself: both cards in review again.
    for _ in range(4):
        assert client.post("/api/v1/reviews/undo", headers=world.ana_h).status_code == 200
    assert _cards(client, world, "?state=review")["total"] == 2
    assert_problem(_act(client, world, {**body, "reset_counts": "yes"}), 422, "reset_counts")


def test_bulk_move_between_own_decks(client: FlaskClient, world: World, engine: Engine) -> None:
    with transaction(engine) as s:
        mine = f.make_deck(s, "anas", 2, owner_user_id=world.ana)
        other = f.make_deck(s, "anas-other", 1, owner_user_id=world.ana, locales=("es",))
        f.subscribe(s, world.ana, mine)
        f.subscribe(s, world.ana, other)
        first, second = f.card_ids(s, mine.id)
        (others,) = f.card_ids(s, other.id)
    r = client.post("/api/v1/reviews", json=review_body(first, "easy"), headers=world.ana_h)
    assert r.status_code == 201
    with transaction(engine) as s:
        actions = s.scalar(select(func.count()).select_from(CardAction))
    for body, status, field in (
        ({"card_ids": [first], "action": "move"}, 422, "deck"),
        ({"card_ids": [first], "action": "move", "deck": "bens"}, 404, None),
        ({"card_ids": [first], "action": "move", "deck": "alpha"}, 403, None),
        ({"card_ids": [world.cards[0]], "action": "move", "deck": "anas-other"}, 403, None),
        ({"card_ids": [first, world.bens_card], "action": "move", "deck": "anas-other"}, 404, None),
    ):
        assert_problem(_act(client, world, body), status, field)
    with transaction(engine) as s:
        assert s.scalar(select(func.count()).select_from(CardAction)) == actions
    r = _act(client, world, {"card_ids": [first, second], "action": "move", "deck": "anas-other"})
    assert r.status_code == 200, r.get_data(as_text=True)
    found = _cards(client, world, "?deck=anas-other")["cards"]
    assert {c["id"] for c in found} == {first, second, others}
    moved = next(c for c in found if c["id"] == first)
    # Its progress and its text (English, in a Spanish deck) go with it.
    assert (moved["state"], moved["reviews"], moved["question"]) == ("review", 1, "anas q1 en")
    assert client.post("/api/v1/reviews/undo", headers=world.ana_h).status_code == 200
    assert sorted(c["id"] for c in _cards(client, world, "?deck=anas")["cards"]) == [first, second]
