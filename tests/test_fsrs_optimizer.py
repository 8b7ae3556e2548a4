"""Personal FSRS parameters: training items, the fit and its judge, storage, CLI and API."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner
from flask.testing import FlaskClient
from fsrs import Scheduler
from sqlalchemy import Engine, func, select

from flashcards.anki import export_deck, import_package
from flashcards.cli import main
from flashcards.errors import OptimizerUnavailable
from flashcards.optimizer import store
from flashcards.optimizer.fit import (
    DEFAULTS,
    OPTIMIZER_SWITCH,
    Scores,
    judge,
    load_optimizer,
    score,
    split_in_time,
)
from flashcards.optimizer.items import LoggedAnswer, training_items
from flashcards.srs.days import Clock
from flashcards.storage.engine import transaction
from flashcards.storage.models import FsrsParameterSet, SchedulerSettings

from .conftest import T0
from .db_snapshots import built_once
from .factories import answer, card_ids, make_deck, make_parameter_set, make_token, make_user
from .fsrs_learner import TRUE_PARAMETERS, simulate_learner

PROBLEM = "application/problem+json"
SEOUL = Clock("Asia/Seoul", 4)


def at(text: str) -> datetime:
    """A time in Seoul (UTC+9), where these histories are studied."""
    return datetime.fromisoformat(text + "+09:00").astimezone(UTC)


# --- Training items ---


def test_days_are_study_days_and_same_day_answers_are_history_not_targets() -> None:
    answers = [
        LoggedAnswer(1, at("2026-03-01T23:00"), 3, was_new=True),
        LoggedAnswer(1, at("2026-03-01T23:10"), 3, was_new=False),  # same day: no item
        LoggedAnswer(1, at("2026-03-02T05:00"), 1, was_new=False),  # a study day later
        LoggedAnswer(1, at("2026-03-03T03:00"), 3, was_new=False),  # before 4:00: same day
        LoggedAnswer(1, at("2026-03-06T20:00"), 4, was_new=False),
    ]
    items = training_items(reversed(answers), SEOUL)  # any order in, time order out
    assert [item.reviews for item in items] == [
        ((3, 0), (3, 0), (1, 1)),
        ((3, 0), (3, 0), (1, 1), (3, 0), (4, 4)),
    ]
    assert [item.answered_at for item in items] == [answers[2].reviewed_at, answers[4].reviewed_at]


def test_a_history_starting_mid_way_is_left_out_and_a_reset_starts_afresh() -> None:
    imported = [  # progress imported without its log: the first answer has a state before it
        LoggedAnswer(1, at("2026-03-01T10:00"), 3, was_new=False),
        LoggedAnswer(1, at("2026-03-05T10:00"), 3, was_new=False),
    ]
    reset = [
        LoggedAnswer(2, at("2026-03-01T10:00"), 3, was_new=True),
        LoggedAnswer(2, at("2026-03-04T10:00"), 1, was_new=False),
        LoggedAnswer(2, at("2026-03-10T10:00"), 2, was_new=True),  # new again
        LoggedAnswer(2, at("2026-03-12T10:00"), 3, was_new=False),
    ]
    items = training_items(imported + reset, SEOUL)
    assert [(item.card_id, item.reviews) for item in items] == [(2, ((2, 0), (3, 2)))]


def test_the_split_keeps_the_later_answers_for_judging() -> None:
    answers = [
        LoggedAnswer(card, at(f"2026-03-{day:02d}T10:00"), 3, was_new=day == 1)
        for card in range(1, 5)
        for day in range(1, 9)
    ]
    items = training_items(answers, SEOUL)
    train, held_out = split_in_time(items, 0.25)
    assert len(held_out) == round(len(items) * 0.25)
    assert max(i.answered_at for i in train) <= min(i.answered_at for i in held_out)


def test_answers_imported_from_anki_count_as_the_same_items(engine: Engine) -> None:
    later = T0 + timedelta(days=41)
    with transaction(engine) as session:
        learner = make_user(session)
        deck_id = simulate_learner(session, learner, T0, days=40)
        importer = make_user(session)
    with transaction(engine) as session:
        package = export_deck(
            session, deck_id, locales=["en"], user_id=learner, with_scheduling=True, now=later
        ).data
    with transaction(engine) as session:
        import_package(session, package, owner_user_id=importer, with_scheduling=True, now=later)
    with transaction(engine) as session:
        studied_here = store.read_history(session, learner).items
        imported = store.read_history(session, importer).items
    assert len(studied_here) > 100
    assert [item.reviews for item in imported] == [item.reviews for item in studied_here]


# --- The judge ---


def test_the_judge_adopts_only_a_set_that_predicts_better() -> None:
    current = Scores(log_loss=0.40, rmse_bins=0.05)
    assert judge(Scores(0.38, 0.05), current)
    assert not judge(Scores(0.40, 0.04), current)  # log loss no lower
    assert not judge(Scores(0.38, 0.06), current)  # RMSE worse
    assert not judge(Scores(0.45, 0.08), current)
    assert not judge(Scores(0.40 - 1e-8, 0.05 - 1e-8), current)  # rounding is no gain


def test_a_worse_candidate_is_refused_and_a_stale_judgement_is_not_adopted(
    engine: Engine,
) -> None:
    with transaction(engine) as session:
        user = make_user(session)
        simulate_learner(session, user, T0, days=60)
    with transaction(engine) as session:
        history = store.read_history(session, user)
    _, held_out = split_in_time(history.items)
    truth = score(TRUE_PARAMETERS, held_out)
    # The defaults misjudge this learner: as a candidate against the truth they are refused.
    assert not judge(score(DEFAULTS, held_out), truth)
    assert judge(truth, score(DEFAULTS, held_out))

    outcome = store.fit(history)
    assert outcome.adopt  # it beats the defaults, which were in force when it was read...
    with transaction(engine) as session:  # ...but other parameters came into force meanwhile
        session.get_one(SchedulerSettings, user).parameters = list(TRUE_PARAMETERS)
    with transaction(engine) as session:
        fitted = store.record(session, history, outcome, now=T0 + timedelta(days=61))
        assert fitted.adopted is False and fitted.id is not None
    assert _parameters(engine, user) == list(TRUE_PARAMETERS)


# --- Storage, API and CLI ---


def _learner_with_token(engine: Engine, days: int = 90) -> tuple[int, str]:
    def build() -> tuple[int, str]:
        with transaction(engine) as session:
            user = make_user(session, "learner@example.com")
            simulate_learner(session, user, T0, days=days)
            return user, make_token(session, user)

    return built_once(engine, ("learner-with-token", days), build)


def _parameters(engine: Engine, user: int) -> list[float] | None:
    with transaction(engine) as session:
        settings = session.get(SchedulerSettings, user)
        assert settings is not None
        return settings.parameters


def test_a_fit_that_predicts_better_is_adopted_and_revert_restores_the_defaults(
    engine: Engine, client: FlaskClient
) -> None:
    user, token = _learner_with_token(engine)
    auth = {"Authorization": f"Bearer {token}"}
    before = client.get("/api/v1/me/fsrs", headers=auth).get_json()
    assert before["personal"] is False and before["parameters"] == list(DEFAULTS)
    assert before["history"] == [] and before["optimizer_available"] is True

    fitted = client.post("/api/v1/me/fsrs/optimize", headers=auth)
    assert fitted.status_code == 200, fitted.get_data(as_text=True)
    body = fitted.get_json()
    assert body["adopted"] is True
    assert body["scores"]["log_loss"] < body["default_scores"]["log_loss"]
    assert body["previous_scores"] == body["default_scores"]  # the defaults were in force
    assert body["answers"] >= 400 and body["cards"] >= 50
    assert _parameters(engine, user) == body["parameters"] != list(DEFAULTS)
    Scheduler(parameters=body["parameters"])  # the scheduler takes them

    overview = client.get("/api/v1/me/fsrs", headers=auth).get_json()
    assert overview["personal"] is True and overview["in_force_set_id"] == body["id"]
    assert overview["scores"] == body["scores"]
    assert overview["default_scores"] == body["default_scores"]

    # The same history fitted again gives the set in force: not better, so it is not adopted.
    again = client.post("/api/v1/me/fsrs/optimize", headers=auth).get_json()
    assert again["adopted"] is False
    assert again["parameters"] == pytest.approx(body["parameters"], rel=1e-5)
    for name in ("log_loss", "rmse_bins"):
        assert again["scores"][name] == pytest.approx(again["previous_scores"][name], rel=1e-5)
    assert _parameters(engine, user) == body["parameters"]

    reverted = client.post("/api/v1/me/fsrs/revert", headers=auth)
    assert reverted.status_code == 200
    assert reverted.get_json()["personal"] is False
    assert [s["reverted"] for s in reverted.get_json()["history"]] == [False, True]
    assert _parameters(engine, user) is None

    nothing = client.post("/api/v1/me/fsrs/revert", headers=auth)
    assert nothing.status_code == 409 and nothing.mimetype == PROBLEM
    assert nothing.get_json()["type"] == "/api/v1/problems/nothing-to-revert"


def test_revert_steps_back_one_adopted_set_at_a_time(engine: Engine) -> None:
    first, second = [0.3, *DEFAULTS[1:]], [0.5, *DEFAULTS[1:]]
    with transaction(engine) as session:
        user = make_user(session)
        for when, parameters in ((T0, first), (T0 + timedelta(days=30), second)):
            make_parameter_set(session, user, parameters, when)
            session.get_one(SchedulerSettings, user).parameters = parameters
    with transaction(engine) as session:
        state = store.revert(session, user, now=T0 + timedelta(days=31))
        assert state.parameters == tuple(first) and state.set is not None
    assert _parameters(engine, user) == first
    with transaction(engine) as session:
        assert store.revert(session, user, now=T0 + timedelta(days=32)).set is None
    assert _parameters(engine, user) is None


def test_too_little_history_is_a_409_saying_how_much_is_needed(
    engine: Engine, client: FlaskClient
) -> None:
    user, token = _learner_with_token(engine, days=10)
    response = client.post("/api/v1/me/fsrs/optimize", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 409 and response.mimetype == PROBLEM
    problem = response.get_json()
    assert problem["type"] == "/api/v1/problems/not-enough-history"
    assert "need at least 400 answers on 50 cards" in problem["detail"]
    with transaction(engine) as session:
        assert session.scalar(select(func.count()).select_from(FsrsParameterSet)) == 0
    assert _parameters(engine, user) is None


def test_without_the_optimizer_the_service_runs_and_says_why(
    engine: Engine, client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(OptimizerUnavailable, match=r"pip install 'flashcards\[optimizer\]'"):
        load_optimizer("fsrs_rs_python_not_installed")
    monkeypatch.setenv(OPTIMIZER_SWITCH, "off")
    with transaction(engine) as session:
        user = make_user(session)
        token = make_token(session, user)
    auth = {"Authorization": f"Bearer {token}"}
    overview = client.get("/api/v1/me/fsrs", headers=auth)
    assert overview.status_code == 200 and overview.get_json()["optimizer_available"] is False
    response = client.post("/api/v1/me/fsrs/optimize", headers=auth)
    assert response.status_code == 503 and response.mimetype == PROBLEM
    assert response.get_json()["type"] == "/api/v1/problems/optimizer-unavailable"
    assert "optimizer" in response.get_json()["detail"]
    with transaction(engine) as session:
        assert session.scalar(select(func.count()).select_from(FsrsParameterSet)) == 0


def test_cli_optimizes_with_a_progress_line_and_reverts(engine: Engine, cli: CliRunner) -> None:
    user, _ = _learner_with_token(engine)
    result = cli.invoke(main, ["fsrs", "optimize", "--user", "Learner@example.com"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("fitting on ") and lines[0].endswith(" cards")
    assert lines[1].startswith("adopted")
    assert "defaults:  log loss" in result.output
    adopted = _parameters(engine, user)
    assert adopted is not None
    # The scheduler now uses them: a new card answered Good starts at their stability for Good.
    with transaction(engine) as session:
        card = card_ids(session, make_deck(session, "after-fit", 1).id)[0]
        first = answer(session, user, card, "good", now=T0 + timedelta(days=91))
    assert first.state.stability == pytest.approx(adopted[2]) != pytest.approx(DEFAULTS[2])

    result = cli.invoke(main, ["fsrs", "revert", "--user", "learner@example.com"])
    assert result.exit_code == 0, result.output
    assert "the defaults" in result.output
    assert _parameters(engine, user) is None
    result = cli.invoke(main, ["fsrs", "revert", "--user", "learner@example.com"])
    assert result.exit_code == 1 and "nothing to revert" in result.output


def test_fits_are_limited_per_account(engine: Engine, client: FlaskClient) -> None:
    # A fit costs up to a second of a worker's CPU: a token holder cannot ask without limit.
    client.application.config["FITS_PER_HOUR"] = 2
    _user, token = _learner_with_token(engine, days=10)
    auth = {"Authorization": f"Bearer {token}"}
    statuses = [client.post("/api/v1/me/fsrs/optimize", headers=auth).status_code for _ in range(3)]
    assert statuses == [409, 409, 429]  # too little history twice, then no fit at all
    refused = client.post("/api/v1/me/fsrs/optimize", headers=auth)
    assert refused.status_code == 429 and refused.headers.get("Retry-After")
    assert refused.get_json()["type"] == "/api/v1/problems/rate-limited"
