"""Rescheduling with the parameters in force: the preview, the write, and its atomicity."""

from __future__ import annotations

from datetime import timedelta

import pytest
from flask.testing import FlaskClient
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from flashcards.optimizer import reschedule
from flashcards.storage.engine import transaction
from flashcards.storage.models import ReviewState, SchedulerSettings
from flashcards.storage.schema import utcnow

from .conftest import T0
from .db_snapshots import built_once
from .factories import answer, make_token, make_user
from .fsrs_learner import TRUE_PARAMETERS, simulate_learner
from .test_web_fsrs import sign_in
from .web_helpers import csrf

DAYS = 40
NOW = T0 + timedelta(days=DAYS)


def _learner(engine: Engine) -> int:
    def build() -> int:
        with transaction(engine) as session:
            user = make_user(session)
            simulate_learner(session, user, T0, days=DAYS, new_per_day=3)
            return user

    return built_once(engine, ("reschedule-learner", DAYS), build)


def _adopt(engine: Engine, user: int, parameters: tuple[float, ...] | None) -> None:
    with transaction(engine) as session:
        session.get_one(SchedulerSettings, user).parameters = (
            list(parameters) if parameters else None
        )


def _states(session: Session, user: int) -> dict[int, tuple[float, float, object, int]]:
    rows = session.scalars(select(ReviewState).where(ReviewState.user_id == user))
    return {r.card_id: (r.stability, r.difficulty, r.due, r.version) for r in rows}


def test_the_parameters_each_card_was_scheduled_with_move_nothing(engine: Engine) -> None:
    user = _learner(engine)
    with Session(engine) as session:
        planned = reschedule.plan(session, user, now=NOW)
    assert planned.review_cards > 20
    assert planned.moves == []
    assert all(day.before == day.after for day in planned.days)


def test_the_preview_is_what_applying_produces(engine: Engine) -> None:
    user = _learner(engine)
    with transaction(engine) as session:  # a card relearning: no plan moves it
        mine = select(ReviewState.card_id).where(ReviewState.user_id == user)
        relearning = session.scalars(mine).first()
        assert relearning is not None
        answer(session, user, relearning, "again", now=NOW - timedelta(minutes=1))
    _adopt(engine, user, TRUE_PARAMETERS)
    with Session(engine) as session:
        before = _states(session, user)
        planned = reschedule.plan(session, user, now=NOW)
    # This learner forgets faster than the defaults assume: their cards come due sooner.
    assert planned.moved > 10
    assert sum(d.after for d in planned.days[:7]) > sum(d.before for d in planned.days[:7])
    assert len(planned.days) == reschedule.HORIZON_DAYS
    with transaction(engine) as session:
        reschedule.apply(session, planned)
    with Session(engine) as session:
        assert reschedule.workload(session, user, now=NOW) == [d.after for d in planned.days]
        after = _states(session, user)
        for move in planned.moves:
            assert after[move.card_id][:3] == (move.stability, move.difficulty, move.due)
            assert after[move.card_id][3] == before[move.card_id][3] + 1
        unmoved = set(before) - {move.card_id for move in planned.moves}
        assert unmoved and all(after[card] == before[card] for card in unmoved)
        # Applied, the plan has nothing left to do.
        assert reschedule.plan(session, user, now=NOW).moves == []


def test_an_answer_between_plan_and_write_cancels_the_whole_write(engine: Engine) -> None:
    user = _learner(engine)
    _adopt(engine, user, TRUE_PARAMETERS)
    with Session(engine) as session:
        planned = reschedule.plan(session, user, now=NOW)
        before = _states(session, user)
    answered = planned.moves[-1].card_id  # written last: every move before it is undone
    with transaction(engine) as session:
        answer(session, user, answered, "good", now=NOW)
    with pytest.raises(reschedule.StatesChanged), transaction(engine) as session:
        reschedule.apply(session, planned)
    with Session(engine) as session:
        after = _states(session, user)
    assert {card: state for card, state in after.items() if card != answered} == {
        card: state for card, state in before.items() if card != answered
    }


# --- The API and the page: planned against the real clock, so the learner studied up to now ---


def _recent_learner(engine: Engine) -> tuple[int, str]:
    start = utcnow() - timedelta(days=DAYS)
    with transaction(engine) as session:
        user = make_user(session, "ana@example.com")
        simulate_learner(session, user, start, days=DAYS, new_per_day=3)
        session.get_one(SchedulerSettings, user).parameters = list(TRUE_PARAMETERS)
        return user, make_token(session, user)


def test_api_preview_then_apply_give_the_same_numbers(engine: Engine, client: FlaskClient) -> None:
    user, token = _recent_learner(engine)
    auth = {"Authorization": f"Bearer {token}"}
    with Session(engine) as session:
        before = _states(session, user)
    preview = client.get("/api/v1/me/fsrs/reschedule", headers=auth)
    assert preview.status_code == 200
    planned = preview.get_json()
    assert planned["applied"] is False and planned["moved"] > 10
    assert len(planned["days"]) == 30
    with Session(engine) as session:
        assert _states(session, user) == before  # a preview writes nothing
    applied = client.post("/api/v1/me/fsrs/reschedule", headers=auth).get_json()
    assert applied == {**planned, "applied": True}
    again = client.get("/api/v1/me/fsrs/reschedule", headers=auth).get_json()
    assert again["moved"] == 0
    assert [day["before"] for day in again["days"]] == [day["after"] for day in planned["days"]]


def test_the_page_previews_and_the_button_applies(engine: Engine, client: FlaskClient) -> None:
    user, _token = _recent_learner(engine)
    sign_in(client, "ana@example.com")
    assert "/settings/fsrs/reschedule" in client.get("/settings").get_data(as_text=True)
    page = client.get("/settings/fsrs/reschedule").get_data(as_text=True)
    with Session(engine) as session:
        planned = reschedule.plan(session, user, now=utcnow())
    assert f"{planned.moved} of your review cards would move." in page
    first = planned.days[0]
    assert f"<td>{first.before}</td><td>{first.after}</td>" in page
    response = client.post(
        "/settings/fsrs/reschedule", data={"csrf_token": csrf(client, "/settings")}
    )
    assert response.status_code == 302
    settings = client.get("/settings").get_data(as_text=True)
    assert f"{planned.moved} review cards rescheduled with the parameters in force." in settings
    with Session(engine) as session:
        assert reschedule.plan(session, user, now=utcnow()).moves == []


def test_without_a_csrf_token_nothing_is_rescheduled(engine: Engine, client: FlaskClient) -> None:
    user, _token = _recent_learner(engine)
    sign_in(client, "ana@example.com")
    with Session(engine) as session:
        before = _states(session, user)
    assert client.post("/settings/fsrs/reschedule").status_code == 400
    with Session(engine) as session:
        assert _states(session, user) == before
