"""Custom study through the API and the web: each mode's cards, real answers (except preview),
and precise refusals that write nothing."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta
from typing import Any

import pytest
from flask.testing import FlaskClient
from fsrs import State
from sqlalchemy import Engine, func, select

from flashcards.people.accounts import user_clock
from flashcards.srs import card_actions, custom_study, queue
from flashcards.srs.days import study_date
from flashcards.storage.engine import transaction
from flashcards.storage.models import (
    Card,
    CustomStudySession,
    ReviewLog,
    ReviewState,
    Subscription,
)
from flashcards.storage.schema import utcnow

from . import factories as f
from .web_helpers import csrf


class Shelf:
    """Ana studies deck 'cs' (6 cards): c01 is due in 3 days, c02 is due today, c03 was
    forgotten yesterday, c04-c06 are new and c05 is tagged 'Verbs'. Ben owns 'bens'."""

    def __init__(self, engine: Engine) -> None:
        now = self.now = utcnow()
        with transaction(engine) as s:
            self.ana = f.make_user(s, "ana@example.com")
            self.h = {"Authorization": f"Bearer {f.make_token(s, self.ana)}"}
            ben = f.make_user(s)
            f.make_deck(s, "bens", 1, owner_user_id=ben)
            f.make_deck(s, "other", 1)
            deck = f.make_deck(s, "cs", 6)
            f.subscribe(s, self.ana, deck)
            self.deck = deck.id
            self.today = study_date(now, *user_clock(s, self.ana))
            self.c = f.card_ids(s, deck.id)
            s.get_one(Card, self.c[4]).tags = ["grammar", "Verbs"]
            old = now - timedelta(days=20)
            f.set_state(
                s,
                self.ana,
                self.c[0],
                state=State.Review,
                due=now + timedelta(days=3),
                introduced_at=old,
                last_review=old,
            )
            f.set_state(
                s,
                self.ana,
                self.c[1],
                state=State.Review,
                due=now - timedelta(hours=1),
                introduced_at=old,
                last_review=old,
            )
            f.set_state(
                s,
                self.ana,
                self.c[2],
                state=State.Review,
                due=now - timedelta(days=2),
                introduced_at=old,
                last_review=old,
            )
            f.answer(s, self.ana, self.c[2], "again", now=now - timedelta(days=1))


@pytest.fixture
def shelf(engine: Engine) -> Shelf:
    return Shelf(engine)


def start(client: FlaskClient, shelf: Shelf, **body: Any) -> Any:
    return client.put("/api/v1/custom-study", json=body, headers=shelf.h)


def next_id(client: FlaskClient, shelf: Shelf) -> int | None:
    r = client.get("/api/v1/custom-study/next", headers=shelf.h)
    if r.status_code == 204:
        return None
    assert r.status_code == 200, r.get_json()
    return int(r.get_json()["card"]["id"])


def answer(client: FlaskClient, shelf: Shelf, card_id: int, rating: str = "good") -> None:
    body = {"card_id": card_id, "rating": rating, "review_id": str(uuid.uuid4())}
    assert client.post("/api/v1/reviews", json=body, headers=shelf.h).status_code == 201


def logs(engine: Engine, shelf: Shelf) -> int:
    with transaction(engine) as s:
        return s.scalar(select(func.count()).where(ReviewLog.user_id == shelf.ana)) or 0


def test_study_ahead_shows_cards_due_within_the_days_and_answers_count(
    client: FlaskClient, engine: Engine, shelf: Shelf
) -> None:
    r = start(client, shelf, mode="ahead", days=1)
    assert r.status_code == 201 and r.get_json()["mode"] == "ahead" and r.get_json()["done"] == 0
    assert next_id(client, shelf) == shelf.c[1]  # due today; c01, in 3 days, is not within 1
    r = start(client, shelf, mode="ahead", days=5)
    body = client.get("/api/v1/custom-study/next", headers=shelf.h).get_json()
    assert body["card"]["id"] == shelf.c[1] and body["intervals"]["good"] > 0
    before = logs(engine, shelf)
    answer(client, shelf, shelf.c[1])
    assert next_id(client, shelf) == shelf.c[0]
    answer(client, shelf, shelf.c[0])
    assert next_id(client, shelf) is None
    assert logs(engine, shelf) == before + 2  # real answers
    assert client.get("/api/v1/custom-study", headers=shelf.h).get_json()["done"] == 2


def test_forgotten_cards_of_the_last_days(client: FlaskClient, shelf: Shelf) -> None:
    assert start(client, shelf, mode="forgotten", days=2).status_code == 201
    assert next_id(client, shelf) == shelf.c[2]
    answer(client, shelf, shelf.c[2])
    assert next_id(client, shelf) is None
    # Forgotten yesterday is outside "today only".
    start(client, shelf, mode="forgotten", days=1)
    assert next_id(client, shelf) is None


def limits(engine: Engine, shelf: Shelf, *, new: int, reviews: int) -> None:
    with transaction(engine) as s:
        sub = s.get_one(Subscription, (shelf.ana, shelf.deck))
        sub.new_per_day, sub.reviews_per_day = new, reviews


def counts(client: FlaskClient, shelf: Shelf) -> tuple[int, int]:
    """The deck's new and review cards left today, as the daily queue counts them."""
    r = client.get("/api/v1/study/next?deck=cs", headers=shelf.h)
    assert r.status_code == 200, r.get_json()
    found = r.get_json()["counts"]
    return found["new"], found["review"]


