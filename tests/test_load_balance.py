"""Load balancing and easy days: the balancer's picks (pure), and previews equal to what is
stored through the API, with settings through the API and the settings page."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from flask.testing import FlaskClient
from fsrs import Rating, State
from sqlalchemy import Engine, select

from flashcards.srs.days import Clock, day_start, study_date
from flashcards.srs.load_balance import (
    NORMAL_WEEK,
    Workload,
    balanced_days,
    day_weights,
    easy_day_factors,
    sibling_factors,
    weighted_pick,
)
from flashcards.srs.scheduling import (
    CardState,
    SchedulerConfig,
    fuzz_range,
    fuzz_seed,
    fuzzed_days,
    review,
)
from flashcards.srs.settings import apply_user_settings
from flashcards.srs.workload import workload
from flashcards.storage.engine import transaction
from flashcards.storage.models import Card, ReviewState, SchedulerSettings, StudyOptions
from flashcards.storage.schema import utcnow

from . import factories as f
from .web_helpers import csrf, settings_form

MONDAY = date(2026, 3, 2)
THURSDAY = 3  # date.weekday()


def flat(count: int) -> Any:
    return lambda low, high: [count] * (high - low + 1)


def week(**days: float) -> tuple[float, ...]:
    names = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    return tuple(days.get(name, 1.0) for name in names)


def test_weighted_pick_takes_the_day_whose_share_holds_the_draw() -> None:
    assert weighted_pick([1, 1, 2], 0.0) == 0
    assert weighted_pick([1, 1, 2], 0.49) == 1  # 1.96 of 4: inside the second day's share
    assert weighted_pick([1, 1, 2], 0.5) == 2
    assert weighted_pick([1, 1, 2], 0.999) == 2


def test_a_days_weight_falls_with_its_due_count_and_its_interval_as_anki_weighs() -> None:
    # Anki's weight: (1 / count)^2.15 x (1 / interval)^3; an empty day weighs 1.
    weights = day_weights(8, [0, 2, 1], [1, 2, 3], NORMAL_WEEK)
    assert weights == [1.0, pytest.approx(0.5**2.15 / 9**3), pytest.approx(1 / 10**3)]


def test_the_interval_term_leans_to_the_earlier_of_two_near_days() -> None:
    # 10 cards due in 4 days, 8 in 5: the squared count and plain interval of Anki's first
    # balancer preferred day 5 (1/400 against 1/320); the current weighting, day 4.
    four, five = day_weights(4, [10, 8], [0, 1], NORMAL_WEEK)
    assert four == pytest.approx(10**-2.15 / 64) and five == pytest.approx(8**-2.15 / 125)
    assert four > five and 1 / 100 / 4 < 1 / 64 / 5


def test_exact_days_chosen_for_given_due_counts_and_seeds() -> None:
    assert fuzz_range(10, 36500) == (8, 12)
    seeds = [fuzz_seed(1, card, 3) for card in range(8)]
    # The same seeds without balancing: the plain fuzz.
    assert [fuzzed_days(10, 36500, s) for s in seeds] == [12, 9, 9, 12, 10, 11, 11, 11]
    one_each = Workload.fixed(MONDAY, NORMAL_WEEK, flat(1))
    assert [fuzzed_days(10, 36500, s, one_each) for s in seeds] == [10, 8, 8, 11, 9, 10, 10, 10]
    # Day 10 empty among busy days: every seed goes there.
    busy = Workload.fixed(MONDAY, NORMAL_WEEK, lambda low, high: [50, 50, 0, 50, 50])
    assert {fuzzed_days(10, 36500, s, busy) for s in seeds} == {10}
    # Deterministic: the preview and the answer that follows draw the same.
    assert fuzzed_days(10, 36500, seeds[0], one_each) == fuzzed_days(10, 36500, seeds[0], one_each)


def test_a_flat_load_and_long_intervals_keep_the_plain_fuzz() -> None:
    def unread(low: int, high: int) -> Sequence[int]:
        raise AssertionError("read the due counts of a range that is not balanced")

    assert balanced_days(10, 8, 12, Workload.fixed(MONDAY, NORMAL_WEEK, flat(0)), 0.3) is None
    assert balanced_days(91, 85, 97, Workload.fixed(MONDAY, NORMAL_WEEK, unread), 0.3) is None
    assert fuzzed_days(2, 36500, "x", Workload.fixed(MONDAY, NORMAL_WEEK, unread)) == 2


def test_easy_days_keep_reviews_off_a_minimum_day() -> None:
    seeds = [fuzz_seed(7, card, 2) for card in range(300)]
    # Days 8..12 from a Monday: Tuesday to Saturday; day 10 is a Thursday.
    assert (MONDAY + timedelta(days=10)).weekday() == THURSDAY
    normal = Workload.fixed(MONDAY, NORMAL_WEEK, flat(3))
    one_each = Workload.fixed(MONDAY, NORMAL_WEEK, flat(1))
    assert 10 in {fuzzed_days(10, 36500, s, one_each) for s in seeds}
    assert 10 in {fuzzed_days(10, 36500, s, normal) for s in seeds}
    minimum = Workload.fixed(MONDAY, week(thu=0.0), flat(3))
    assert 10 not in {fuzzed_days(10, 36500, s, minimum) for s in seeds}
    # An empty day weighs 1 whatever its easy day (Anki's weighting): an empty Thursday draws
    # every card, Minimum or not; with one card due it draws most as a Normal day and next
    # to none as a Minimum one (its weight is tiny, not 0: a range of Minimum days still
    # balances).
    for days in (NORMAL_WEEK, week(thu=0.0)):
        empty = Workload.fixed(MONDAY, days, lambda low, high: [3, 3, 0, 3, 3])
        assert [fuzzed_days(10, 36500, s, empty) for s in seeds].count(10) == 300
    one = [3, 3, 1, 3, 3]
    as_normal = Workload.fixed(MONDAY, NORMAL_WEEK, lambda low, high: one)
    as_minimum = Workload.fixed(MONDAY, week(thu=0.0), lambda low, high: one)
    assert [fuzzed_days(10, 36500, s, as_normal) for s in seeds].count(10) > 180
    assert [fuzzed_days(10, 36500, s, as_minimum) for s in seeds].count(10) < 5


def test_a_reduced_day_is_normal_until_it_holds_more_than_its_half_share() -> None:
    # Reduced between two Normal days: loads 1, 0.5, 1 (total 2.5).
    assert easy_day_factors([1.0, 0.5, 1.0], [4, 1, 4]) == [1.0, 1.0, 1.0]
    assert easy_day_factors([1.0, 0.5, 1.0], [2, 2, 2]) == [1.0, 0.0001, 1.0]
    # Beside a Minimum day (load 0.0001), the other days' share per unit of load is huge.
    assert easy_day_factors([0.0001, 0.5], [1, 5]) == [0.0001, 1.0]
    # Alone in its range: Normal (Anki's 0 / 0 compares false).
    assert easy_day_factors([0.5], [3]) == [1.0]


def test_siblings_days_and_their_neighbours_weigh_less() -> None:
    # Anki's worked example: siblings due on days 2 and 8, a range of days 0 to 10.
    found = sibling_factors(0, 11, [2, 8])
    expected = [0.4, 0.2, 0.0, 0.2, 0.32, 0.36, 0.32, 0.2, 0.0, 0.2, 0.4]
    assert found == [pytest.approx(e, abs=1e-5) for e in expected]
    assert 0 < found[2] < 1e-5  # not 0: a range of such days still balances
    assert sibling_factors(8, 5, [10, 10]) == sibling_factors(8, 5, [10])  # a day counts once
    assert sibling_factors(8, 5, [3, 17]) == [1.0] * 5  # 5 days away: no effect
    # An empty day keeps its full weight beside a sibling, as in Anki.
    assert day_weights(8, [0, 1], [0, 1], NORMAL_WEEK, [8])[0] == 1.0


def test_a_card_keeps_off_its_siblings_day_when_review_siblings_are_buried(engine: Engine) -> None:
    clock = Clock("UTC", 4)
    now = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
    today = study_date(now, *clock)

    def due(day: int) -> datetime:
        return day_start(today + timedelta(days=day), *clock) + timedelta(hours=2)

    with transaction(engine) as s:
        buries, keeps = f.make_user(s), f.make_user(s)
        s.add(StudyOptions(user_id=buries, bury_reviews=True))
        deck = f.make_deck(s, "notes", 10)
        card, sibling, *others = f.card_ids(s, deck.id)
        s.get_one(Card, card).note_key = s.get_one(Card, sibling).note_key = "n1"
        for user in (buries, keeps):
            f.subscribe(s, user, deck)
            # Days 8 to 12: two cards due on each, but day 10, where only the sibling is.
            f.set_state(s, user, sibling, state=State.Review, due=due(10))
            for other, day in zip(others, (8, 8, 9, 9, 11, 11, 12, 12), strict=True):
                f.set_state(s, user, other, state=State.Review, due=due(day))
    draws = [i / 100 for i in range(100)]
    with transaction(engine) as s:
        near = workload(s, buries, now, clock, card)
        loads = near.loads(8, 12)
        assert loads is not None and list(loads.siblings) == [10]
        assert 10 not in {balanced_days(10, 8, 12, near, d) for d in draws}
        # Without the option, the emptiest day draws about half the cards.
        apart = workload(s, keeps, now, clock, card)
        loads = apart.loads(8, 12)
        assert loads is not None and list(loads.siblings) == []
        assert [balanced_days(10, 8, 12, apart, d) for d in draws].count(10) > 30


# Through the database: the preview on a button is what the answer stores.


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


class Learner:
    """A person with one review card due now, whose Good interval is about a month, and
    other cards due on every day of that interval's fuzz range but its last."""

    def __init__(self, engine: Engine, *, load_balancing: bool = True) -> None:
        self.now = utcnow()
        with transaction(engine) as s:
            self.user = f.make_user(s, load_balancing=load_balancing)
            self.headers = bearer(f.make_token(s, self.user))
            deck = f.make_deck(s, "balanced", 60)
            f.subscribe(s, self.user, deck)
            cards = f.card_ids(s, deck.id)
            self.card = cards[0]
            self.clock = Clock(*f.user_day_start(s, self.user))
            self.before = CardState(
                State.Review, None, 10.0, 5.0, self.now - timedelta(hours=1),
                self.now - timedelta(days=10), reps=3,
            )  # fmt: skip
            f.set_state(
                s, self.user, self.card, state=State.Review, due=self.before.due,
                stability=10.0, difficulty=5.0, last_review=self.before.last_review, reps=3,
            )  # fmt: skip
            plain = review(SchedulerConfig(), self.before, Rating.Good, self.now, seed=None,
                           clock=self.clock)  # fmt: skip
            self.interval = (plain.due - self.now).days
            self.low, self.high = fuzz_range(self.interval, 36500)
            self.today = study_date(self.now, *self.clock)
            others = iter(cards[1:])
            for day in range(self.low, self.high):  # the last day of the range stays empty
                due = day_start(self.today + timedelta(days=day), *self.clock)
                for _ in range(4):
                    f.set_state(
                        s, self.user, next(others), state=State.Review,
                        due=due + timedelta(hours=2), introduced_at=self.now - timedelta(days=30),
                    )  # fmt: skip

    def study_day(self, when: datetime) -> int:
        return (study_date(when, *self.clock) - self.today).days

    def sibling_on_the_empty_day(self, engine: Engine) -> None:
        """A sibling of the card falls due on the range's last day, and the person buries
        review siblings."""
        with transaction(engine) as s:
            deck_id = s.get_one(Card, self.card).deck_id
            sibling = f.card_ids(s, deck_id)[-1]
            s.get_one(Card, self.card).note_key = s.get_one(Card, sibling).note_key = "n"
            due = day_start(self.today + timedelta(days=self.high), *self.clock)
            f.set_state(s, self.user, sibling, state=State.Review, due=due + timedelta(hours=2))
            s.add(StudyOptions(user_id=self.user, bury_reviews=True))


