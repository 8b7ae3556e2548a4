"""Answering and undoing: idempotency, races, undo, offline answers, input parsing."""

from __future__ import annotations

import threading
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from fsrs import Rating
from sqlalchemy import Engine, event, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from flashcards.errors import (
    CardRetired,
    InvalidInput,
    NotFound,
    NothingToUndo,
    NotLatestAnswer,
    ReviewIdReused,
)
from flashcards.hot_sql import answers
from flashcards.srs import state_rows, study
from flashcards.storage import migrate
from flashcards.storage.engine import make_engine, transaction, writer
from flashcards.storage.models import Card, ReviewLog, ReviewState
from flashcards.storage.retry import retrying

from . import factories as f
from .conftest import T0

NOW = T0


def setup_card(engine: Engine, cards: int = 1, **user_settings: Any) -> tuple[int, list[int]]:
    with transaction(engine) as s:
        user = f.make_user(s, **user_settings)
        deck = f.make_deck(s, f"deck-{uuid.uuid4().hex[:8]}", cards)
        f.subscribe(s, user, deck)
        return user, f.card_ids(s, deck.id)


def state_row(s: Session, user: int, card: int) -> dict[str, Any] | None:
    row = s.execute(
        select(ReviewState.__table__).where(
            ReviewState.user_id == user, ReviewState.card_id == card
        )
    ).first()
    return None if row is None else dict(row._mapping)


def log_count(s: Session, user: int) -> int:
    return (
        s.scalar(select(func.count()).select_from(ReviewLog).where(ReviewLog.user_id == user)) or 0
    )


def test_same_review_id_is_applied_once_and_returns_the_same_result(engine: Engine) -> None:
    user, (card,) = setup_card(engine)
    rid = str(uuid.uuid4())
    with transaction(engine) as s:
        first = f.answer(s, user, card, Rating.Good, now=NOW, review_id=rid)
    with transaction(engine) as s:
        again = f.answer(s, user, card, Rating.Good, now=NOW + timedelta(minutes=5), review_id=rid)
        assert log_count(s, user) == 1
        assert state_rows.card_state(s, user, card) == first.state
    assert first.created and not again.created
    assert (again.review_id, again.card_id, again.state) == (rid, card, first.state)
    # The same id with another rating is another answer: refused, not dropped unseen.
    with pytest.raises(ReviewIdReused) as info, transaction(engine) as s:
        f.answer(s, user, card, Rating.Easy, now=NOW + timedelta(minutes=6), review_id=rid)
    assert info.value.field == "review_id"
    with transaction(engine) as s:
        assert log_count(s, user) == 1 and state_rows.card_state(s, user, card) == first.state


def test_review_id_of_another_card_or_user_is_a_conflict(engine: Engine) -> None:
    user, (card, other_card) = setup_card(engine, 2)
    with transaction(engine) as s:
        other_user = f.make_user(s)
        f.answer(
            s, user, card, Rating.Good, now=NOW, review_id="11111111-1111-1111-1111-111111111111"
        )
    for who, which in ((user, other_card), (other_user, card)):
        with pytest.raises(ReviewIdReused) as info, transaction(engine) as s:
            f.answer(
                s,
                who,
                which,
                Rating.Good,
                now=NOW,
                review_id="11111111-1111-1111-1111-111111111111",
            )
        assert info.value.field == "review_id"
    with transaction(engine) as s:
        assert state_row(s, user, other_card) is None and state_row(s, other_user, card) is None


def race(
    database_url: str, user: int, card: int, now: Any, ids: list[str] | None = None
) -> list[str]:
    """Two threads, each with its own engine and session, answer the card at the same moment."""
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []
    ids = ids or [str(uuid.uuid4()) for _ in range(2)]

    def work(review_id: str) -> None:
        engine = make_engine(database_url)
        # Connect before the barrier (PostgreSQL pools the connection), so that both answers
        # start together instead of one winning by its connection set-up time.
        engine.connect().close()
        try:
            with Session(writer(engine), expire_on_commit=False) as session:
                barrier.wait(timeout=10)
                retrying(
                    session,
                    lambda: study.answer(session, user, card, Rating.Good, review_id, now=now),
                    retry_on=(study.ConcurrentAnswer, IntegrityError),
                )
        except BaseException as exc:  # reported to the test below
            errors.append(exc)
        finally:
            engine.dispose()

    threads = [threading.Thread(target=work, args=(rid,)) for rid in ids]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors
    return ids