def test_extra_new_cards_add_on_top_of_todays_limit_and_start_no_session(
    client: FlaskClient, engine: Engine, shelf: Shelf
) -> None:
    limits(engine, shelf, new=1, reviews=200)
    assert counts(client, shelf) == (1, 1)
    answer(client, shelf, shelf.c[3])  # today's one new card: c04
    assert counts(client, shelf) == (0, 1)
    assert start(client, shelf, mode="ahead", days=1).status_code == 201
    r = start(client, shelf, mode="extra_new", deck="cs", amount=1)
    assert r.status_code == 200, r.get_json()
    assert r.get_json() == {
        "deck": "cs", "day": shelf.today.isoformat(), "extra_new": 1, "extra_reviews": 0,
        "new": 1, "review": 1,
    }  # fmt: skip
    assert counts(client, shelf) == (1, 1)
    # Asked again the same day: the numbers add up (c05 and c06 are the new cards left).
    r = start(client, shelf, mode="extra_new", deck="cs", amount=5)
    assert r.get_json()["extra_new"] == 6 and r.get_json()["new"] == 2
    assert counts(client, shelf) == (2, 1)
    # The session before is still the one going.
    assert client.get("/api/v1/custom-study", headers=shelf.h).get_json()["mode"] == "ahead"
    with transaction(engine) as s:
        assert s.scalar(select(func.count()).select_from(CustomStudySession)) == 1


def test_extra_reviews_add_on_top_of_todays_limit(
    client: FlaskClient, engine: Engine, shelf: Shelf
) -> None:
    limits(engine, shelf, new=20, reviews=0)
    assert counts(client, shelf) == (3, 0)
    r = start(client, shelf, mode="extra_review", deck="cs", amount=5)
    assert r.status_code == 200
    assert r.get_json()["extra_reviews"] == 5 and r.get_json()["review"] == 1
    assert counts(client, shelf) == (3, 1)  # c02, due today
    with transaction(engine) as s:
        assert s.get(CustomStudySession, shelf.ana) is None