def test_the_api_preview_is_the_balanced_day_and_the_answer_stores_it(
    client: FlaskClient, engine: Engine
) -> None:
    learner = Learner(engine)
    assert 3 <= learner.interval <= 60 and learner.high - learner.low >= 2
    r = client.get("/api/v1/study/next", headers=learner.headers)
    assert r.status_code == 200 and r.get_json()["card"]["id"] == learner.card
    good = r.get_json()["intervals"]["good"]
    assert good % 86400 == 0 and good // 86400 == learner.high  # the one empty day
    body = {"card_id": learner.card, "rating": "good", "review_id": str(uuid.uuid4())}
    r = client.post("/api/v1/reviews", json=body, headers=learner.headers)
    assert r.status_code == 201
    with transaction(engine) as s:
        due = s.scalar(
            select(ReviewState.due).where(
                ReviewState.user_id == learner.user, ReviewState.card_id == learner.card
            )
        )
    assert due is not None and learner.study_day(due) == learner.high


def test_a_siblings_day_is_avoided_alike_in_the_preview_and_the_answer(
    client: FlaskClient, engine: Engine
) -> None:
    learner = Learner(engine)
    learner.sibling_on_the_empty_day(engine)
    with transaction(engine) as s:
        seen = workload(s, learner.user, learner.now, learner.clock, learner.card)
        loads = seen.loads(learner.low, learner.high)
        assert loads is not None and list(loads.siblings) == [learner.high]
    r = client.get("/api/v1/study/next", headers=learner.headers)
    assert r.status_code == 200 and r.get_json()["card"]["id"] == learner.card
    good = r.get_json()["intervals"]["good"] // 86400
    # Not the sibling's day, which alone would have drawn some two cards in three.
    assert learner.low <= good < learner.high
    body = {"card_id": learner.card, "rating": "good", "review_id": str(uuid.uuid4())}
    assert client.post("/api/v1/reviews", json=body, headers=learner.headers).status_code == 201
    with transaction(engine) as s:
        due = s.scalar(
            select(ReviewState.due).where(
                ReviewState.user_id == learner.user, ReviewState.card_id == learner.card
            )
        )
    assert due is not None and learner.study_day(due) == good


