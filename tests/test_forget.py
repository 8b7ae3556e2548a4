"""Forget as Anki's: a card back among the new cards (at the end of them, or at its own place),
its history kept, within the day's new-card limit; answering it and undoing either. The
domain, on SQLite and PostgreSQL, with a fixed clock."""

from __future__ import annotations

from datetime import timedelta

import pytest
from fsrs import Rating, State
from sqlalchemy import Engine, func, select, text, update

from flashcards.errors import CardNotStudied
from flashcards.people.accounts import user_clock
from flashcards.srs import answer_effects as effects
from flashcards.srs import card_actions as ca
from flashcards.srs import custom_study, queue, stats, study
from flashcards.srs import marks as mk
from flashcards.srs.scheduling import SchedulerConfig, review
from flashcards.srs.state_rows import NEW_STATE, card_state
from flashcards.storage import migrate
from flashcards.storage.engine import transaction
from flashcards.storage.models import Card, ReviewLog, ReviewState, SchedulerSettings

from . import factories as f
from .conftest import T0

NOW = T0  # 12:00 UTC; the user's study day (UTC, 4:00) is 2026-03-02


def _setup(engine: Engine, cards: int = 4, new_per_day: int = 20) -> tuple[int, list[int]]:
    with transaction(engine) as s:
        user = f.make_user(s)
        deck = f.make_deck(s, "forget", cards)
        f.subscribe(s, user, deck)
        s.execute(
            update(SchedulerSettings)
            .where(SchedulerSettings.user_id == user)
            .values(new_per_day=new_per_day)
        )
        return user, f.card_ids(s, deck.id)


def _studied(engine: Engine, user: int, cards: list[int], days_ago: int = 3) -> None:
    """Each card answered Easy days ago: in review now, due later."""
    with transaction(engine) as s:
        for card in cards:
            f.answer(s, user, card, Rating.Easy, now=NOW - timedelta(days=days_ago))


def _new_order(engine: Engine, user: int) -> list[int]:
    """The new cards the queue shows today, in order (each buried once seen, then unburied)."""
    shown: list[int] = []
    with transaction(engine) as s:
        while True:
            card, _counts = queue.next_card(s, user, now=NOW)
            if card is None or card.kind != "new":
                break
            shown.append(card.card_id)
            ca.bury(s, user, [card.card_id], now=NOW)
        s.rollback()
    return shown


def _logs(engine: Engine, user: int, card: int) -> int:
    with transaction(engine) as s:
        return s.scalar(
            select(func.count()).where(ReviewLog.user_id == user, ReviewLog.card_id == card)
        )


def test_a_forgotten_card_is_new_again_after_the_new_cards_with_its_history(
    engine: Engine,
) -> None:
    user, (a, b, c, d) = _setup(engine)
    _studied(engine, user, [a, b])
    with transaction(engine) as s:
        _card, counts = queue.next_card(s, user, now=NOW)
        assert (counts.new, counts.learning, counts.review) == (2, 0, 0)
        reps = card_state(s, user, a).reps  # type: ignore[union-attr]
    with transaction(engine) as s:
        ca.forget(s, user, [b, a], now=NOW)
    with transaction(engine) as s:
        assert card_state(s, user, a) is None  # new to them again
        row = s.get(ReviewState, (user, a))
        assert row is not None and row.state == NEW_STATE and row.reps == reps
        _card, counts = queue.next_card(s, user, now=NOW)
        assert (counts.new, counts.learning, counts.review) == (4, 0, 0)
        assert stats.cards_by_state(s, user)["new"] == 4
    # After the cards new before, in the order forgotten (Anki's default).
    assert _new_order(engine, user) == [c, d, b, a]
    assert _logs(engine, user, a) == 1  # the history stays


def test_restore_position_and_reset_counts(engine: Engine) -> None:
    user, (a, b, c, d) = _setup(engine)
    _studied(engine, user, [a, c])
    with transaction(engine) as s:
        ca.forget(s, user, [c, a], now=NOW, restore_position=True, reset_counts=True)
    assert _new_order(engine, user) == [a, b, c, d]
    with transaction(engine) as s:
        row = s.get(ReviewState, (user, a))
        assert row is not None and (row.reps, row.lapses) == (0, 0)
    assert _logs(engine, user, a) == 1


def test_forgotten_cards_count_against_the_days_new_card_limit(engine: Engine) -> None:
    user, (a, b, c, _d) = _setup(engine, new_per_day=2)
    _studied(engine, user, [a, b, c])
    with transaction(engine) as s:
        ca.forget(s, user, [a, b, c], now=NOW, restore_position=True)
    with transaction(engine) as s:
        card, counts = queue.next_card(s, user, now=NOW)
        assert counts.new == 2 and card is not None and card.card_id == a
        assert card.kind == "new" and card.state is not None and card.state.stability is None
        f.answer(s, user, a, Rating.Good, now=NOW)
    with transaction(engine) as s:
        card, counts = queue.next_card(s, user, now=NOW + timedelta(seconds=1))
        assert counts.new == 1 and counts.learning == 1
        assert card is not None and card.card_id == b
        f.answer(s, user, b, Rating.Good, now=NOW + timedelta(seconds=1))
    with transaction(engine) as s:
        _card, counts = queue.next_card(s, user, now=NOW + timedelta(seconds=2))
        assert counts.new == 0  # c waits for tomorrow, as a new card would


