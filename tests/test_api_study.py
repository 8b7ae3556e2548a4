"""The study API: decks and subscriptions, next card, reviews, undo, cards; auth and input."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from flask.testing import FlaskClient
from fsrs import Rating, State
from sqlalchemy import Engine, func, select

from flashcards.srs import study
from flashcards.srs.scheduling import SchedulerConfig, fuzz_seed, preview
from flashcards.storage.engine import transaction
from flashcards.storage.models import ReviewLog, ReviewState
from flashcards.storage.schema import utcnow

from . import factories as f
from .conftest import T0
from .test_scheduling import PEOPLES_CLOCK, SEQUENCE, assert_matches, golden

PROBLEM = "application/problem+json"
# Fixed times safely in the past, so that reviewed_at is never "in the future".
BASE = T0 - timedelta(days=365)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def assert_problem(
    response: Any, status: int, field: str | None = None, *, kind: str | None = None
) -> dict[str, Any]:
    """A problem+json of this status; `kind` is its type's slug, when the test names one."""
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == PROBLEM
    body: dict[str, Any] = response.get_json(force=True)
    assert body["status"] == status and body["title"] and body["detail"]
    if field is not None:
        assert body.get("field") == field, body
    if kind is not None:
        assert body["type"] == f"/api/v1/problems/{kind}", body
    return body


class World:
    """Ana (subscribed to 'alpha' with 3 cards), Ben who owns a private deck 'bens'."""

    def __init__(self, engine: Engine) -> None:
        with transaction(engine) as s:
            self.ana = f.make_user(s)
            self.ben = f.make_user(s)
            self.ana_h = bearer(f.make_token(s, self.ana))
            self.ben_h = bearer(f.make_token(s, self.ben))
            alpha = f.make_deck(s, "alpha", 3, locales=("en", "es"))
            self.beta = f.make_deck(s, "beta", 2).id
            bens = f.make_deck(s, "bens", 1, owner_user_id=self.ben)
            f.subscribe(s, self.ana, alpha)
            f.subscribe(s, self.ben, bens)
            self.cards = f.card_ids(s, alpha.id)
            self.bens_card = f.card_ids(s, bens.id)[0]


@pytest.fixture
def world(engine: Engine) -> World:
    return World(engine)


def review_body(card_id: int, rating: Any = "good", **extra: Any) -> dict[str, Any]:
    return {"card_id": card_id, "rating": rating, "review_id": str(uuid.uuid4()), **extra}


ENDPOINTS = [
    ("get", "/api/v1/decks", None),
    ("put", "/api/v1/decks/alpha/subscription", {}),
    ("delete", "/api/v1/decks/alpha/subscription", None),
    ("get", "/api/v1/study/next", None),
    ("post", "/api/v1/reviews", {"card_id": 1, "rating": 3, "review_id": str(uuid.uuid4())}),
    ("post", "/api/v1/reviews/undo", None),
    ("get", "/api/v1/cards/1", None),
]


def test_no_or_wrong_token_is_401(client: FlaskClient, world: World) -> None:
    for method, path, body in ENDPOINTS:
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            response = getattr(client, method)(path, json=body, headers=headers)
            assert_problem(response, 401)
            assert response.headers["WWW-Authenticate"].startswith("Bearer")
    # Before anything about the body: a client with a stale token is told to sign in again.
    for bad in ({"card_id": "x"}, {"rating": 9}, [1]):
        response = client.post("/api/v1/reviews", json=bad, headers={"Authorization": "Bearer x"})
        assert_problem(response, 401)
    response = client.post(
        "/api/v1/reviews", data="{oops", content_type="application/json", headers=bearer("x")
    )
    assert_problem(response, 401)


def test_revoked_token_is_401(client: FlaskClient, world: World, engine: Engine) -> None:
    used = review_body(world.cards[0])
    assert client.post("/api/v1/reviews", json=used, headers=world.ana_h).status_code == 201
    assert client.delete("/api/v1/tokens/current", headers=world.ana_h).status_code == 204
    assert_problem(client.get("/api/v1/study/next", headers=world.ana_h), 401)
    # An answer finds its token's owner in its own read; a revoked token finds nobody,
    # whatever the card or the review id, and says nothing about either.
    for body in (
        review_body(world.cards[1]),
        used,
        review_body(world.bens_card),
        review_body(10**6),
    ):
        assert_problem(client.post("/api/v1/reviews", json=body, headers=world.ana_h), 401)
    with transaction(engine) as s:
        assert s.scalar(select(func.count()).select_from(ReviewLog)) == 1
        assert s.scalar(select(func.count()).select_from(ReviewState)) == 1