def test_extended_limits_count_for_their_study_day_only(engine: Engine, shelf: Shelf) -> None:
    with transaction(engine) as s:
        sub = s.get_one(Subscription, (shelf.ana, shelf.deck))
        sub.new_per_day, sub.reviews_per_day = 0, 0
        clock = user_clock(s, shelf.ana)
        tomorrow = shelf.now + timedelta(days=1)
        custom_study.extend_limits(s, shelf.ana, shelf.deck, 2, 1, today=shelf.today)
        now_counts = queue.counts_by_deck(s, shelf.ana, now=shelf.now, clock=clock)
        assert (now_counts[shelf.deck].new, now_counts[shelf.deck].review) == (2, 1)
        later = queue.counts_by_deck(s, shelf.ana, now=tomorrow, clock=clock)[shelf.deck]
        assert (later.new, later.review) == (0, 0)
        # Extended on a later day: yesterday's extra cards are not carried over.
        extended = custom_study.extend_limits(
            s, shelf.ana, shelf.deck, 1, 0, today=study_date(tomorrow, *clock)
        )
        assert (extended.extra_new, extended.extra_reviews) == (1, 0)
        later = queue.counts_by_deck(s, shelf.ana, now=tomorrow, clock=clock)[shelf.deck]
        assert (later.new, later.review) == (1, 0)
        # However often it is asked, a day's extra stays within one request's largest amount.
        top = custom_study.AMOUNTS[1]
        for _ in range(3):
            extended = custom_study.extend_limits(
                s, shelf.ana, shelf.deck, top, top, today=study_date(tomorrow, *clock)
            )
        assert (extended.extra_new, extended.extra_reviews) == (top, top)


def test_preview_schedules_nothing_and_moves_on_once_per_card(
    client: FlaskClient, engine: Engine, shelf: Shelf
) -> None:
    assert start(client, shelf, mode="preview", deck="cs", amount=2).status_code == 201
    body = client.get("/api/v1/custom-study/next", headers=shelf.h).get_json()
    assert body["card"]["id"] == shelf.c[3] and body["intervals"] is None
    before = logs(engine, shelf)
    for _ in range(2):  # a resend moves nothing more
        r = client.post(
            "/api/v1/custom-study/previewed", json={"card_id": shelf.c[3]}, headers=shelf.h
        )
        assert r.status_code == 200 and r.get_json()["done"] == 1
    assert next_id(client, shelf) == shelf.c[4]
    client.post("/api/v1/custom-study/previewed", json={"card_id": shelf.c[4]}, headers=shelf.h)
    assert next_id(client, shelf) is None
    assert logs(engine, shelf) == before
    with transaction(engine) as s:
        new_states = s.scalar(
            select(func.count()).where(
                ReviewState.user_id == shelf.ana, ReviewState.card_id.in_(shelf.c[3:])
            )
        )
    assert new_states == 0


def test_suspended_and_buried_cards_stay_out_of_every_kind_of_session(
    client: FlaskClient, engine: Engine, shelf: Shelf
) -> None:
    # As Anki fills a filtered deck: c04 (new) suspended, c05 (new, tagged) buried today, c02
    # (due) buried until today, which is over.
    with transaction(engine) as s:
        card_actions.suspend(s, shelf.ana, [shelf.c[3]], now=shelf.now)
        card_actions.bury(s, shelf.ana, [shelf.c[4]], now=shelf.now)
        card_actions.bury(s, shelf.ana, [shelf.c[1]], now=shelf.now - timedelta(days=1))
    assert start(client, shelf, mode="preview", deck="cs", amount=5).status_code == 201
    assert next_id(client, shelf) == shelf.c[5]  # not c04 nor c05
    assert start(client, shelf, mode="tag", tag="verbs").status_code == 409  # only c05
    assert start(client, shelf, mode="ahead", days=5).status_code == 201
    assert next_id(client, shelf) == shelf.c[1]  # back today
    with transaction(engine) as s:
        card_actions.suspend(s, shelf.ana, [shelf.c[2]], now=shelf.now)
    assert start(client, shelf, mode="forgotten", days=2).status_code == 409  # only c03


def test_cards_by_tag(client: FlaskClient, shelf: Shelf) -> None:
    assert start(client, shelf, mode="tag", tag="verbs").status_code == 201
    assert next_id(client, shelf) == shelf.c[4]
    answer(client, shelf, shelf.c[4])
    assert next_id(client, shelf) is None


