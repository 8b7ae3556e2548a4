"""The one retry policy (`storage.retry`): what it retries, how long it waits, how it gives up."""

from __future__ import annotations

import random
import uuid
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from fsrs import Rating
from sqlalchemy import Engine, event, select
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session

from flashcards.api.errors import problem_type
from flashcards.errors import FlashcardsError, NotFound, NotLatestAnswer, TooMuchContention
from flashcards.people import accounts
from flashcards.srs import state_rows, study
from flashcards.storage.engine import make_engine, transaction, writer
from flashcards.storage.models import ReviewLog, ReviewState, User
from flashcards.storage.retry import (
    RETRY_ATTEMPTS,
    RETRY_FIRST_DELAY,
    RETRY_MAX_DELAY,
    backoff,
    is_lost_race,
    retrying,
    with_retries,
)
from flashcards.storage.schema import utcnow
from flashcards.web.study import review_id_at
from tests import factories as f
from tests.test_study import NOW, setup_card
from tests.web_helpers import CARD_ID_RE, REVIEW_ID_RE, csrf, sign_up, subscribe


class Recorder:
    """Counts attempts and records the waits; the work fails its first `failures` attempts."""

    def __init__(self, failures: int, error: BaseException) -> None:
        self.failures = failures
        self.error = error
        self.calls = 0
        self.waits: list[float] = []
        self.rollbacks = 0

    def work(self) -> str:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error
        return "done"

    def rollback(self) -> None:
        self.rollbacks += 1


def run(recorder: Recorder, **kwargs: Any) -> str:
    return with_retries(
        recorder.work, rollback=recorder.rollback, sleep=recorder.waits.append, **kwargs
    )


def test_a_lost_race_is_retried_with_a_rollback_and_a_wait_each_time() -> None:
    recorder = Recorder(3, study.ConcurrentAnswer(7))
    assert run(recorder) == "done"
    assert recorder.calls == 4
    assert recorder.rollbacks == 3
    assert len(recorder.waits) == 3


def test_the_uncontended_path_neither_waits_nor_rolls_back() -> None:
    recorder = Recorder(0, study.ConcurrentAnswer(7))
    assert run(recorder) == "done"
    assert (recorder.calls, recorder.rollbacks, recorder.waits) == (1, 0, [])


def test_it_gives_up_after_the_attempts_with_a_503_that_says_when_to_retry() -> None:
    recorder = Recorder(100, study.ConcurrentAnswer(7))
    with pytest.raises(TooMuchContention) as raised:
        run(recorder)
    assert recorder.calls == RETRY_ATTEMPTS
    assert recorder.rollbacks == RETRY_ATTEMPTS
    assert len(recorder.waits) == RETRY_ATTEMPTS - 1  # no wait after the last attempt
    assert isinstance(raised.value, FlashcardsError)
    assert problem_type(raised.value).status == 503 and raised.value.retry_after >= 1
    assert isinstance(raised.value.__cause__, study.ConcurrentAnswer)


def test_attempts_are_the_callers_to_choose() -> None:
    recorder = Recorder(100, IntegrityError("INSERT", {}, Exception("duplicate key")))
    with pytest.raises(TooMuchContention):
        run(recorder, retry_on=(IntegrityError,), attempts=3)
    assert recorder.calls == 3


@pytest.mark.parametrize(
    "error",
    [NotFound("no card 7"), ValueError("a bug"), IntegrityError("INSERT", {}, Exception("fk"))],
)
def test_any_other_error_passes_through_at_once(error: BaseException) -> None:
    # IntegrityError only when the caller says so: a foreign key failing is not a race.
    recorder = Recorder(100, error)
    with pytest.raises(type(error)) as raised:
        run(recorder)
    assert raised.value is error
    assert (recorder.calls, recorder.rollbacks, recorder.waits) == (1, 0, [])


class SQLState(Exception):
    def __init__(self, sqlstate: str) -> None:
        super().__init__(sqlstate)
        self.sqlstate = sqlstate


class SQLiteError(Exception):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.sqlite_errorname = name


@pytest.mark.parametrize(
    ("orig", "retried"),
    [
        (SQLState("40001"), True),  # serialization_failure
        (SQLState("40P01"), True),  # deadlock_detected
        (SQLState("57P01"), False),  # admin_shutdown: the database is going away
        (SQLiteError("SQLITE_BUSY_SNAPSHOT"), True),
        (SQLiteError("SQLITE_BUSY"), False),  # it has already waited the busy timeout
    ],
)
def test_database_conflicts_that_mean_try_again(orig: Exception, retried: bool) -> None:
    error = OperationalError("UPDATE", {}, orig)
    assert is_lost_race(error) is retried
    recorder = Recorder(1, error)
    if retried:
        assert run(recorder) == "done"
    else:
        with pytest.raises(OperationalError):
            run(recorder)
    assert recorder.calls == (2 if retried else 1)