def test_decks_and_subscriptions(client: FlaskClient, world: World) -> None:
    decks = client.get("/api/v1/decks", headers=world.ana_h).get_json()["decks"]
    by_slug = {d["slug"]: d for d in decks}
    assert set(by_slug) == {"alpha", "beta"}  # not Ben's private deck
    assert by_slug["alpha"]["subscription"] == {"locale": "en"}
    assert by_slug["alpha"]["locales"] == ["en", "es"] and by_slug["alpha"]["card_count"] == 3
    assert by_slug["beta"]["subscription"] is None
    r = client.put("/api/v1/decks/alpha/subscription", json={"locale": "es"}, headers=world.ana_h)
    assert r.status_code == 200 and r.get_json() == {"deck": "alpha", "locale": "es"}
    assert (
        client.get("/api/v1/study/next", headers=world.ana_h).get_json()["card"]["locale"] == "es"
    )
    assert_problem(
        client.put("/api/v1/decks/alpha/subscription", json={"locale": "ko"}, headers=world.ana_h),
        422,
        "locale",
    )
    assert_problem(
        client.put("/api/v1/decks/alpha/subscription", json={"locale": 3}, headers=world.ana_h),
        422,
        "locale",
    )
    # Naming no language keeps the one chosen (Ana's UI language is English).
    for body in ({}, None):
        r = client.put("/api/v1/decks/alpha/subscription", json=body, headers=world.ana_h)
        assert r.status_code == 200 and r.get_json() == {"deck": "alpha", "locale": "es"}
    r = client.put("/api/v1/decks/beta/subscription", headers=world.ana_h)  # no body
    assert r.status_code == 200 and r.get_json()["locale"] == "en"
    assert client.delete("/api/v1/decks/beta/subscription", headers=world.ana_h).status_code == 204
    assert_problem(client.delete("/api/v1/decks/beta/subscription", headers=world.ana_h), 404)
    for method in ("put", "delete"):
        for slug in ("bens", "nope", "%00"):
            r = getattr(client, method)(f"/api/v1/decks/{slug}/subscription", headers=world.ana_h)
            assert_problem(r, 404)


def test_next_card_intervals_are_the_preview_and_counts(client: FlaskClient, world: World) -> None:
    r = client.get("/api/v1/study/next", headers=world.ana_h)
    assert r.status_code == 200
    body = r.get_json()
    assert body["card"] == {
        "id": world.cards[0],
        "deck": "alpha",
        "key": "c01",
        "locale": "en",
        "front": "alpha q1 en",
        "back": "alpha a1 en",
        "explanation": "",
        "kind": "new",
    }
    assert body["counts"] == {"new": 3, "learning": 0, "review": 0}
    # A new card's intervals are the learning steps and py-fsrs's first Easy interval.
    expected = preview(SchedulerConfig(), None, T0, seed=fuzz_seed(world.ana, world.cards[0], 0))
    assert body["intervals"] == {
        r.name.lower(): round((expected[r].due - T0).total_seconds()) for r in Rating
    }
    assert body["intervals"]["again"] == 60 and body["intervals"]["good"] == 600
    # A deck Ana does not study has no queue of hers: said so, not "nothing due".
    assert_problem(
        client.get("/api/v1/study/next?deck=beta", headers=world.ana_h),
        409,
        "deck",
        kind="not-subscribed",
    )
    for slug in ("bens", "nope"):
        assert_problem(client.get(f"/api/v1/study/next?deck={slug}", headers=world.ana_h), 404)
    assert_problem(client.get("/api/v1/study/next?deck=%00", headers=world.ana_h), 400)
    for card in world.cards:
        r = client.post("/api/v1/reviews", json=review_body(card, "easy"), headers=world.ana_h)
        assert r.status_code == 201
    assert client.get("/api/v1/study/next", headers=world.ana_h).status_code == 204