def test_cards_by_flag(client: FlaskClient, engine: Engine, shelf: Shelf) -> None:
    with transaction(engine) as s:
        # c01 (a review card) and c06 (new) red, c04 red but suspended, c05 blue.
        card_actions.set_flag(s, shelf.ana, [shelf.c[0], shelf.c[3], shelf.c[5]], 1, now=shelf.now)
        card_actions.set_flag(s, shelf.ana, [shelf.c[4]], 4, now=shelf.now)
        card_actions.suspend(s, shelf.ana, [shelf.c[3]], now=shelf.now)
    r = start(client, shelf, mode="flag", flag=1)
    assert r.status_code == 201 and r.get_json()["flag"] == 1
    assert next_id(client, shelf) == shelf.c[0]
    answer(client, shelf, shelf.c[0])  # a real answer
    assert next_id(client, shelf) == shelf.c[5]
    answer(client, shelf, shelf.c[5])
    assert next_id(client, shelf) is None
    assert client.get("/api/v1/custom-study", headers=shelf.h).get_json()["done"] == 2
    assert start(client, shelf, mode="flag", flag=4).status_code == 201
    assert next_id(client, shelf) == shelf.c[4]


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"mode": "sideways"}, 422, "mode"),
        ({"mode": "ahead"}, 422, "days"),
        ({"mode": "ahead", "days": 0}, 422, "days"),
        ({"mode": "ahead", "days": "3"}, 422, "days"),
        ({"mode": "extra_new", "amount": 3}, 422, "deck"),
        ({"mode": "extra_new", "deck": "cs"}, 422, "amount"),
        ({"mode": "preview", "deck": "cs", "amount": 10000}, 422, "amount"),
        ({"mode": "tag"}, 422, "tag"),
        ({"mode": "tag", "tag": "x" * 101}, 422, "tag"),
        ({"mode": "flag"}, 422, "flag"),
        ({"mode": "flag", "flag": 0}, 422, "flag"),
        ({"mode": "flag", "flag": 8}, 422, "flag"),
        ({"mode": "flag", "flag": "1"}, 422, "flag"),
        ({"mode": "extra_new", "deck": "other", "amount": 3}, 409, "deck"),
        ({"mode": "extra_new", "deck": "bens", "amount": 3}, 404, None),
        ({"mode": "extra_new", "deck": "nope", "amount": 3}, 404, None),
        # Nothing to show: no session (Anki's "no cards matched").
        ({"mode": "tag", "tag": "nowhere"}, 409, None),
        ({"mode": "flag", "flag": 7}, 409, None),
    ],
)
def test_bad_requests_are_refused_and_write_nothing(
    client: FlaskClient, engine: Engine, shelf: Shelf, body: dict[str, Any], status: int,
    field: str | None,
) -> None:  # fmt: skip
    r = start(client, shelf, **body)
    assert r.status_code == status, r.get_json()
    assert r.content_type == "application/problem+json"
    if field is not None:
        assert r.get_json()["field"] == field
    with transaction(engine) as s:
        assert s.get(CustomStudySession, shelf.ana) is None


def test_no_session_is_404_and_ending_removes_it(client: FlaskClient, shelf: Shelf) -> None:
    for method, path in (
        ("get", "/api/v1/custom-study"),
        ("get", "/api/v1/custom-study/next"),
        ("delete", "/api/v1/custom-study"),
    ):
        r = getattr(client, method)(path, headers=shelf.h)
        assert r.status_code == 404 and r.get_json()["type"].endswith("/no-custom-study")
    start(client, shelf, mode="ahead", days=1)
    # A session that would show nothing leaves the one before as it was.
    r = start(client, shelf, mode="tag", tag="nowhere")
    assert r.status_code == 409 and r.get_json()["type"].endswith("/no-cards-match")
    assert client.get("/api/v1/custom-study", headers=shelf.h).get_json()["mode"] == "ahead"
    r = client.post("/api/v1/custom-study/previewed", json={"card_id": 1}, headers=shelf.h)
    assert r.status_code == 422  # not a preview
    assert client.delete("/api/v1/custom-study", headers=shelf.h).status_code == 204
    assert client.get("/api/v1/custom-study", headers=shelf.h).status_code == 404


# The web page.

QUESTION = re.compile(r'<h1 id="question"[^>]*>([^<]+)</h1>')