def test_two_threads_answering_the_same_card_lose_no_update(
    database_url: str, engine: Engine
) -> None:
    user, cards = setup_card(engine, 3)
    # A new card (both insert the state: the loser hits the primary key and retries), and a
    # card with a state (both update it: the loser finds another version and retries).
    with transaction(engine) as s:
        f.answer(s, user, cards[1], Rating.Easy, now=NOW - timedelta(days=20))
        f.answer(s, user, cards[2], Rating.Again, now=NOW - timedelta(minutes=5))
    for card in cards:
        with transaction(engine) as s:
            current = state_rows.card_state(s, user, card)
        reps0 = current.reps if current else 0
        race(database_url, user, card, NOW)
        with transaction(engine) as s:
            logs = s.execute(
                select(ReviewLog.__table__)
                .where(ReviewLog.user_id == user, ReviewLog.card_id == card)
                .order_by(ReviewLog.id)
            ).all()
            state = state_rows.card_state(s, user, card)
            row = state_row(s, user, card)
        assert state is not None and row is not None
        assert state.reps == reps0 + 2
        recent = logs[-2:]
        assert len(logs) == reps0 + 2
        # Each answer saw the state the other left: a chain, not two answers to the same state.
        first, second = recent
        assert second.reps_before == first.reps == reps0 + 1
        assert (second.state_before, second.step_before) == (first.state, first.step)
        assert second.stability_before == first.stability
        assert second.difficulty_before == first.difficulty
        assert second.due_before == first.due
        assert second.last_review_before == first.reviewed_at
        assert (second.state, second.stability, second.due) == (
            int(state.state),
            state.stability,
            state.due,
        )
        assert row["version"] == reps0 + 2


def test_undo_restores_every_column_back_through_the_day_then_conflicts(engine: Engine) -> None:
    user, (card, other) = setup_card(engine, 2)
    yesterday = NOW - timedelta(days=1)
    with transaction(engine) as s:
        f.answer(s, user, card, Rating.Good, now=yesterday)
        f.answer(s, user, card, Rating.Good, now=yesterday + timedelta(minutes=10))
    snapshots = []
    times = [
        NOW,
        NOW + timedelta(minutes=1),
        NOW + timedelta(minutes=2),
        NOW + timedelta(minutes=12),
    ]
    for when, (which, rating) in zip(
        times,
        [(card, Rating.Again), (other, Rating.Good), (card, Rating.Hard), (other, Rating.Good)],
        strict=True,
    ):
        with transaction(engine) as s:
            snapshots.append((which, state_row(s, user, which)))
            f.answer(s, user, which, rating, now=when)
    later = NOW + timedelta(hours=3)
    for which, before in reversed(snapshots):
        with transaction(engine) as s:
            logs_before = log_count(s, user)
            result = study.undo(s, user, now=later)
        with transaction(engine) as s:
            restored = state_row(s, user, which)
            assert log_count(s, user) == logs_before - 1
        assert result.card_id == which
        if before is None:
            assert restored is None and result.state is None  # the card is new again
        else:
            assert restored is not None
            assert restored["version"] > before["version"]
            restored.pop("version")
            before = dict(before)
            before.pop("version")
            assert restored == before
            with transaction(engine) as s:
                assert result.state == state_rows.card_state(s, user, which)
    # Yesterday's answers are not undone today.
    with pytest.raises(NothingToUndo), transaction(engine) as s:
        study.undo(s, user, now=later)
    with transaction(engine) as s:
        assert log_count(s, user) == 2


def test_undo_with_nothing_to_undo_is_a_conflict(engine: Engine) -> None:
    user, _ = setup_card(engine)
    with pytest.raises(NothingToUndo), transaction(engine) as s:
        study.undo(s, user, now=NOW)


def test_undo_of_a_first_answer_makes_the_card_new_and_introducible_again(engine: Engine) -> None:
    from flashcards.srs import queue

    user, (card,) = setup_card(engine, new_per_day=1)
    with transaction(engine) as s:
        f.answer(s, user, card, Rating.Easy, now=NOW)
    with transaction(engine) as s:
        assert queue.next_card(s, user, now=NOW)[0] is None
        result = study.undo(s, user, now=NOW)
    assert result.state is None
    with transaction(engine) as s:
        assert state_row(s, user, card) is None
        next_card, counts = queue.next_card(s, user, now=NOW)
    assert next_card is not None and next_card.card_id == card and counts.new == 1