def test_next_card_counts_the_callers_own_study_day(client: FlaskClient, engine: Engine) -> None:
    # In Seoul, Cho's study day started at the top of this hour; a card introduced half an
    # hour before that was yesterday's, so today's one new card is still to come.
    now = utcnow()
    seoul = now.astimezone(ZoneInfo("Asia/Seoul"))
    day_start = seoul.replace(minute=0, second=0, microsecond=0)
    with transaction(engine) as s:
        cho = f.make_user(s, timezone="Asia/Seoul", day_start_hour=seoul.hour, new_per_day=1)
        deck = f.make_deck(s, "seoul", 3)
        f.subscribe(s, cho, deck)
        first, *_ = f.card_ids(s, deck.id)
        yesterday = day_start - timedelta(minutes=30)
        f.set_state(s, cho, first, state=State.Review, due=now + timedelta(days=5),
                    introduced_at=yesterday)  # fmt: skip
        headers = bearer(f.make_token(s, cho))
    body = client.get("/api/v1/study/next", headers=headers).get_json()
    assert body["counts"] == {"new": 1, "learning": 0, "review": 0}
    assert body["card"]["kind"] == "new"


def test_answers_through_the_api_change_the_card_exactly_as_py_fsrs_says(
    client: FlaskClient, world: World
) -> None:
    card = world.cards[1]
    expected = golden(SEQUENCE, BASE, PEOPLES_CLOCK)
    for (rating, offset), theirs in zip(SEQUENCE, expected, strict=True):
        when = BASE + offset
        body = review_body(card, rating.name.lower(), reviewed_at=when.isoformat())
        r = client.post("/api/v1/reviews", json=body, headers=world.ana_h)
        assert r.status_code == 201, r.get_json()
        returned = r.get_json()["state"]
        shown = client.get(f"/api/v1/cards/{card}", headers=world.ana_h).get_json()["state"]
        assert shown == returned
        ours = study.CardState(
            state=State[returned["state"].capitalize()],
            step=returned["step"],
            stability=returned["stability"],
            difficulty=returned["difficulty"],
            due=datetime.fromisoformat(returned["due"]),
            last_review=datetime.fromisoformat(returned["last_review"]),
            reps=returned["reps"],
            lapses=returned["lapses"],
        )
        assert_matches(ours, theirs, when, fuzzed=True)
    assert (returned["reps"], returned["lapses"]) == (len(SEQUENCE), 1)


def test_same_review_id_is_201_then_200_with_the_same_body(
    client: FlaskClient, world: World
) -> None:
    body = review_body(world.cards[0], 3)
    first = client.post("/api/v1/reviews", json=body, headers=world.ana_h)
    again = client.post("/api/v1/reviews", json=body, headers=world.ana_h)
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.get_json() == again.get_json()
    assert first.get_json()["state"]["reps"] == 1
    shown = client.get(f"/api/v1/cards/{world.cards[0]}", headers=world.ana_h).get_json()
    assert shown["state"]["reps"] == 1
    other_card = dict(body, card_id=world.cards[1])
    assert_problem(
        client.post("/api/v1/reviews", json=other_card, headers=world.ana_h),
        409,
        kind="review-id-reused",
    )
    other_rating = dict(body, rating=1)
    problem = assert_problem(
        client.post("/api/v1/reviews", json=other_rating, headers=world.ana_h), 409
    )
    assert problem["field"] == "review_id"
    shown = client.get(f"/api/v1/cards/{world.cards[0]}", headers=world.ana_h).get_json()
    assert shown["state"] == first.get_json()["state"]
    other_user = dict(body, card_id=world.bens_card)
    assert_problem(client.post("/api/v1/reviews", json=other_user, headers=world.ben_h), 409)


def test_undo(client: FlaskClient, world: World) -> None:
    assert_problem(
        client.post("/api/v1/reviews/undo", headers=world.ana_h), 409, kind="nothing-to-undo"
    )
    card = world.cards[0]
    first = client.post("/api/v1/reviews", json=review_body(card, "again"), headers=world.ana_h)
    client.post("/api/v1/reviews", json=review_body(card, "good"), headers=world.ana_h)
    r = client.post("/api/v1/reviews/undo", headers=world.ana_h)
    assert r.status_code == 200
    assert r.get_json()["card_id"] == card and r.get_json()["state"] == first.get_json()["state"]
    r = client.post("/api/v1/reviews/undo", headers=world.ana_h)
    assert r.status_code == 200 and r.get_json()["state"] is None
    assert client.get(f"/api/v1/cards/{card}", headers=world.ana_h).get_json()["state"] is None
    assert_problem(client.post("/api/v1/reviews/undo", headers=world.ana_h), 409)