def test_with_load_balancing_off_the_plain_fuzz_is_previewed_and_stored(
    client: FlaskClient, engine: Engine
) -> None:
    learner = Learner(engine, load_balancing=False)
    plain = fuzzed_days(learner.interval, 36500, fuzz_seed(learner.user, learner.card, 3))
    r = client.get("/api/v1/study/next", headers=learner.headers)
    assert r.get_json()["intervals"]["good"] == plain * 86400
    body = {"card_id": learner.card, "rating": "good", "review_id": str(uuid.uuid4())}
    assert client.post("/api/v1/reviews", json=body, headers=learner.headers).status_code == 201
    with transaction(engine) as s:
        due = s.scalar(select(ReviewState.due).where(ReviewState.card_id == learner.card))
    assert due is not None and learner.study_day(due) == plain


def test_the_api_changes_load_balancing_and_easy_days_and_refuses_bad_ones(
    client: FlaskClient, engine: Engine
) -> None:
    with transaction(engine) as s:
        user = f.make_user(s)
        headers = bearer(f.make_token(s, user))
    me = client.get("/api/v1/me", headers=headers).get_json()
    assert me["load_balancing"] is True and me["easy_days"] == ["normal"] * 7
    days = ["normal", "normal", "reduced", "normal", "normal", "minimum", "minimum"]
    r = client.patch(
        "/api/v1/me", json={"load_balancing": False, "easy_days": days}, headers=headers
    )
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["load_balancing"] is False and r.get_json()["easy_days"] == days
    with transaction(engine) as s:
        row = s.get(SchedulerSettings, user)
        assert row is not None and row.easy_days == [1.0, 1.0, 0.5, 1.0, 1.0, 0.0, 0.0]
    for bad in (
        {"easy_days": ["normal"] * 6},
        {"easy_days": ["normal"] * 6 + ["easy"]},
        {"easy_days": "normal"},
        {"load_balancing": "yes"},
        {"load_balancing": None},
    ):
        r = client.patch("/api/v1/me", json=bad, headers=headers)
        assert r.status_code == 422, (bad, r.get_json())
        assert r.content_type == "application/problem+json"
        assert r.get_json()["field"] == next(iter(bad))
    assert client.get("/api/v1/me", headers=headers).get_json()["easy_days"] == days


