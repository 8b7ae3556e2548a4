"""Actions on cards (suspend, bury, flag, forget, set due), the queue that hides them, their
undo, sibling burying and leeches: the domain, on SQLite and PostgreSQL, with a fixed clock."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from fsrs import Rating, State
from sqlalchemy import Engine, select, update

from flashcards.errors import CardNotFound, CardNotStudied, InvalidInput
from flashcards.srs import answer_effects as effects
from flashcards.srs import card_actions as ca
from flashcards.srs import marks as mk
from flashcards.srs import queue, study
from flashcards.srs.state_rows import card_state
from flashcards.storage.engine import transaction
from flashcards.storage.models import Card, CardAction, ReviewState

from . import factories as f
from .conftest import T0

NOW = T0  # 12:00 UTC; the user's study day (UTC, 4:00) is 2026-03-02
TODAY = date(2026, 3, 2)


def _setup(engine: Engine, cards: int = 4) -> tuple[int, list[int]]:
    with transaction(engine) as s:
        user = f.make_user(s)
        deck = f.make_deck(s, "acts", cards)
        f.subscribe(s, user, deck)
        return user, f.card_ids(s, deck.id)


def _queue(engine: Engine, user: int, now: object = NOW) -> tuple[list[int], queue.QueueCounts]:
    """Every card the queue would show today, in order (answering each Good), and the first
    counts."""
    with transaction(engine) as s:
        card, counts = queue.next_card(s, user, now=now)  # type: ignore[arg-type]
    return ([card.card_id] if card else []), counts


def test_suspended_and_buried_cards_are_neither_shown_nor_counted(engine: Engine) -> None:
    user, (a, b, c, d) = _setup(engine)
    with transaction(engine) as s:
        f.set_state(s, user, c, state=State.Review, due=NOW - timedelta(hours=1))
        f.set_state(s, user, d, state=State.Learning, due=NOW - timedelta(minutes=1))
    with transaction(engine) as s:
        _card, before = queue.next_card(s, user, now=NOW)
    assert (before.new, before.review, before.learning) == (2, 1, 1)
    with transaction(engine) as s:
        ca.suspend(s, user, [a, c], now=NOW)
        ca.bury(s, user, [d], now=NOW)
    with transaction(engine) as s:
        card, counts = queue.next_card(s, user, now=NOW)
    assert (counts.new, counts.review, counts.learning) == (1, 0, 0)
    assert card is not None and card.card_id == b
    with transaction(engine) as s:
        assert mk.card_marks(s, user, d).buried_until == TODAY + timedelta(days=1)
    # The next study day, the buried card is back; the suspended ones are not.
    with transaction(engine) as s:
        card, counts = queue.next_card(s, user, now=NOW + timedelta(days=1))
    assert counts.learning == 1 and counts.review == 0
    assert card is not None and card.card_id == d


def test_each_action_is_undone_like_an_answer_latest_first(engine: Engine) -> None:
    user, (a, b, *_rest) = _setup(engine)
    with transaction(engine) as s:
        answered = f.answer(s, user, a, Rating.Good, now=NOW)
        flagged = ca.set_flag(s, user, [a], 3, now=NOW + timedelta(seconds=5))
        suspended = ca.suspend(s, user, [a, b], now=NOW + timedelta(seconds=9))
    later = NOW + timedelta(seconds=20)
    with transaction(engine) as s:
        assert study.undoable(s, user, now=later) == suspended.action_id
        # Naming an older one is refused, as for answers.
        with pytest.raises(study.NotLatestAnswer):
            study.undo(s, user, now=later, review_id=flagged.action_id)
    with transaction(engine) as s:
        result = study.undo(s, user, now=later, review_id=suspended.action_id)
        assert result.card_id == a
        assert not mk.card_marks(s, user, a).suspended and mk.card_marks(s, user, a).flag == 3
        assert mk.card_marks(s, user, b) == mk.Marks()
    with transaction(engine) as s:
        study.undo(s, user, now=later)  # the flag
        assert mk.card_marks(s, user, a) == mk.Marks()
        assert study.undoable(s, user, now=later) == answered.review_id
    with transaction(engine) as s:
        study.undo(s, user, now=later)
        assert card_state(s, user, a) is None
        assert s.scalar(select(CardAction.id)) is None
    with transaction(engine) as s, pytest.raises(study.NothingToUndo):
        study.undo(s, user, now=later)


def test_set_due_moves_studied_cards_to_a_study_day_of_the_range(engine: Engine) -> None:
    user, (a, b, *_rest) = _setup(engine)
    with transaction(engine) as s:
        f.set_state(s, user, a, state=State.Review, due=NOW + timedelta(days=40))
    with transaction(engine) as s:
        ca.set_due(s, user, [a], ca.parse_due_days("0"), now=NOW)
        state = card_state(s, user, a)
        assert state is not None and state.due == NOW
        ca.set_due(s, user, [a], ca.parse_due_days("3-5"), now=NOW)
        state = card_state(s, user, a)
        assert state is not None
        assert (state.due - timedelta(hours=4)).date() in {
            TODAY + timedelta(days=n) for n in (3, 4, 5)
        }
        assert state.due.hour == 4
    with transaction(engine) as s, pytest.raises(CardNotStudied):
        ca.set_due(s, user, [b], (1, 1), now=NOW)
    for bad in ("", "x", "5-3", "-1", "1-99999", True, None):
        with pytest.raises(InvalidInput):
            ca.parse_due_days(bad)


def test_bad_values_and_other_peoples_cards_are_refused_with_nothing_written(
    engine: Engine,
) -> None:
    user, (a, *_rest) = _setup(engine)
    with transaction(engine) as s:
        other = f.make_user(s)
        private = f.make_deck(s, "private", 1, owner_user_id=other)
        hidden_card = f.card_ids(s, private.id)[0]
    with transaction(engine) as s:
        for flag in (-1, 8, True, "2"):
            with pytest.raises(InvalidInput):
                ca.set_flag(s, user, [a], flag, now=NOW)  # type: ignore[arg-type]
        with pytest.raises(CardNotFound):
            ca.suspend(s, user, [a, hidden_card], now=NOW)
        with pytest.raises(InvalidInput):
            ca.bury(s, user, [a], now=NOW, until=TODAY)
        s.rollback()
    with transaction(engine) as s:
        assert mk.card_marks(s, user, a) == mk.Marks()
        assert s.scalar(select(CardAction.id)) is None


def test_is_leech_follows_ankis_threshold_and_half_threshold() -> None:
    assert [n for n in range(1, 21) if effects.is_leech(n, 8)] == [8, 12, 16, 20]
    assert [n for n in range(1, 6) if effects.is_leech(n, 1)] == [1, 2, 3, 4, 5]
    assert [n for n in range(1, 10) if effects.is_leech(n, 3)] == [3, 4, 5, 6, 7, 8, 9]


def _lapse_state(engine: Engine, user: int, card: int, lapses: int) -> None:
    with transaction(engine) as s:
        f.set_state(s, user, card, state=State.Review, due=NOW - timedelta(hours=1),
                    last_review=NOW - timedelta(days=5))  # fmt: skip
        s.execute(
            update(ReviewState)
            .where(ReviewState.user_id == user, ReviewState.card_id == card)
            .values(lapses=lapses)
        )


def test_a_lapse_reaching_the_threshold_tags_a_leech_and_undo_takes_it_back(
    engine: Engine,
) -> None:
    user, (a, b, *_rest) = _setup(engine)
    _lapse_state(engine, user, a, 7)
    _lapse_state(engine, user, b, 6)
    with transaction(engine) as s:
        result = f.answer(s, user, a, Rating.Again, now=NOW)
        f.answer(s, user, b, Rating.Again, now=NOW)
    with transaction(engine) as s:
        assert mk.card_marks(s, user, a).leech and not mk.card_marks(s, user, a).suspended
        assert not mk.card_marks(s, user, b).leech
        assert mk.card_marks(s, user, a).all_tags(["x"]) == ["x", "leech"]
        study.undo(s, user, now=NOW)  # b's answer
        study.undo(s, user, now=NOW, review_id=result.review_id)
        assert mk.card_marks(s, user, a) == mk.Marks()


def test_the_leech_option_suspends_and_answers_through_the_direct_connection_too(
    engine: Engine,
) -> None:
    user, (a, *_rest) = _setup(engine)
    _lapse_state(engine, user, a, 11)
    with transaction(engine) as s:
        effects.set_options(s, user, leech_suspend=True)
    from flashcards.hot_sql.rawsql import DirectConnection

    connection = DirectConnection(engine)
    try:
        study.answer(connection, user, a, Rating.Again, "0b7c0f63-6f69-4c1b-9d2e-7e1d3f2c1a01",
                     now=NOW)  # fmt: skip
    finally:
        connection.close()
    with transaction(engine) as s:
        marks = mk.card_marks(s, user, a)
        assert marks.leech and marks.suspended
        card, _counts = queue.next_card(s, user, now=NOW + timedelta(hours=1))
        assert card is None or card.card_id != a


def _note(engine: Engine, cards: list[int]) -> None:
    with transaction(engine) as s:
        s.execute(update(Card).where(Card.id.in_(cards)).values(note_key="anki-1"))


def test_answering_buries_siblings_only_as_the_options_say(engine: Engine) -> None:
    user, (a, b, c, d) = _setup(engine)
    _note(engine, [a, b, c])  # d is alone
    with transaction(engine) as s:
        f.set_state(s, user, c, state=State.Review, due=NOW - timedelta(hours=2))
    # Anki's defaults: nothing is buried.
    with transaction(engine) as s:
        f.answer(s, user, a, Rating.Good, now=NOW)
        assert mk.card_marks(s, user, b) == mk.Marks() == mk.card_marks(s, user, c)
        study.undo(s, user, now=NOW)
        effects.set_options(s, user, bury_new=True)
    with transaction(engine) as s:
        answered = f.answer(s, user, a, Rating.Good, now=NOW)
    with transaction(engine) as s:
        assert mk.card_marks(s, user, b).buried_until == TODAY + timedelta(days=1)
        assert mk.card_marks(s, user, c) == mk.Marks()  # a review: bury_reviews is off
        assert mk.card_marks(s, user, d) == mk.Marks()
        _card, counts = queue.next_card(s, user, now=NOW + timedelta(minutes=1))
        assert counts.new == 1  # d only
        study.undo(s, user, now=NOW, review_id=answered.review_id)
        assert mk.card_marks(s, user, b) == mk.Marks()
    with transaction(engine) as s:
        effects.set_options(s, user, bury_reviews=True)
        f.answer(s, user, a, Rating.Good, now=NOW)
        assert mk.card_marks(s, user, c).buried_until == TODAY + timedelta(days=1)


def test_options_are_validated(engine: Engine) -> None:
    user, _cards = _setup(engine, 1)
    with transaction(engine) as s:
        assert effects.options(s, user) == effects.Options()
        for bad in ({"leech_threshold": 0}, {"bury_new": "yes"}, {"nope": True}):
            with pytest.raises(InvalidInput):
                effects.set_options(s, user, **bad)
        assert effects.set_options(s, user, leech_threshold=4).leech_threshold == 4


def test_the_hidden_counts_are_driven_by_the_decks_marks(engine: Engine) -> None:
    """On SQLite, each count of hidden cards is a range of the deck's marks, never a scan of
    the person's due states probing each one's mark."""
    if engine.dialect.name != "sqlite":
        pytest.skip("SQLite's plan")
    from flashcards.hot_sql import next_card as next_card_sql

    compiled = next_card_sql._PLANS.compiled(engine.dialect, {})
    params = compiled.parameters(
        {"user_id": 1, "day_start": NOW, "day_end": NOW, "learn_ahead_until": NOW, "today": TODAY}
    )
    raw = engine.raw_connection()
    try:
        rows = raw.driver_connection.execute("EXPLAIN QUERY PLAN " + compiled.sql, params)
        plan = [row[3] for row in rows.fetchall()]
    finally:
        raw.close()
    marks = [line for line in plan if "card_marks" in line]
    assert len(marks) == 3 and all("ix_card_marks_user_deck" in line for line in marks), plan
    assert not any("ix_review_states_user_due " in line for line in plan), plan