def test_undo_of_a_named_answer_is_safe_to_retry(
    client: FlaskClient, world: World, engine: Engine
) -> None:
    first, second = review_body(world.cards[0], "good"), review_body(world.cards[1], "again")
    for body in (first, second):
        assert client.post("/api/v1/reviews", json=body, headers=world.ana_h).status_code == 201

    def undo(body: Any, headers: dict[str, str] = world.ana_h) -> Any:
        return client.post("/api/v1/reviews/undo", json=body, headers=headers)

    assert_problem(
        undo({"review_id": first["review_id"]}), 409, "review_id", kind="not-latest-answer"
    )
    assert_problem(
        undo({"review_id": first["review_id"]}, world.ben_h),
        404,
        "review_id",
        kind="unknown-review-id",
    )
    assert_problem(undo({"review_id": "not-a-uuid"}), 422, "review_id")
    assert_problem(undo({"review_id": 7}), 422, "review_id")
    assert_problem(undo({"card_id": world.cards[1]}), 422, "card_id")
    r = undo({"review_id": second["review_id"]})
    assert r.status_code == 200 and r.get_json()["review_id"] == second["review_id"]
    # The retry finds it gone, and leaves the first answer alone.
    assert_problem(undo({"review_id": second["review_id"]}), 404, "review_id")
    with transaction(engine) as s:
        assert s.scalars(select(ReviewLog.review_id)).all() == [first["review_id"]]
    assert undo({"review_id": None}).get_json()["review_id"] == first["review_id"]


def test_reviewed_at(client: FlaskClient, world: World) -> None:
    card = world.cards[0]
    then = BASE + timedelta(hours=1)
    r = client.post(
        "/api/v1/reviews", json=review_body(card, reviewed_at=then.isoformat()), headers=world.ana_h
    )
    assert r.status_code == 201 and r.get_json()["state"]["last_review"] == then.isoformat()
    # Any offset is accepted and means the same instant.
    same = then.astimezone(datetime.now().astimezone().tzinfo).isoformat()
    korea = (then + timedelta(hours=9)).replace(tzinfo=None).isoformat() + "+09:00"
    for value in (same, korea):
        r = client.post(
            "/api/v1/reviews", json=review_body(card, reviewed_at=value), headers=world.ana_h
        )
        assert r.status_code == 201, r.get_json()
        assert r.get_json()["state"]["last_review"] == then.isoformat()
    future = (datetime.now().astimezone() + timedelta(hours=1)).isoformat()
    for value in (
        (then - timedelta(seconds=1)).isoformat(),
        future,
        "yesterday",
        "2026-03-02T12:00:00",  # no offset
        "0001-01-01T00:00:00+14:00",
        12,
    ):
        r = client.post(
            "/api/v1/reviews", json=review_body(card, reviewed_at=value), headers=world.ana_h
        )
        assert_problem(r, 422, "reviewed_at")
    # A card's first answer cannot be before 1970 either: Anki could not number it.
    for value in ("0001-01-01T00:00:00+00:00", "1969-12-31T23:59:59+00:00"):
        r = client.post(
            "/api/v1/reviews",
            json=review_body(world.cards[1], reviewed_at=value),
            headers=world.ana_h,
        )
        assert_problem(r, 422, "reviewed_at")


WRONG_TYPES: list[tuple[dict[str, Any], str]] = [
    ({"rating": 5}, "rating"),
    ({"rating": 0}, "rating"),
    ({"rating": "meh"}, "rating"),
    ({"rating": True}, "rating"),
    ({"rating": None}, "rating"),
    ({"card_id": "1"}, "card_id"),
    ({"card_id": 0}, "card_id"),
    ({"card_id": 2**31}, "card_id"),
    ({"card_id": 10**30}, "card_id"),
    ({"card_id": 1.5}, "card_id"),
    ({"review_id": "x"}, "review_id"),
    ({"review_id": 7}, "review_id"),
    ({"duration_ms": -1}, "duration_ms"),
    ({"duration_ms": "9"}, "duration_ms"),
    ({"duration_ms": 10**20}, "duration_ms"),
    ({"duration_ms": 2.5}, "duration_ms"),
    ({"rating": 2.5}, "rating"),
    ({"surprise": 1}, "surprise"),
]


def test_wrong_types_are_422_naming_the_field(client: FlaskClient, world: World) -> None:
    for change, field in WRONG_TYPES:
        body = dict(review_body(world.cards[0]), **change)
        r = client.post("/api/v1/reviews", json=body, headers=world.ana_h)
        assert_problem(r, 422, field)
    r = client.get(f"/api/v1/cards/{world.cards[0]}", headers=world.ana_h)
    assert r.get_json()["state"] is None  # nothing was applied


