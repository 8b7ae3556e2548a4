"""Desired retention with numbers: the simulated workload per retention, the suggestion, the
warning above 0.97, and the page and API without the simulator."""

from __future__ import annotations

import sys

import pytest
from flask.testing import FlaskClient
from sqlalchemy import Engine

from flashcards.optimizer import retention
from flashcards.optimizer.fit import DEFAULTS, OPTIMIZER_PACKAGE, OPTIMIZER_SWITCH
from flashcards.storage.engine import transaction
from flashcards.storage.models import SchedulerSettings

from .factories import make_deck, make_token, make_user, subscribe
from .fsrs_learner import TRUE_PARAMETERS
from .test_web_fsrs import sign_in

PAGE = "/settings/fsrs/retention"
WARNING = "Your desired retention is above 97%"


def test_more_retention_costs_more_reviews_and_keeps_more_remembered() -> None:
    points = retention.simulate(DEFAULTS, 500, 10)
    assert [p.retention for p in points] == list(retention.RETENTIONS)
    assert (points[0].retention, points[-1].retention) == (0.70, 0.97)
    # The simulation draws its answers, so neighbours may swap; the ends and halves may not.
    assert points[-1].reviews_per_day > 3 * points[0].reviews_per_day
    assert points[-1].remembered > points[0].remembered
    reviews = [p.reviews_per_day for p in points]
    assert sum(reviews[14:]) > 1.5 * sum(reviews[:14])
    assert all(0 < p.remembered <= 1 for p in points)


def test_a_learner_who_forgets_faster_needs_more_reviews_for_the_same_retention() -> None:
    mine = retention.simulate(TRUE_PARAMETERS, 500, 10)
    defaults = retention.simulate(DEFAULTS, 500, 10)
    at_90 = retention.RETENTIONS.index(0.9)
    assert mine[at_90].reviews_per_day > 1.2 * defaults[at_90].reviews_per_day


def test_the_suggestion_is_the_cheapest_retention_per_card_remembered() -> None:
    found = retention.view(retention.Collection(DEFAULTS, 500, 10, 0.9))
    cheapest = min(found.points, key=lambda p: p.seconds_per_remembered)
    assert found.suggested == cheapest.retention
    assert found.suggested in retention.RETENTIONS and not found.too_high
    assert retention.view(retention.Collection(DEFAULTS, 500, 10, 0.98)).too_high


def test_results_are_kept_per_parameter_set_and_collection() -> None:
    first = retention.simulate(DEFAULTS, 321, 7)
    assert retention.simulate(DEFAULTS, 321, 7) is first
    assert retention.simulate(DEFAULTS, 322, 7) is not first


def test_a_large_collection_is_simulated_scaled_with_the_same_daily_load_per_card() -> None:
    small = retention.simulate(DEFAULTS, retention.SIMULATED_CARDS, 10)
    large = retention.simulate(DEFAULTS, 4 * retention.SIMULATED_CARDS, 40)
    at_90 = retention.RETENTIONS.index(0.9)
    ratio = large[at_90].reviews_per_day / small[at_90].reviews_per_day
    assert 3.5 < ratio < 4.5


def _studying(engine: Engine, *, desired_retention: float = 0.9) -> str:
    with transaction(engine) as session:
        user = make_user(session, "ana@example.com")
        subscribe(session, user, make_deck(session, "words", 40))
        settings = session.get_one(SchedulerSettings, user)
        settings.desired_retention = desired_retention
        settings.new_per_day = 5
        return make_token(session, user)


def test_api_gives_every_row_and_the_suggestion(engine: Engine, client: FlaskClient) -> None:
    token = _studying(engine, desired_retention=0.98)
    response = client.get("/api/v1/me/fsrs/retention", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200
    body = response.get_json()
    assert [row["retention"] for row in body["rows"]] == list(retention.RETENTIONS)
    assert (body["cards"], body["new_per_day"], body["desired_retention"]) == (40, 5, 0.98)
    assert body["too_high"] is True
    expected = retention.view(retention.Collection(DEFAULTS, 40, 5, 0.98))
    assert body["suggested"] == expected.suggested
    assert body["rows"][0]["reviews_per_day"] == pytest.approx(expected.points[0].reviews_per_day)


def test_the_page_shows_the_rows_and_warns_above_97(engine: Engine, client: FlaskClient) -> None:
    _studying(engine, desired_retention=0.98)
    sign_in(client, "ana@example.com")
    settings = client.get("/settings").get_data(as_text=True)
    assert WARNING in settings and PAGE in settings
    page = client.get(PAGE).get_data(as_text=True)
    assert WARNING in page
    assert "A year of your collection (40 cards, 5 new cards a day)" in page
    assert page.count("<tr") == 1 + len(retention.RETENTIONS)
    suggested = retention.view(retention.Collection(DEFAULTS, 40, 5, 0.98)).suggested
    assert f"Suggested: {round(suggested * 100)}%" in page


def test_no_warning_at_97_or_below(engine: Engine, client: FlaskClient) -> None:
    _studying(engine, desired_retention=0.97)
    sign_in(client, "ana@example.com")
    assert WARNING not in client.get("/settings").get_data(as_text=True)
    assert WARNING not in client.get(PAGE).get_data(as_text=True)


@pytest.mark.parametrize("how", ["switched off", "not installed"])
def test_without_the_simulator_the_page_says_why_and_the_api_is_503(
    engine: Engine, client: FlaskClient, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    if how == "switched off":
        monkeypatch.setenv(OPTIMIZER_SWITCH, "off")
    else:
        monkeypatch.setitem(sys.modules, OPTIMIZER_PACKAGE, None)  # import fails as if absent
    token = _studying(engine)
    response = client.get("/api/v1/me/fsrs/retention", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 503
    assert response.get_json()["type"] == "/api/v1/problems/optimizer-unavailable"
    sign_in(client, "ana@example.com")
    page = client.get(PAGE)
    assert page.status_code == 200
    assert "Optimization is unavailable on this server:" in page.get_data(as_text=True)
    assert "<table" not in page.get_data(as_text=True)