def sign_in(client: FlaskClient, email: str) -> None:
    form = {"csrf_token": csrf(client), "email": email, "password": f.PASSWORD}
    assert client.post("/signin", data=form).status_code == 302


def test_the_settings_page_saves_easy_days_and_load_balancing(
    client: FlaskClient, engine: Engine
) -> None:
    with transaction(engine) as s:
        user = f.make_user(s, "lb@example.com")
    sign_in(client, "lb@example.com")
    page = client.get("/settings").get_data(as_text=True)
    assert 'name="load_balancing" value="1"' in page and "checked" in page
    assert page.count('<option value="minimum"') == 7 and "Thursday" in page
    # Sunday Minimum, box unchecked: balancing off.
    unchecked = settings_form(client, easy_days_6="minimum")
    del unchecked["load_balancing"]
    r = client.post("/settings", data=unchecked)
    assert r.status_code == 302
    with transaction(engine) as s:
        row = s.get(SchedulerSettings, user)
        assert row is not None and row.load_balancing is False
        assert row.easy_days == [1.0] * 6 + [0.0]
    r = client.post("/settings", data=settings_form(client, load_balancing="1", easy_days_2="lazy"))
    assert r.status_code == 422
    assert 'id="easy_days-error"' in r.get_data(as_text=True)
    with transaction(engine) as s:
        row = s.get(SchedulerSettings, user)
        assert row is not None and row.load_balancing is False  # nothing written
    r = client.post("/settings", data=settings_form(client, load_balancing="1"))
    assert r.status_code == 302
    page = client.get("/settings").get_data(as_text=True)
    assert 'value="1" aria-describedby="load_balancing-hint" checked' in page