def test_whole_numbers_written_with_a_point_are_integers(client: FlaskClient, world: World) -> None:
    # 3.0 is an integer in JSON Schema, as the OpenAPI document says, and in PATCH /me too.
    body = dict(review_body(world.cards[0]), card_id=float(world.cards[0]), rating=3.0)
    r = client.post("/api/v1/reviews", json={**body, "duration_ms": 4000.0}, headers=world.ana_h)
    assert r.status_code == 201, r.get_json()
    assert r.get_json()["card_id"] == world.cards[0] and r.get_json()["state"]["reps"] == 1


def test_missing_fields(client: FlaskClient, world: World) -> None:
    for name in ("card_id", "rating", "review_id"):
        body = review_body(world.cards[0])
        del body[name]
        assert_problem(client.post("/api/v1/reviews", json=body, headers=world.ana_h), 422, name)


MALFORMED: list[tuple[Any, str, int]] = [
    ("{", "application/json", 400),
    ('{"card_id": 1,}', "application/json", 400),
    ('{"card_id": NaN}', "application/json", 400),
    (b"\xff\xfe", "application/json", 400),
    ("[1, 2]", "application/json", 422),
    ("null", "application/json", 422),
    ('{"card_id": 1}', "text/plain", 415),
]


def test_malformed_bodies(client: FlaskClient, world: World) -> None:
    for data, content_type, status in MALFORMED:
        for path in ("/api/v1/reviews", "/api/v1/decks/beta/subscription"):
            method = client.post if path.endswith("reviews") else client.put
            r = method(path, data=data, content_type=content_type, headers=world.ana_h)
            assert_problem(r, status)


def test_huge_body_is_413(client: FlaskClient, world: World) -> None:
    huge = '{"card_id": 1, "pad": "' + "x" * (2 * 1024 * 1024) + '"}'
    for path in ("/api/v1/reviews", "/api/v1/decks/beta/subscription"):
        method = client.post if path.endswith("reviews") else client.put
        r = method(path, data=huge, content_type="application/json", headers=world.ana_h)
        assert_problem(r, 413)


def test_cards_of_a_deck_not_studied_are_409_and_change_nothing(
    client: FlaskClient, world: World, engine: Engine
) -> None:
    # 'beta' is a shipped-style deck Ana can see but never subscribed to.
    with transaction(engine) as s:
        card = f.card_ids(s, world.beta)[0]
    problem = assert_problem(
        client.post("/api/v1/reviews", json=review_body(card), headers=world.ana_h), 409, "card_id"
    )
    assert "subscribe" in problem["detail"]
    assert client.get(f"/api/v1/cards/{card}", headers=world.ana_h).get_json()["state"] is None
    # An answer given while the deck was studied is still acknowledged when sent again.
    body = review_body(world.cards[0])
    assert client.post("/api/v1/reviews", json=body, headers=world.ana_h).status_code == 201
    assert client.delete("/api/v1/decks/alpha/subscription", headers=world.ana_h).status_code == 204
    assert client.post("/api/v1/reviews", json=body, headers=world.ana_h).status_code == 200
    fresh = review_body(world.cards[1])
    assert_problem(client.post("/api/v1/reviews", json=fresh, headers=world.ana_h), 409, "card_id")
    with engine.connect() as conn:
        logs = conn.execute(select(func.count()).select_from(ReviewLog)).scalar_one()
    assert logs == 1


def test_cards_of_other_users_are_404(client: FlaskClient, world: World) -> None:
    card = world.bens_card
    assert_problem(client.get(f"/api/v1/cards/{card}", headers=world.ana_h), 404)
    assert_problem(client.post("/api/v1/reviews", json=review_body(card), headers=world.ana_h), 404)
    for missing in (10**6, 2**31, 10**30):
        assert_problem(client.get(f"/api/v1/cards/{missing}", headers=world.ana_h), 404)
    r = client.get(f"/api/v1/cards/{card}", headers=world.ben_h)
    assert r.status_code == 200
    assert r.get_json()["card"]["deck"] == "bens" and r.get_json()["state"] is None


def test_card_view(client: FlaskClient, world: World) -> None:
    client.put("/api/v1/decks/alpha/subscription", json={"locale": "es"}, headers=world.ana_h)
    body = client.get(f"/api/v1/cards/{world.cards[2]}", headers=world.ana_h).get_json()
    assert body["card"]["locale"] == "es" and body["card"]["front"] == "alpha q3 es"
    assert set(body["card"]["translations"]) == {"en", "es"}
    assert body["card"]["retired"] is False and body["state"] is None