def test_backoff_is_jittered_and_bounded() -> None:
    rng = random.Random(20)
    for attempt in range(1, 20):
        ceiling = min(RETRY_MAX_DELAY, RETRY_FIRST_DELAY * 2 ** (attempt - 1))
        waits = [backoff(attempt, rng.random) for _ in range(200)]
        assert all(0 <= w <= ceiling for w in waits)
        assert len(set(waits)) > 150  # random, not one fixed delay that the losers share
        assert max(waits) > ceiling * 0.8  # and the ceiling grows as it says
    assert backoff(1, lambda: 1.0) == RETRY_FIRST_DELAY
    assert backoff(3, lambda: 1.0) == RETRY_FIRST_DELAY * 4
    assert backoff(50, lambda: 1.0) == RETRY_MAX_DELAY
    # Giving up takes well under a second of waiting, however unlucky the draws.
    assert sum(backoff(a, lambda: 1.0) for a in range(1, RETRY_ATTEMPTS)) < 0.5


def test_retrying_commits_once_and_rolls_back_each_lost_race(engine: Engine) -> None:
    user, (card,) = setup_card(engine)
    calls: list[int] = []
    with Session(writer(engine), expire_on_commit=False) as s:

        def work() -> study.AnswerResult:
            calls.append(1)
            result = study.answer(
                s, user, card, Rating.Good, str(uuid.UUID(int=len(calls))), now=NOW
            )
            if len(calls) < 3:
                raise study.ConcurrentAnswer(card)  # as if another answer had won
            return result

        result = retrying(s, work)
    assert len(calls) == 3
    with transaction(engine) as s:
        # The two lost attempts' writes were rolled back: one answer, one state.
        assert s.scalars(select(ReviewLog.review_id)).all() == [result.review_id]
        assert s.scalar(select(ReviewState.reps)) == 1


def test_a_concurrent_undo_of_the_same_answer_writes_the_state_once(engine: Engine) -> None:
    """The other undo commits between this one's read of the answer and of the state's version:
    this one's version is then current, but the answer it read is gone."""
    if engine.dialect.name == "sqlite":
        pytest.skip("SQLite's writers take the lock at BEGIN: the interleaving cannot happen")
    user, (card,) = setup_card(engine)
    with transaction(engine) as s:
        f.answer(s, user, card, Rating.Good, now=NOW)
        second = f.answer(s, user, card, Rating.Again, now=NOW)
        version = s.scalar(select(ReviewState.version))
    assert version is not None
    other_undo: list[study.UndoResult] = []

    def undo_meanwhile(execute: Any) -> None:
        described = [d["name"] for d in getattr(execute.statement, "column_descriptions", [])]
        if not other_undo and execute.is_select and described == ["version"]:
            with transaction(engine) as other:
                other_undo.append(study.undo(other, user, now=NOW, review_id=second.review_id))

    with Session(writer(engine), expire_on_commit=False) as s:
        event.listen(s, "do_orm_execute", undo_meanwhile)
        with pytest.raises(NotFound, match="undone already"):
            retrying(s, lambda: study.undo(s, user, now=NOW, review_id=second.review_id))
    assert other_undo
    with transaction(engine) as s:
        assert s.scalars(select(ReviewLog.rating)).all() == [int(Rating.Good)]
        state = s.execute(select(ReviewState.reps, ReviewState.version)).one()
        # Written back once, by the other undo: one version more than the second answer's.
        assert (state.reps, state.version) == (1, version + 1)