def test_the_settings_page_names_weekdays_in_the_persons_language(
    client: FlaskClient, engine: Engine
) -> None:
    with transaction(engine) as s:
        f.make_user(s, "ko@example.com", locale="ko")
    sign_in(client, "ko@example.com")
    page = client.get("/settings").get_data(as_text=True)
    assert "목요일" in page


def test_due_counts_are_per_study_day_in_the_persons_time_zone(engine: Engine) -> None:
    clock = Clock("Asia/Seoul", 4)  # days start at 4:00 in Seoul, 19:00 UTC the day before
    now = datetime(2026, 3, 2, 3, 0, tzinfo=UTC)  # 12:00 in Seoul: study day March 2
    with transaction(engine) as s:
        user = f.make_user(s, timezone=clock.timezone, day_start_hour=clock.day_start_hour)
        deck = f.make_deck(s, "zoned", 6)
        cards = iter(f.card_ids(s, deck.id))
        seoul = ZoneInfo(clock.timezone)
        for local in (
            datetime(2026, 3, 5, 4, 0),  # the first moment of March 5: day 3
            datetime(2026, 3, 6, 3, 59),  # still March 5's study day: day 3
            datetime(2026, 3, 6, 12, 0),  # day 4
            datetime(2026, 3, 8, 23, 0),  # day 6
            datetime(2026, 3, 9, 5, 0),  # day 7: past the range read
        ):
            f.set_state(s, user, next(cards), state=State.Review, due=local.replace(tzinfo=seoul))
    with transaction(engine) as s:
        load = workload(s, user, now, clock)
        assert load.today == date(2026, 3, 2)
        three_to_six = load.loads(3, 6)
        assert three_to_six is not None and list(three_to_six.counts) == [2, 1, 0, 1]
        assert three_to_six.easy_days == NORMAL_WEEK
        two_to_four = load.loads(2, 4)  # day 2 read now, days 3 and 4 known
        assert two_to_four is not None and list(two_to_four.counts) == [0, 2, 1]
        apply_user_settings(s, user, {"load_balancing": False, "easy_days": ["minimum"] * 7})
        assert workload(s, user, now, clock).loads(3, 6) is None
        apply_user_settings(s, user, {"load_balancing": True})
        balanced = workload(s, user, now, clock).loads(3, 6)
        assert balanced is not None and balanced.easy_days == (0.0,) * 7