def test_later_answers_and_their_undo_keep_when_the_card_was_introduced(engine: Engine) -> None:
    user, (card,) = setup_card(engine)
    with transaction(engine) as s:
        f.answer(s, user, card, Rating.Good, now=NOW)
    later = NOW + timedelta(days=3)
    with transaction(engine) as s:
        f.answer(s, user, card, Rating.Again, now=later)
        after = state_row(s, user, card)
    assert after is not None and after["introduced_at"] == NOW and after["reps"] == 2
    with transaction(engine) as s:
        study.undo(s, user, now=later)
        restored = state_row(s, user, card)
    assert restored is not None and restored["introduced_at"] == NOW and restored["reps"] == 1


def test_an_answer_rewrites_only_the_sqlite_indexes_of_what_it_changes(tmp_path: Path) -> None:
    """SQLite rewrites the entry of every index whose column an UPDATE assigns, changed or not:
    an answer's UPDATE must assign nothing indexed that an answer cannot change."""
    engine = make_engine(f"sqlite:///{tmp_path / 'plan.sqlite3'}")
    migrate.upgrade(engine)
    compiled = answers._UPDATE_STATE_ROW.compiled(engine.dialect, {})
    with engine.connect() as conn:
        plan = conn.exec_driver_sql(
            f"EXPLAIN {compiled.sql}", tuple([None] * compiled.sql.count("?"))
        ).all()
    engine.dispose()
    # The two indexes holding `due`; not the one on introduced_at, fixed at the first answer.
    assert [row[1] for row in plan].count("IdxInsert") == 2


def test_offline_answers_need_a_time_not_in_the_future_nor_before_the_last_review(
    engine: Engine,
) -> None:
    user, (card,) = setup_card(engine)
    earlier = NOW - timedelta(hours=5)
    with transaction(engine) as s:
        result = f.answer(s, user, card, Rating.Good, now=NOW, reviewed_at=earlier)
    assert result.state.last_review == earlier
    with transaction(engine) as s:
        log = s.execute(select(ReviewLog.reviewed_at, ReviewLog.card_id)).one()
        intro = s.scalar(select(ReviewState.introduced_at))
    assert log.reviewed_at == earlier and intro == earlier
    for when in (earlier - timedelta(seconds=1), NOW + timedelta(minutes=5)):
        with pytest.raises(InvalidInput) as info, transaction(engine) as s:
            f.answer(s, user, card, Rating.Good, now=NOW, reviewed_at=when)
        assert info.value.field == "reviewed_at"
    with transaction(engine) as s:
        f.answer(s, user, card, Rating.Good, now=NOW, reviewed_at=earlier)  # same instant is fine
        assert log_count(s, user) == 2


def test_retired_cards_are_not_introduced_but_keep_being_reviewed(engine: Engine) -> None:
    user, (started, fresh) = setup_card(engine, 2)
    with transaction(engine) as s:
        f.answer(s, user, started, Rating.Good, now=NOW)
        s.execute(update(Card).values(retired_at=NOW))
    with pytest.raises(CardRetired), transaction(engine) as s:
        f.answer(s, user, fresh, Rating.Good, now=NOW)
    with transaction(engine) as s:
        assert f.answer(s, user, started, Rating.Good, now=NOW + timedelta(minutes=10)).created


def test_cards_of_decks_the_user_cannot_see_are_not_found(engine: Engine) -> None:
    user, _ = setup_card(engine)
    with transaction(engine) as s:
        owner = f.make_user(s)
        private = f.make_deck(s, "private", 1, owner_user_id=owner)
        hidden = f.card_ids(s, private.id)[0]
    with pytest.raises(NotFound), transaction(engine) as s:
        f.answer(s, user, hidden, Rating.Good, now=NOW)
    with pytest.raises(NotFound), transaction(engine) as s:
        f.answer(s, user, 10**9, Rating.Good, now=NOW)
    with transaction(engine) as s:
        assert f.answer(s, owner, hidden, Rating.Good, now=NOW).created


def test_subscription_overrides_reach_the_scheduler(engine: Engine) -> None:
    with transaction(engine) as s:
        user = f.make_user(s, learning_steps=[60, 600])
        deck = f.make_deck(s, "steps", 1)
        f.subscribe(s, user, deck, learning_steps=[120, 3600])
        card = f.card_ids(s, deck.id)[0]
        after = f.answer(s, user, card, Rating.Again, now=NOW).state
    assert after.due == NOW + timedelta(seconds=120)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1, Rating.Again),
        (4, Rating.Easy),
        ("again", Rating.Again),
        ("Good", Rating.Good),
        ("HARD", Rating.Hard),
        (2.0, Rating.Hard),  # an integer in JSON Schema
    ],
)
def test_parse_rating_accepts(value: object, expected: Rating) -> None:
    assert study.parse_rating(value) == expected