class Rival:
    """Before each of the app's version-checked writes of a state, another answer to the same
    card commits first (a real transaction on an engine of its own): every attempt loses."""

    def __init__(self, app: Flask, database_url: str, user: int, card: int) -> None:
        self.app_engine: Engine = app.extensions["flashcards.engine"]
        self.engine = make_engine(database_url)
        self.user, self.card = user, card
        self.answers: list[str] = []

    def __enter__(self) -> Rival:
        event.listen(self.app_engine, "before_cursor_execute", self.before)
        return self

    def __exit__(self, *_exc: object) -> None:
        event.remove(self.app_engine, "before_cursor_execute", self.before)
        self.engine.dispose()

    def before(self, _conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.lstrip().upper().startswith("UPDATE REVIEW_STATES"):
            with transaction(self.engine) as s:
                answered = f.answer(s, self.user, self.card, Rating.Good, now=utcnow())
            self.answers.append(answered.review_id)


def logged(engine: Engine) -> set[str]:
    with engine.connect() as conn:
        return set(conn.execute(select(ReviewLog.review_id)).scalars())


def skip_on_sqlite(engine: Engine) -> None:
    if engine.dialect.name == "sqlite":
        pytest.skip("SQLite's writers take the lock at BEGIN: no other answer can win")


def test_an_api_undo_that_keeps_losing_is_a_503_problem_with_retry_after(
    app: Flask, client: FlaskClient, database_url: str, engine: Engine
) -> None:
    skip_on_sqlite(engine)
    user, (card,) = setup_card(engine)
    with transaction(engine) as s:
        for _ in range(2):  # undoing the second answer writes the state back (an UPDATE)
            f.answer(s, user, card, Rating.Good, now=utcnow())
        token = accounts.issue_token(s, user, now=utcnow())
    before = logged(engine)
    with Rival(app, database_url, user, card) as rival:
        r = client.post("/api/v1/reviews/undo", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 503, r.get_data(as_text=True)
    assert r.mimetype == "application/problem+json"
    assert r.headers["Retry-After"] == "1"
    assert r.get_json()["title"] == "Service unavailable"
    assert len(rival.answers) == RETRY_ATTEMPTS
    # Nothing undone: every answer is still there, the rivals' included.
    assert logged(engine) == before | set(rival.answers)


def test_a_web_answer_that_keeps_losing_is_a_translated_503_page(
    app: Flask, client: FlaskClient, database_url: str, loaded_engine: Engine
) -> None:
    skip_on_sqlite(loaded_engine)
    sign_up(client, language="es")
    subscribe(client, "es")
    page = client.get("/study").get_data(as_text=True)
    card, shown = CARD_ID_RE.search(page), REVIEW_ID_RE.search(page)
    assert card and shown
    form = {"csrf_token": csrf(client, "/study"), "card_id": card[1], "rating": "3"}
    first = client.post("/study/answer", data={**form, "review_id": shown[1]})
    assert first.status_code == 303  # the card has a state now: the next answer updates it
    with loaded_engine.connect() as conn:
        user = conn.execute(select(User.id).where(User.email == "ana@example.com")).scalar_one()
    before = logged(loaded_engine)
    # The review id of the card's page at its new state (the web answers only a card shown).
    with app.app_context(), Session(loaded_engine) as s:
        mine = review_id_at(user, int(card[1]), state_rows.card_state(s, user, int(card[1])))
    with Rival(app, database_url, user, int(card[1])) as rival:
        r = client.post("/study/answer", data={**form, "review_id": mine})
    assert r.status_code == 503
    assert r.headers["Retry-After"] == "1"
    text = r.get_data(as_text=True)
    assert "Demasiados cambios a la vez" in text
    assert "el tuyo no se ha guardado" in text
    assert len(rival.answers) == RETRY_ATTEMPTS
    assert logged(loaded_engine) == before | set(rival.answers)  # not `mine`


def test_an_answer_committed_during_an_undo_is_not_overwritten(engine: Engine) -> None:
    """The answer commits between the undo's read of the answer to undo and of the state's
    version: that version is then current, but it is the new answer's state, not the one
    the undo read. The retry finds the new answer the latest, and undoes nothing."""
    skip_on_sqlite(engine)
    user, (card,) = setup_card(engine)
    with transaction(engine) as s:
        first = f.answer(s, user, card, Rating.Good, now=NOW)
    meanwhile: list[study.AnswerResult] = []

    def answer_meanwhile(execute: Any) -> None:
        described = [d["name"] for d in getattr(execute.statement, "column_descriptions", [])]
        if not meanwhile and execute.is_select and described == ["version"]:
            with transaction(engine) as other:
                meanwhile.append(f.answer(other, user, card, Rating.Again, now=NOW))

    with Session(writer(engine), expire_on_commit=False) as s:
        event.listen(s, "do_orm_execute", answer_meanwhile)
        with pytest.raises(NotLatestAnswer, match="latest"):
            retrying(s, lambda: study.undo(s, user, now=NOW, review_id=first.review_id))
    assert meanwhile
    with transaction(engine) as s:
        assert s.scalars(select(ReviewLog.review_id).order_by(ReviewLog.id)).all() == [
            first.review_id,
            meanwhile[0].review_id,
        ]
        assert state_rows.card_state(s, user, card) == meanwhile[0].state