def test_answering_a_forgotten_card_starts_it_over_and_undo_forgets_it_again(
    engine: Engine,
) -> None:
    user, (a, *_rest) = _setup(engine)
    _studied(engine, user, [a])
    with transaction(engine) as s:
        f.answer(s, user, a, Rating.Again, now=NOW - timedelta(days=1))  # a lapse
        studied = card_state(s, user, a)
        assert studied is not None and studied.lapses == 1
        forgot = ca.forget(s, user, [a], now=NOW)
        position = s.get(ReviewState, (user, a)).new_position  # type: ignore[union-attr]
    later = NOW + timedelta(minutes=1)
    with transaction(engine) as s:
        result = f.answer(s, user, a, Rating.Good, now=later)
        # As a new card's first answer (no memory carried over), with the counts kept.
        fresh = review(SchedulerConfig(), None, Rating.Good, later, seed=None)
        assert result.state.state == State.Learning
        assert result.state.stability == pytest.approx(fresh.stability)
        assert (result.state.reps, result.state.lapses) == (studied.reps + 1, 1)
        row = s.get(ReviewState, (user, a))
        assert row is not None and row.introduced_at == later
        log = s.scalars(select(ReviewLog).where(ReviewLog.review_id == result.review_id)).one()
        assert log.state_before == NEW_STATE
    with transaction(engine) as s:
        _card, counts = queue.next_card(s, user, now=later)
        assert counts.new == 3 and counts.learning == 1
        assert study.undo(s, user, now=later).state is None  # the answer: forgotten again
    with transaction(engine) as s:
        row = s.get(ReviewState, (user, a))
        assert row is not None and row.state == NEW_STATE and row.new_position == position
        card, counts = queue.next_card(s, user, now=later)
        assert counts.new == 4 and card is not None
        assert study.undoable(s, user, now=later) == forgot.action_id
        study.undo(s, user, now=later)  # the forget
        assert card_state(s, user, a) == studied
    assert _logs(engine, user, a) == 2  # the undone answer is gone, the rest stay


def test_forgetting_again_moves_it_to_the_end_and_undo_puts_it_back(engine: Engine) -> None:
    user, (a, b, c, d) = _setup(engine)
    _studied(engine, user, [a, b])
    with transaction(engine) as s:
        ca.forget(s, user, [a], now=NOW)
        ca.forget(s, user, [b], now=NOW + timedelta(seconds=1))
    assert _new_order(engine, user) == [c, d, a, b]
    with transaction(engine) as s:
        ca.forget(s, user, [a], now=NOW + timedelta(seconds=2))
    assert _new_order(engine, user) == [c, d, b, a]
    with transaction(engine) as s:
        study.undo(s, user, now=NOW + timedelta(seconds=3))
    assert _new_order(engine, user) == [c, d, a, b]


def test_a_forgotten_card_has_no_schedule_to_set(engine: Engine) -> None:
    user, (a, b, *_rest) = _setup(engine)
    _studied(engine, user, [a])
    with transaction(engine) as s:
        ca.forget(s, user, [a], now=NOW)
    with transaction(engine) as s, pytest.raises(CardNotStudied):
        ca.set_due(s, user, [a], (1, 1), now=NOW)
    with transaction(engine) as s, pytest.raises(CardNotStudied):
        ca.forget(s, user, [b], now=NOW)  # never studied: new already


def test_hidden_forgotten_cards_are_neither_shown_nor_counted(engine: Engine) -> None:
    user, (a, b, *_rest) = _setup(engine, cards=2)
    _studied(engine, user, [a, b])
    with transaction(engine) as s:
        ca.forget(s, user, [a, b], now=NOW)
        ca.suspend(s, user, [a], now=NOW)
    with transaction(engine) as s:
        card, counts = queue.next_card(s, user, now=NOW)
        assert counts.new == 1 and card is not None and card.card_id == b


def test_a_forgotten_sibling_is_buried_as_a_new_one(engine: Engine) -> None:
    user, (a, b, *_rest) = _setup(engine)
    with transaction(engine) as s:
        s.execute(update(Card).where(Card.id.in_([a, b])).values(note_key="anki-1"))
    _studied(engine, user, [b], days_ago=10)
    with transaction(engine) as s:
        ca.forget(s, user, [b], now=NOW - timedelta(days=1))
        effects.set_options(s, user, bury_new=False, bury_interday=True)
        f.answer(s, user, a, Rating.Good, now=NOW)
        assert mk.card_marks(s, user, b) == mk.Marks()  # not an interday learning card
        study.undo(s, user, now=NOW)
        effects.set_options(s, user, bury_new=True, bury_interday=False)
        f.answer(s, user, a, Rating.Good, now=NOW)
        assert mk.card_marks(s, user, b).buried_until is not None


def test_going_back_before_0025_leaves_forgotten_cards_learning_with_their_history(
    engine: Engine,
) -> None:
    user, (a, b, *_rest) = _setup(engine)
    _studied(engine, user, [a, b])
    with transaction(engine) as s:
        ca.forget(s, user, [a, b], now=NOW)
        f.answer(s, user, b, Rating.Good, now=NOW)
    migrate.downgrade(engine, "0023")
    with engine.connect() as conn:
        states = dict(conn.execute(text("SELECT card_id, state FROM review_states")).all())
        befores = [row[0] for row in conn.execute(text("SELECT state_before FROM review_logs"))]
    assert states == {a: 1, b: 1} and NEW_STATE not in befores and len(befores) == 3
    migrate.upgrade(engine)


def test_custom_study_previews_a_forgotten_card_as_a_new_one(engine: Engine) -> None:
    user, (a, b, c, d) = _setup(engine)
    _studied(engine, user, [a, b, c, d])
    with transaction(engine) as s:
        ca.forget(s, user, [b], now=NOW)
    with transaction(engine) as s:
        clock = user_clock(s, user)
        custom_study.start(s, user, mode="preview", deck="forget", amount=5, now=NOW, clock=clock)
        card, _session = custom_study.next_card(s, user, now=NOW, clock=clock)
        assert card is not None and (card.card_id, card.kind) == (b, "new")