@pytest.mark.parametrize("value", [0, 5, -1, True, False, "meh", "", "1", 2.5, None, [1]])
def test_parse_rating_rejects(value: object) -> None:
    with pytest.raises(InvalidInput) as info:
        study.parse_rating(value)
    assert info.value.field == "rating"


def test_answer_slightly_ahead_of_the_server_clock_does_not_block_the_next_one(
    engine: Engine,
) -> None:
    """A client clock a little ahead is tolerated, and must not make the server's own `now`
    look like a time before the card's last review on the next answer."""
    user, (card,) = setup_card(engine)
    with transaction(engine) as s:
        first = f.answer(
            s, user, card, Rating.Again, now=NOW, reviewed_at=NOW + timedelta(seconds=30)
        )
    assert first.state.last_review == NOW
    with transaction(engine) as s:
        f.answer(s, user, card, Rating.Good, now=NOW + timedelta(seconds=1))
        assert log_count(s, user) == 2


def test_two_threads_sending_the_same_review_id_apply_it_once(
    database_url: str, engine: Engine
) -> None:
    user, (card,) = setup_card(engine)
    rid = str(uuid.uuid4())
    race(database_url, user, card, NOW, [rid, rid])
    with transaction(engine) as s:
        assert log_count(s, user) == 1
        state = state_rows.card_state(s, user, card)
    assert state is not None and state.reps == 1


def test_undo_of_a_named_answer_undoes_it_once_and_only_while_it_is_the_latest(
    engine: Engine,
) -> None:
    user, (first_card, second_card) = setup_card(engine, cards=2)
    other, _ = setup_card(engine)
    with transaction(engine) as s:
        first = f.answer(s, user, first_card, Rating.Good, now=NOW)
        second = f.answer(s, user, second_card, Rating.Again, now=NOW)
        others = f.answer(s, other, first_card, Rating.Good, now=NOW)
    # Not the latest: refused, and nothing changes.
    with pytest.raises(NotLatestAnswer, match="latest"), transaction(engine) as s:
        study.undo(s, user, now=NOW, review_id=first.review_id)
    # Someone else's answer is no answer of yours.
    with pytest.raises(NotFound), transaction(engine) as s:
        study.undo(s, user, now=NOW, review_id=others.review_id)
    with transaction(engine) as s:
        assert log_count(s, user) == 2 and log_count(s, other) == 1
        undone = study.undo(s, user, now=NOW, review_id=second.review_id)
    assert (undone.review_id, undone.card_id, undone.state) == (second.review_id, second_card, None)
    # Sent again (a retry): it is gone, and the answer before it stays.
    with pytest.raises(NotFound, match="undone already"), transaction(engine) as s:
        study.undo(s, user, now=NOW, review_id=second.review_id)
    with transaction(engine) as s:
        assert log_count(s, user) == 1 and state_row(s, user, first_card) is not None
        assert study.undo(s, user, now=NOW, review_id=first.review_id).card_id == first_card


def test_an_answer_landing_while_its_first_answer_is_undone_is_kept(engine: Engine) -> None:
    """Undoing a first answer deletes the card's state, and the logs go with their state: a
    second answer committed between the undo's read and its delete must not go with them."""
    if engine.dialect.name == "sqlite":
        pytest.skip("SQLite's writers take the lock at BEGIN: the interleaving cannot happen")
    user, (card,) = setup_card(engine)
    with transaction(engine) as s:
        first = f.answer(s, user, card, Rating.Good, now=NOW)
    meanwhile: list[study.AnswerResult] = []

    def answer_meanwhile(execute: Any) -> None:
        if not meanwhile and execute.is_delete and execute.statement.table.name == "review_states":
            with transaction(engine) as other:
                meanwhile.append(f.answer(other, user, card, Rating.Again, now=NOW))

    with Session(writer(engine), expire_on_commit=False) as s:
        event.listen(s, "do_orm_execute", answer_meanwhile)
        undone = retrying(
            s, lambda: study.undo(s, user, now=NOW), retry_on=(study.ConcurrentAnswer,)
        )
    # The undo lost the race, and on its retry undid the answer that is now the latest.
    assert meanwhile and undone.review_id == meanwhile[0].review_id
    with transaction(engine) as s:
        assert s.scalars(select(ReviewLog.review_id)).all() == [first.review_id]
        assert state_row(s, user, card) is not None
        assert state_rows.card_state(s, user, card) == first.state
