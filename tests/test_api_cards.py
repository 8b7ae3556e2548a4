"""The card resource's marks and PATCH /api/v1/cards/{id}: changes, undo, bad values, other
people's cards; on SQLite and PostgreSQL through the Flask test client."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from flask.testing import FlaskClient
from sqlalchemy import Engine, func, select

from flashcards.srs.days import study_date
from flashcards.storage.engine import transaction
from flashcards.storage.models import CardAction, CardMark
from flashcards.storage.schema import utcnow

from .test_api_study import World, assert_problem, review_body, world

__all__ = ["world"]  # the fixture, shared with the study API's tests


def _patch(client: FlaskClient, world: World, card: int, body: Any) -> Any:
    return client.patch(f"/api/v1/cards/{card}", json=body, headers=world.ana_h)


def _count(engine: Engine, model: Any) -> int:
    with transaction(engine) as s:
        return int(s.scalar(select(func.count()).select_from(model)) or 0)


def test_the_card_resource_shows_the_callers_marks(client: FlaskClient, world: World) -> None:
    body = client.get(f"/api/v1/cards/{world.cards[0]}", headers=world.ana_h).get_json()
    assert (body["suspended"], body["buried_until"], body["flag"], body["leech"]) == (
        False, None, 0, False,
    )  # fmt: skip
    assert body["tags"] == []


def test_patch_changes_the_callers_own_state_and_undo_takes_it_back(
    client: FlaskClient, world: World, engine: Engine
) -> None:
    card = world.cards[0]
    r = _patch(client, world, card, {"suspended": True, "flag": 2})
    assert r.status_code == 200, r.get_data(as_text=True)
    assert r.get_json()["suspended"] is True and r.get_json()["flag"] == 2
    # Ben sees nothing of Ana's marks, on a shipped deck they both see.
    ben = client.get(f"/api/v1/cards/{card}", headers=world.ben_h).get_json()
    assert ben["suspended"] is False and ben["flag"] == 0
    # The suspended card is out of Ana's queue.
    nxt = client.get("/api/v1/study/next", headers=world.ana_h).get_json()
    assert nxt["card"]["id"] != card and nxt["counts"]["new"] == 2
    tomorrow = study_date(utcnow(), "UTC", 4) + timedelta(days=2)
    r = _patch(client, world, card, {"buried_until": tomorrow.isoformat()})
    assert r.get_json()["buried_until"] == tomorrow.isoformat()
    r = _patch(client, world, card, {"buried_until": None})
    assert r.get_json()["buried_until"] is None
    # Undo, latest first: the unbury, the bury, then the first request's two changes at once.
    for _ in range(2):
        assert client.post("/api/v1/reviews/undo", headers=world.ana_h).status_code == 200
    body = client.get(f"/api/v1/cards/{card}", headers=world.ana_h).get_json()
    assert (body["suspended"], body["flag"]) == (True, 2)
    assert client.post("/api/v1/reviews/undo", headers=world.ana_h).status_code == 200
    body = client.get(f"/api/v1/cards/{card}", headers=world.ana_h).get_json()
    assert (body["suspended"], body["flag"], body["buried_until"]) == (False, 0, None)
    assert _count(engine, CardAction) == 0


def test_forget_and_due_need_a_studied_card(client: FlaskClient, world: World) -> None:
    card = world.cards[1]
    assert_problem(_patch(client, world, card, {"forget": True}), 409, kind="card-not-studied")
    assert_problem(_patch(client, world, card, {"due": "1-7"}), 409, kind="card-not-studied")
    assert (
        client.post("/api/v1/reviews", json=review_body(card), headers=world.ana_h).status_code
        == 201
    )
    r = _patch(client, world, card, {"due": 3})
    assert r.status_code == 200
    due_day = r.get_json()["state"]["due"][:10]
    expected = study_date(utcnow(), "UTC", 4) + timedelta(days=3)
    assert due_day == expected.isoformat()
    r = _patch(client, world, card, {"forget": True})
    assert r.status_code == 200 and r.get_json()["state"] is None  # new again
    # A forgotten card is new: it has no schedule to set.
    assert_problem(_patch(client, world, card, {"due": 3}), 409, kind="card-not-studied")


def test_bad_values_are_422_with_nothing_written(
    client: FlaskClient, world: World, engine: Engine
) -> None:
    card = world.cards[0]
    today = study_date(utcnow(), "UTC", 4)
    cases: list[tuple[Any, str | None]] = [
        ({}, None),
        ({"flag": 8}, "flag"),
        ({"flag": -1}, "flag"),
        ({"flag": "2"}, "flag"),
        ({"flag": True}, "flag"),
        ({"flag": None}, "flag"),
        ({"suspended": "yes"}, "suspended"),
        ({"suspended": None}, "suspended"),
        ({"buried_until": "tomorrow"}, "buried_until"),
        ({"buried_until": today.isoformat()}, "buried_until"),
        ({"forget": False}, "forget"),
        ({"restore_position": True}, "restore_position"),
        ({"forget": True, "reset_counts": None}, "reset_counts"),
        ({"forget": True, "reset_counts": "yes"}, "reset_counts"),
        ({"due": "7-1"}, "due"),
        ({"due": "x"}, "due"),
        ({"due": -1}, "due"),
        ({"colour": 1}, "colour"),
        ([1], None),
    ]
    for body, field in cases:
        assert_problem(_patch(client, world, card, body), 422, field)
    # One bad change in a body of several: none is made.
    assert_problem(_patch(client, world, card, {"suspended": True, "due": "5-1"}), 422, "due")
    assert _count(engine, CardMark) == 0 and _count(engine, CardAction) == 0


def test_other_peoples_cards_are_404(client: FlaskClient, world: World, engine: Engine) -> None:
    for card in (world.bens_card, 10**6, 2**31):
        assert_problem(_patch(client, world, card, {"suspended": True}), 404)
    assert _count(engine, CardMark) == 0
    r = client.patch(f"/api/v1/cards/{world.cards[0]}", json={"flag": 1})
    assert_problem(r, 401)


def test_study_options_read_and_change(client: FlaskClient, world: World) -> None:
    body = client.get("/api/v1/study-options", headers=world.ana_h).get_json()
    assert body == {
        "bury_new": False, "bury_reviews": False, "bury_interday": False,
        "leech_threshold": 8, "leech_suspend": False,
    }  # fmt: skip
    r = client.patch(
        "/api/v1/study-options", json={"bury_new": True, "leech_threshold": 4}, headers=world.ana_h
    )
    assert r.status_code == 200 and r.get_json()["bury_new"] is True
    assert r.get_json()["leech_threshold"] == 4 and r.get_json()["bury_reviews"] is False
    for bad, field in [
        ({"leech_threshold": 0}, "leech_threshold"),
        ({"leech_threshold": 100}, "leech_threshold"),
        ({"bury_new": "yes"}, "bury_new"),
        ({"bury_new": None}, "bury_new"),
        ({"other": 1}, "other"),
    ]:
        assert_problem(
            client.patch("/api/v1/study-options", json=bad, headers=world.ana_h), 422, field
        )
    ben = client.get("/api/v1/study-options", headers=world.ben_h).get_json()
    assert ben["bury_new"] is False and ben["leech_threshold"] == 8
