"""Moving cards between a person's own decks: progress, history, marks and text go along, a
key the target has is replaced, undo puts them back; refusals write nothing. The domain, on
SQLite and PostgreSQL, with a fixed clock."""

from __future__ import annotations

from datetime import timedelta

import pytest
from fsrs import Rating
from sqlalchemy import Engine, func, select

from flashcards.errors import CardNotFound, InvalidInput, NotDeckOwner, NotFound
from flashcards.srs import card_actions as ca
from flashcards.srs import marks as mk
from flashcards.srs import queue, study
from flashcards.srs.state_rows import card_state
from flashcards.storage.engine import transaction
from flashcards.storage.models import Card, CardAction, CardMark, CardText, ReviewLog, ReviewState

from . import factories as f
from .conftest import T0

NOW = T0


class World:
    """Ana's own decks 'ana-en' (3 cards, English) and 'ana-es' (2, Spanish only), a shipped
    deck and Ben's own deck."""

    def __init__(self, engine: Engine) -> None:
        with transaction(engine) as s:
            self.ana = f.make_user(s)
            self.ben = f.make_user(s)
            english = f.make_deck(s, "ana-en", 3, owner_user_id=self.ana)
            spanish = f.make_deck(s, "ana-es", 2, owner_user_id=self.ana, locales=("es",))
            shipped = f.make_deck(s, "shipped", 1)
            bens = f.make_deck(s, "bens", 1, owner_user_id=self.ben)
            for deck in (english, spanish, shipped):
                f.subscribe(s, self.ana, deck)
            self.english, self.spanish = english.id, spanish.id
            self.cards = f.card_ids(s, english.id)
            self.spanish_cards = f.card_ids(s, spanish.id)
            self.shipped_card = f.card_ids(s, shipped.id)[0]
            self.bens_card = f.card_ids(s, bens.id)[0]


def _where(engine: Engine, card: int) -> tuple[int, str, int, dict[str, str]]:
    """The card's deck, key, position and question per language."""
    with transaction(engine) as s:
        row = s.get(Card, card)
        assert row is not None
        texts = {
            t.locale: t.question
            for t in s.scalars(select(CardText).where(CardText.card_id == card))
        }
        return row.deck_id, row.key, row.position, texts


def _decks_of_copies(engine: Engine, card: int) -> set[int]:
    with transaction(engine) as s:
        decks = set(s.scalars(select(ReviewState.deck_id).where(ReviewState.card_id == card)))
        decks |= set(s.scalars(select(ReviewLog.deck_id).where(ReviewLog.card_id == card)))
        return decks | set(s.scalars(select(CardMark.deck_id).where(CardMark.card_id == card)))


def test_a_moved_card_keeps_its_progress_history_marks_and_text_and_undo_puts_it_back(
    engine: Engine,
) -> None:
    w = World(engine)
    a, b, _c = w.cards
    with transaction(engine) as s:
        f.answer(s, w.ana, a, Rating.Easy, now=NOW - timedelta(days=3))
        ca.set_flag(s, w.ana, [a], 2, now=NOW - timedelta(days=3))
        studied = card_state(s, w.ana, a)
    before = _where(engine, a)
    with transaction(engine) as s:
        moved = ca.act(s, w.ana, [a, b], "move", now=NOW, deck="ana-es")
    assert moved.card_ids == (a, b)
    deck, key, position, texts = _where(engine, a)
    # Its key was the Spanish deck's c01 too: a new one; last in its new deck.
    assert deck == w.spanish and key not in ("c01", "c02") and position == 3
    assert _where(engine, b)[2] == 4
    # The question it was studied with, now the Spanish deck's text of it.
    assert texts == {"es": "ana-en q1 en"}
    assert _decks_of_copies(engine, a) == {w.spanish}
    with transaction(engine) as s:
        assert card_state(s, w.ana, a) == studied
        assert mk.card_marks(s, w.ana, a).flag == 2
        counts = queue.counts_by_deck(s, w.ana, now=NOW)
        assert (counts[w.english].new, counts[w.spanish].new) == (1, 3)
        assert study.undoable(s, w.ana, now=NOW) == moved.action_id
        study.undo(s, w.ana, now=NOW)
    assert _where(engine, a) == before
    assert _where(engine, b)[:3] == (w.english, "c02", 2)
    assert _decks_of_copies(engine, a) == {w.english}
    with transaction(engine) as s:
        assert card_state(s, w.ana, a) == studied and mk.card_marks(s, w.ana, a).flag == 2
        assert (
            s.scalar(
                select(func.count()).select_from(CardAction).where(CardAction.action == "move")
            )
            == 0
        )


def test_a_card_already_in_the_target_deck_stays_and_gets_no_undo_row(engine: Engine) -> None:
    w = World(engine)
    with transaction(engine) as s:
        ca.move(s, w.ana, [w.spanish_cards[0]], "ana-es", now=NOW)
        assert s.scalar(select(func.count()).select_from(CardAction)) == 0
    assert _where(engine, w.spanish_cards[0])[:3] == (w.spanish, "c01", 1)


@pytest.mark.parametrize(
    ("cards", "deck", "error"),
    [
        ("own", "bens", NotFound),  # another person's deck: not theirs to see
        ("own", "no-such-deck", NotFound),
        ("own", "shipped", NotDeckOwner),
        ("shipped", "ana-es", NotDeckOwner),
        ("bens", "ana-es", CardNotFound),
        ("own", "", InvalidInput),
        ("own", None, InvalidInput),
    ],
)
def test_only_own_decks_and_nothing_written_otherwise(
    engine: Engine, cards: str, deck: object, error: type[Exception]
) -> None:
    w = World(engine)
    picked = {"own": [w.cards[0]], "shipped": [w.cards[1], w.shipped_card], "bens": [w.bens_card]}
    with transaction(engine) as s, pytest.raises(error):
        ca.act(s, w.ana, picked[cards], "move", now=NOW, deck=deck)  # type: ignore[arg-type]
    assert _where(engine, w.cards[0])[:3] == (w.english, "c01", 1)
    assert _where(engine, w.cards[1])[:3] == (w.english, "c02", 2)
