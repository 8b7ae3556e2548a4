"""The API tokens page and the stats page (SVG charts with text alternatives)."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from flask.testing import FlaskClient
from fsrs import Rating
from sqlalchemy import Engine, insert, select

from flashcards.people.accounts import create_user
from flashcards.srs import deck_settings, queue, stats
from flashcards.srs.days import day_bounds
from flashcards.srs.study import answer
from flashcards.srs.subscriptions import find_visible_deck, subscribe, unsubscribe
from flashcards.storage.engine import transaction
from flashcards.storage.models import Card, ReviewLog, ReviewState, SchedulerSettings, User

from .web_helpers import answer_shown_card, csrf, sign_up
from .web_helpers import subscribe as web_subscribe


def test_tokens_are_shown_once_work_on_the_api_and_can_be_revoked(
    client: FlaskClient,
) -> None:
    sign_up(client)
    r = client.post("/tokens", data={"csrf_token": csrf(client, "/tokens"), "name": "phone"})
    assert r.status_code == 201
    token = re.search(r'<code id="new-token">([^<]+)</code>', r.get_data(as_text=True))
    assert token
    api = {"Authorization": f"Bearer {token[1]}"}
    assert client.get("/api/v1/me", headers=api).status_code == 200
    page = client.get("/tokens").get_data(as_text=True)
    assert "phone" in page and token[1] not in page
    action = re.search(r'action="(/tokens/\d+/revoke)"', page)
    assert action
    client.post(action[1], data={"csrf_token": csrf(client, "/tokens")})
    assert client.get("/api/v1/me", headers=api).status_code == 401


def test_stats_page_renders_charts_with_text_alternatives(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client, language="ko")
    web_subscribe(client, "ko")
    page = client.get("/study?show=1").get_data(as_text=True)
    form = {
        "csrf_token": csrf(client, "/study"),
        "card_id": re.search(r'name="card_id" value="(\d+)"', page)[1],  # type: ignore[index]
        "review_id": re.search(r'name="review_id" value="([^"]+)"', page)[1],  # type: ignore[index]
        "rating": "3",
    }
    client.post("/study/answer", data=form)
    page = client.get("/stats").get_data(as_text=True)
    assert page.count("<svg") == 5  # two bar charts, each with its axis for phones; a heatmap
    assert page.count('role="group"') == 3
    assert "<title" in page and "<desc" in page and "<table>" in page
    assert "일일" in page or "하루" in page or "복습" in page
    assert 'style="' not in page


def test_stats_counts_are_written_as_the_pages_language_writes_numbers(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client, language="es")
    web_subscribe(client, "es")
    answer_shown_card(client, "3")
    with transaction(loaded_engine) as s:
        log = s.scalars(select(ReviewLog)).one()
        values = {c.name: getattr(log, c.name) for c in ReviewLog.__table__.c if c.name != "id"}
        s.execute(
            insert(ReviewLog),
            [{**values, "review_id": str(uuid.uuid4())} for _ in range(1_233)],
        )
    page = client.get("/stats").get_data(as_text=True)
    assert "1.234 repasos en los últimos 90 días" in page, page


def _user(engine: Engine, tz: str) -> int:
    with transaction(engine) as s:
        user = create_user(
            s, f"{tz.replace('/', '.')}@example.com", "password1", now=T0, timezone=tz
        )
        subscribe(s, user.id, find_visible_deck(s, user.id, "eks-model-training"), "en", now=T0)
        return user.id


T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def test_stats_count_in_the_users_days(loaded_engine: Engine) -> None:
    uid = _user(loaded_engine, "Asia/Seoul")
    # 18:30 UTC on 2 March is 03:30 on 3 March in Seoul: still the study day of 2 March.
    late = datetime(2026, 3, 2, 18, 30, tzinfo=UTC)
    # 19:30 UTC is 04:30 in Seoul: the study day of 3 March.
    next_day = datetime(2026, 3, 2, 19, 30, tzinfo=UTC)
    with transaction(loaded_engine) as s:
        answer(s, uid, 1, Rating.Good, "00000000-0000-4000-8000-000000000001", now=late)
        answer(s, uid, 2, Rating.Again, "00000000-0000-4000-8000-000000000002", now=next_day)
    now = datetime(2026, 3, 3, 12, 0, tzinfo=UTC)
    with transaction(loaded_engine) as s:
        daily = stats.reviews_per_day(s, uid, now=now)
        assert len(daily) == 90
        assert [(d.day.isoformat(), d.count) for d in daily[-2:]] == [
            ("2026-03-02", 1),
            ("2026-03-03", 1),
        ]
        by_state = stats.cards_by_state(s, uid)
        assert by_state == {"new": 13, "learning": 2, "review": 0, "relearning": 0}
        forecast = stats.due_forecast(s, uid, now=now)
        assert len(forecast) == 30 and forecast[0].count == 2
        assert stats.next_due(s, uid, now=now) is not None
        hardest = stats.hardest_cards(s, uid)
        # The card answered Again; the one answered Good is not hard.
        assert [h.card_id for h in hardest] == [2] and hardest[0].question
        assert stats.retention_by_week(s, uid, now=now)[-1].answers == 0
    with transaction(loaded_engine) as s:
        unsubscribe(s, uid, find_visible_deck(s, uid, "eks-model-training"))
    with transaction(loaded_engine) as s:
        # A deck left is gone from the counts and from the hardest cards alike.
        assert stats.cards_by_state(s, uid) == {"new": 0, "learning": 0, "review": 0,
                                                 "relearning": 0}  # fmt: skip
        assert stats.hardest_cards(s, uid) == []


def test_true_retention_counts_review_state_answers_only(loaded_engine: Engine) -> None:
    uid = _user(loaded_engine, "UTC")
    t = T0
    with transaction(loaded_engine) as s:
        s.get(User, uid)
        answer(s, uid, 1, Rating.Easy, "00000000-0000-4000-8000-00000000000a", now=t)
        answer(s, uid, 2, Rating.Easy, "00000000-0000-4000-8000-00000000000b", now=t)
    later = t + timedelta(days=40)
    with transaction(loaded_engine) as s:
        answer(s, uid, 1, Rating.Again, "00000000-0000-4000-8000-00000000000c", now=later)
        answer(s, uid, 2, Rating.Good, "00000000-0000-4000-8000-00000000000d", now=later)
    with transaction(loaded_engine) as s:
        week = stats.retention_by_week(s, uid, now=later)[-1]
        assert (week.answers, week.passed, week.rate) == (2, 1, 0.5)


def test_stats_days_stay_whole_across_a_dst_change(loaded_engine: Engine) -> None:
    # Madrid leaves summer time on 25 October 2026 (03:00 CEST becomes 02:00 CET): a span of
    # 29 days of 24 hours across it ends an hour short of 29 study days.
    uid = _user(loaded_engine, "Europe/Madrid")
    madrid = ZoneInfo("Europe/Madrid")
    with transaction(loaded_engine) as s:
        answered = datetime(2026, 10, 22, 12, 0, tzinfo=madrid).astimezone(UTC)
        answer(s, uid, 1, Rating.Good, "00000000-0000-4000-8000-0000000000d1", now=answered)
        state = s.get(ReviewState, (uid, 1))
        assert state is not None
        state.due = datetime(2026, 10, 25, 12, 0, tzinfo=madrid).astimezone(UTC)  # 30th day
    with transaction(loaded_engine) as s:
        forecast = stats.due_forecast(
            s, uid, now=datetime(2026, 9, 26, 4, 30, tzinfo=madrid).astimezone(UTC)
        )
        assert (forecast[-1].day.isoformat(), forecast[-1].count) == ("2026-10-25", 1)
        # 03:30 on 21 November is still the study day of 20 November; 30 days back is 22 October.
        history = stats.reviews_per_day(
            s, uid, now=datetime(2026, 11, 21, 3, 30, tzinfo=madrid).astimezone(UTC), days=30
        )
        assert (history[0].day.isoformat(), history[0].count) == ("2026-10-22", 1)


def test_next_due_counts_what_todays_limits_hold_back(loaded_engine: Engine) -> None:
    uid = _user(loaded_engine, "UTC")
    with transaction(loaded_engine) as s:
        deck = find_visible_deck(s, uid, "eks-model-training")
        cards = s.scalars(select(Card.id).where(Card.deck_id == deck.id)).all()
        for i, card in enumerate(cards):
            review_id = f"00000000-0000-4000-8000-{i:012d}"
            answer(s, uid, card, Rating.Easy, review_id, now=T0)
    later = T0 + timedelta(days=400)  # every card is due again, none is new
    with transaction(loaded_engine) as s:
        deck_settings.set_deck_overrides(s, uid, deck.id, {"reviews_per_day": 0})
        card, _counts = queue.next_card(s, uid, now=later)
        assert card is None  # held back by the limit, not finished
        assert stats.next_due(s, uid, now=later) == day_bounds(later, "UTC", 4)[1]


def test_next_due_is_when_the_queue_shows_the_card(loaded_engine: Engine) -> None:
    uid = _user(loaded_engine, "Asia/Seoul")  # the study day starts at 04:00 Seoul time
    with transaction(loaded_engine) as s:
        s.get(SchedulerSettings, uid).learning_steps = [60, 1800]  # type: ignore[union-attr]
        deck = find_visible_deck(s, uid, "eks-model-training")
        deck_settings.set_deck_overrides(s, uid, deck.id, {"new_per_day": 1})
        first, second = s.scalars(select(Card.id).where(Card.deck_id == deck.id)).all()[:2]
        # Good on a new card: its second step, due in 30 minutes.
        learning = answer(
            s, uid, first, Rating.Good, "00000000-0000-4000-8000-000000000001", now=T0
        )
        assert learning.state.due == T0 + timedelta(minutes=30)
        # Shown from 20 minutes before it is due (the learn-ahead), not when it is due.
        assert stats.next_due(s, uid, now=T0) == T0 + timedelta(minutes=10)
        review = answer(s, uid, second, Rating.Easy, "00000000-0000-4000-8000-000000000002", now=T0)
        answer(s, uid, first, Rating.Easy, "00000000-0000-4000-8000-000000000003", now=T0)
    due = review.state.due
    seoul = due.astimezone(ZoneInfo("Asia/Seoul"))
    assert seoul.hour >= 4  # the review is due after the start of its study day
    with transaction(loaded_engine) as s:
        deck_settings.set_deck_overrides(s, uid, deck.id, {"new_per_day": 0})
        # A review card is shown from the start of the study day it is due on.
        expected = day_bounds(min(due, s.get(ReviewState, (uid, first)).due), "Asia/Seoul", 4)[0]  # type: ignore[union-attr]
        assert stats.next_due(s, uid, now=T0 + timedelta(minutes=1)) == expected


def test_a_retired_card_is_not_counted_forecast_or_named_as_next(
    loaded_engine: Engine,
) -> None:
    uid = _user(loaded_engine, "UTC")
    with transaction(loaded_engine) as s:
        deck = find_visible_deck(s, uid, "eks-model-training")
        deck_settings.set_deck_overrides(s, uid, deck.id, {"new_per_day": 0})
        first, second = s.scalars(select(Card.id).where(Card.deck_id == deck.id)).all()[:2]
        answer(s, uid, first, Rating.Again, "00000000-0000-4000-8000-000000000001", now=T0)
        answer(s, uid, second, Rating.Easy, "00000000-0000-4000-8000-000000000002", now=T0)
        before = stats.cards_by_state(s, uid)
        assert (before["learning"], before["review"]) == (1, 1)
        # The deck's file drops the card still in learning: it is retired, never shown again.
        s.get(Card, first).retired_at = T0  # type: ignore[union-attr]
    with transaction(loaded_engine) as s:
        after = stats.cards_by_state(s, uid)
        assert (after["learning"], after["review"]) == (0, 1)
        forecast = stats.due_forecast(s, uid, now=T0)
        assert sum(day.count for day in forecast) == 1
        review_due = s.get(ReviewState, (uid, second)).due  # type: ignore[union-attr]
        # Not the retired card's step in a few minutes: the review card's study day.
        assert stats.next_due(s, uid, now=T0) == day_bounds(review_due, "UTC", 4)[0]
        # Not the retired card, hard as it is (Again); the other is easy, so none.
        assert stats.hardest_cards(s, uid) == []


def test_no_new_cards_a_day_is_said_on_the_done_page(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client)
    web_subscribe(client, "en")
    token = csrf(client, "/decks/eks-model-training")
    client.post(
        "/decks/eks-model-training/settings", data={"csrf_token": token, "new_per_day": "0"}
    )
    page = client.get("/study").get_data(as_text=True)
    assert "All done for now" in page and "allow no new cards" in page
    assert "Subscribe to a deck" not in page and 'id="next-due"' not in page
