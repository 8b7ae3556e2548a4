"""Deleting a deck one imported: the deck, its cards and one's progress go; nothing else."""

from __future__ import annotations

import pytest
from flask import Flask
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from flashcards.decks import own_decks
from flashcards.errors import NotDeckOwner, NotFound
from flashcards.storage.engine import transaction
from flashcards.storage.models import Card, CardText, Deck, ReviewLog, ReviewState, Subscription
from flashcards.teams import team_decks
from flashcards.teams.membership import create_team

from . import factories as f
from .conftest import T0
from .web_helpers import csrf


def _count(s: Session, model: type, **where: object) -> int:
    query = select(func.count()).select_from(model)
    for name, value in where.items():
        query = query.where(getattr(model, name) == value)
    return s.scalar(query) or 0


def _world(s: Session) -> dict[str, int]:
    """Ana with a private deck she answered, a shipped deck she answered, Ben with his own."""
    ana, ben = f.make_user(s, "ana@example.com"), f.make_user(s, "ben@example.com")
    mine = f.make_deck(s, "ana-private", 3, owner_user_id=ana)
    shipped = f.make_deck(s, "shipped", 2)
    theirs = f.make_deck(s, "ben-private", 2, owner_user_id=ben)
    for deck in (mine, shipped):
        f.answer(s, ana, f.card_ids(s, deck.id)[0], "good", now=T0)
    f.answer(s, ben, f.card_ids(s, theirs.id)[0], "good", now=T0)
    return {"ana": ana, "ben": ben, "mine": mine.id, "shipped": shipped.id, "theirs": theirs.id}


def test_deleting_ones_own_deck_takes_its_cards_and_progress_and_nothing_else(
    engine: Engine,
) -> None:
    with transaction(engine) as s:
        w = _world(s)
        team = create_team(s, w["ana"], "T", now=T0).id
        team_deck, _ = team_decks.create_team_deck(
            s, team, w["ana"], fmt="csv", content="front,back\nQ,A\n", locale="en",
            title="Team deck", now=T0,
        )  # fmt: skip
    with transaction(engine) as s:
        with pytest.raises(NotDeckOwner):
            own_decks.delete_own_deck(s, w["ana"], "shipped")
        with pytest.raises(NotDeckOwner):  # a team's deck is deleted by its leads, on the team
            own_decks.delete_own_deck(s, w["ana"], team_deck.slug)
        with pytest.raises(NotFound):  # another's deck is not even seen
            own_decks.delete_own_deck(s, w["ana"], "ben-private")
        own_decks.delete_own_deck(s, w["ana"], "ana-private")
    with transaction(engine) as s:
        assert s.get(Deck, w["mine"]) is None
        assert _count(s, Card, deck_id=w["mine"]) == 0
        assert _count(s, ReviewState, deck_id=w["mine"]) == 0
        assert _count(s, ReviewLog, deck_id=w["mine"]) == 0
        assert _count(s, Subscription, deck_id=w["mine"]) == 0
        # Everything else stays: the shipped deck with Ana's answer, Ben's deck with his.
        assert _count(s, ReviewLog, user_id=w["ana"]) == 1
        assert _count(s, ReviewLog, user_id=w["ben"]) == 1
        assert _count(s, Card) == 2 + 2 + 1
        assert _count(s, CardText) == 5


def test_web_and_api_delete_with_a_confirmation_page_and_errors(app: Flask, engine: Engine) -> None:
    with transaction(engine) as s:
        w = _world(s)
        token = f.make_token(s, w["ana"])
    client = app.test_client()
    signed_in = client.post(
        "/signin",
        data={"csrf_token": csrf(client, "/signin"), "email": "ana@example.com",
              "password": f.PASSWORD},
    )  # fmt: skip
    assert signed_in.status_code == 302
    page = client.get("/decks/ana-private").get_data(as_text=True)
    assert 'href="/decks/ana-private/delete"' in page
    assert "/delete" not in client.get("/decks/shipped").get_data(as_text=True)
    confirm = client.get("/decks/ana-private/delete")
    assert confirm.status_code == 200
    assert "3 cards are deleted in every language" in confirm.get_data(as_text=True)
    assert client.get("/decks/shipped/delete").status_code == 403
    assert client.get("/decks/ben-private/delete").status_code == 404
    r = client.post("/decks/ana-private/delete", data={"csrf_token": csrf(client, "/")})
    assert r.status_code == 303 and r.location == "/"
    assert "The deck is deleted." in client.get("/").get_data(as_text=True)
    assert client.get("/decks/ana-private").status_code == 404

    with transaction(engine) as s:
        f.make_deck(s, "ana-second", 2, owner_user_id=w["ana"])
    auth = {"Authorization": f"Bearer {token}"}
    r = client.delete("/api/v1/decks/shipped", headers=auth)
    assert r.status_code == 403 and r.mimetype == "application/problem+json"
    assert client.delete("/api/v1/decks/ben-private", headers=auth).status_code == 404
    assert client.delete("/api/v1/decks/ana-second", headers=auth).status_code == 204
    assert client.delete("/api/v1/decks/ana-second", headers=auth).status_code == 404
    with transaction(engine) as s:
        assert {d for d in s.scalars(select(Deck.slug))} == {"shipped", "ben-private"}