def sign_in(client: FlaskClient) -> None:
    form = {"csrf_token": csrf(client), "email": "ana@example.com", "password": f.PASSWORD}
    assert client.post("/signin", data=form).status_code == 302


def test_the_web_page_starts_a_session_answers_and_ends_it(
    client: FlaskClient, engine: Engine, shelf: Shelf
) -> None:
    sign_in(client)
    assert "/study/custom" in client.get("/").get_data(as_text=True)  # linked from the library
    page = client.get("/study/custom").get_data(as_text=True)
    assert 'name="mode" value="forgotten"' in page and '<option value="cs"' in page
    assert 'value="bens"' not in page  # only decks she studies
    # As Anki's is the current deck's: the only deck she studies is chosen (or the deck a
    # study page's link names); a flag is chosen from the start (a session of no flag is none).
    assert '<option value="cs" selected>' in page
    assert '<option value="">—</option>' not in page and '<option value="1" ' in page
    token = csrf(client, "/study/custom")
    r = client.post("/study/custom", data={"csrf_token": token, "mode": "ahead", "days": "5"})
    assert r.status_code == 303
    page = client.get("/study/custom?show=1").get_data(as_text=True)
    assert QUESTION.search(page)[1] == "cs q2 en"  # type: ignore[index]
    review_id = re.search(r'name="review_id" value="([^"]+)"', page)[1]  # type: ignore[index]
    before = logs(engine, shelf)
    form = {"csrf_token": token, "card_id": str(shelf.c[1]), "rating": "3", "review_id": review_id}
    assert client.post("/study/custom/answer", data=form).status_code == 303
    assert logs(engine, shelf) == before + 1
    page = client.get("/study/custom").get_data(as_text=True)
    assert QUESTION.search(page)[1] == "cs q1 en"  # type: ignore[index]
    # The study page's controls, each coming back to the session: undo...
    undo = re.search(r'id="undo-form".*?name="review_id" value="([^"]+)"', page, re.S)
    assert undo and undo[1] == review_id and "Undo answer" in page
    form = {"csrf_token": token, "review_id": undo[1], "back": "custom"}
    r = client.post("/study/undo", data=form)
    assert r.status_code == 303 and r.headers["Location"] == "/study/custom"
    assert logs(engine, shelf) == before
    page = client.get("/study/custom").get_data(as_text=True)
    assert QUESTION.search(page)[1] == "cs q2 en"  # type: ignore[index]
    # ...burying the card shown (the next one comes up)...
    form = {"csrf_token": token, "card_id": str(shelf.c[1]), "card_action": "bury",
            "back": "custom"}  # fmt: skip
    r = client.post("/study/card", data=form)
    assert r.status_code == 303 and r.headers["Location"] == "/study/custom"
    page = client.get("/study/custom").get_data(as_text=True)
    assert QUESTION.search(page)[1] == "cs q1 en"  # type: ignore[index]
    # ...the actions form comes back to the session too (its edit page: test_own_deck_editing).
    assert 'id="card-actions"' in page and 'name="back" value="custom"' in page
    assert client.post("/study/custom/end", data={"csrf_token": token}).status_code == 303
    assert 'name="mode"' in client.get("/study/custom").get_data(as_text=True)


def test_the_web_page_previews_and_refuses_bad_forms(
    client: FlaskClient, engine: Engine, shelf: Shelf
) -> None:
    sign_in(client)
    token = csrf(client, "/study/custom")
    for form, message in (
        ({"mode": "extra_new", "deck": "", "amount": "3"}, "Choose one of the decks you study."),
        ({"mode": "ahead", "days": "many"}, "Give a number of days from 1 to 365."),
        ({"mode": "preview", "deck": "cs", "amount": "0"}, "Give a number of cards"),
        ({"mode": "flag", "flag": ""}, "Choose a flag."),
        ({"mode": "flag", "flag": "9"}, "Choose a flag."),
        ({"mode": "tag", "tag": " "}, "Type the tag whose cards you want to study."),
        ({"mode": "tag", "tag": "t" * 101}, "A tag has at most 100 characters."),
    ):
        r = client.post("/study/custom", data={"csrf_token": token, **form})
        assert r.status_code == 422 and message in r.get_data(as_text=True)
        with transaction(engine) as s:
            assert s.get(CustomStudySession, shelf.ana) is None
    assert client.post("/study/custom", data={"mode": "ahead", "days": "1"}).status_code == 400
    # A session that would show nothing is not started, and says so on the form.
    r = client.post("/study/custom", data={"csrf_token": token, "mode": "tag", "tag": "none"})
    assert r.status_code == 409
    assert "No cards match what you chose: there is nothing to study." in r.get_data(as_text=True)
    assert 'value="none"' in r.get_data(as_text=True)
    with transaction(engine) as s:
        assert s.get(CustomStudySession, shelf.ana) is None
    # A preview without a number takes the default.
    form = {"csrf_token": token, "mode": "preview", "deck": "cs", "amount": ""}
    assert client.post("/study/custom", data=form).status_code == 303
    # A refused session leaves the one before as it was.
    r = client.post("/study/custom", data={"csrf_token": token, "mode": "tag", "tag": "none"})
    assert r.status_code == 409
    with transaction(engine) as s:
        kept = s.get(CustomStudySession, shelf.ana)
        assert kept is not None and kept.mode == "preview"
    form = {"csrf_token": token, "mode": "preview", "deck": "cs", "amount": "3"}
    assert client.post("/study/custom", data=form).status_code == 303
    page = client.get("/study/custom?show=1").get_data(as_text=True)
    assert QUESTION.search(page)[1] == "cs q4 en" and "Next card" in page  # type: ignore[index]
    form = {"csrf_token": token, "card_id": str(shelf.c[3])}
    assert client.post("/study/custom/next", data=form).status_code == 303
    page = client.get("/study/custom").get_data(as_text=True)
    assert QUESTION.search(page)[1] == "cs q5 en"  # type: ignore[index]
    assert logs(engine, shelf) == 1  # the forgotten answer of the set-up only


def test_the_web_page_studies_by_flag(client: FlaskClient, engine: Engine, shelf: Shelf) -> None:
    with transaction(engine) as s:
        card_actions.set_flag(s, shelf.ana, [shelf.c[4]], 3, now=shelf.now)
    sign_in(client)
    page = client.get("/study/custom").get_data(as_text=True)
    assert 'name="mode" value="flag"' in page and '<option value="3" >Green</option>' in page
    token = csrf(client, "/study/custom")
    form = {"csrf_token": token, "mode": "flag", "flag": "3"}
    assert client.post("/study/custom", data=form).status_code == 303
    page = client.get("/study/custom").get_data(as_text=True)
    assert QUESTION.search(page)[1] == "cs q5 en"  # type: ignore[index]
    assert "Study the cards with a flag · Green" in page


def test_the_web_page_raises_todays_limits_and_the_pages_count_them(
    client: FlaskClient, engine: Engine, shelf: Shelf
) -> None:
    limits(engine, shelf, new=0, reviews=0)
    sign_in(client)
    library = client.get("/").get_data(as_text=True)
    assert '<li class="count-new"><span class="num">0</span> new</li>' in library
    token = csrf(client, "/study/custom")
    form = {"csrf_token": token, "mode": "extra_new", "deck": "cs", "amount": "2"}
    r = client.post("/study/custom", data=form)
    assert r.status_code == 303 and r.headers["Location"].endswith("/study?deck=cs")
    page = client.get("/study?deck=cs").get_data(as_text=True)
    assert "This deck shows 2 new cards more than its daily limit today." in page
    assert '<li class="count-new"><span class="num">2</span> new</li>' in page
    form = {"csrf_token": token, "mode": "extra_review", "deck": "cs", "amount": "1"}
    assert client.post("/study/custom", data=form).status_code == 303
    library = client.get("/").get_data(as_text=True)
    assert '<li class="count-new"><span class="num">2</span> new</li>' in library
    assert '<li class="count-review"><span class="num">1</span> to review</li>' in library
    with transaction(engine) as s:
        assert s.get(CustomStudySession, shelf.ana) is None
