"""The card browser's search (srs/browse.py) and the bulk tag actions it offers: filters,
sorting, paging, scope and history, on SQLite and PostgreSQL with a fixed clock."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta

import pytest
from fsrs import Rating, State
from sqlalchemy import Engine, update

from flashcards.errors import CardNotFound, InvalidInput
from flashcards.srs import browse as br
from flashcards.srs import card_actions as ca
from flashcards.srs import marks as mk
from flashcards.srs import study
from flashcards.srs.card_history import load_history
from flashcards.storage.engine import transaction
from flashcards.storage.models import Card, CardText, DeckText

from . import factories as f
from .conftest import T0

NOW = T0  # 12:00 UTC; the user's study day (UTC, 4:00) is 2026-03-02
TODAY = date(2026, 3, 2)


def _setup(engine: Engine, cards: int = 6) -> tuple[int, list[int]]:
    with transaction(engine) as s:
        user = f.make_user(s)
        deck = f.make_deck(s, "browse", cards, locales=("en", "ko"))
        f.subscribe(s, user, deck)
        return user, f.card_ids(s, deck.id)


def _ids(engine: Engine, user: int, **search: object) -> list[int]:
    with transaction(engine) as s:
        page = br.browse(s, user, br.Search(**search), now=NOW)  # type: ignore[arg-type]
    return [c.id for c in page.cards]


def test_scope_is_studied_and_own_decks_never_another_persons(engine: Engine) -> None:
    user, ids = _setup(engine, 3)
    with transaction(engine) as s:
        other = f.make_user(s, email="other@example.com")
        mine = f.make_deck(s, "mine", 2, owner_user_id=user)
        theirs = f.make_deck(s, "theirs", 2, owner_user_id=other)
        f.make_deck(s, "unsubscribed", 2)
        own_ids = f.card_ids(s, mine.id)
        their_ids = f.card_ids(s, theirs.id)
        s.execute(update(Card).where(Card.id == ids[2]).values(retired_at=NOW))
    assert _ids(engine, user) == [*ids[:2], *own_ids]
    assert _ids(engine, other) == their_ids
    with transaction(engine) as s, pytest.raises(CardNotFound):
        load_history(s, other, own_ids[0])


def test_filters_each_narrow_the_page(engine: Engine) -> None:
    user, (a, b, c, d, e, g) = _setup(engine)
    with transaction(engine) as s:
        f.set_state(s, user, a, state=State.Review, due=NOW + timedelta(days=3), stability=9.0)
        f.set_state(s, user, b, state=State.Learning, due=NOW + timedelta(minutes=5))
        f.set_state(s, user, c, state=State.Relearning, due=NOW + timedelta(days=10))
        s.execute(
            update(CardText)
            .where(CardText.card_id == d, CardText.locale == "ko")
            .values(question="한국어 질문 ñandú")
        )
        ca.set_flag(s, user, [a, e], 2, now=NOW)
        ca.suspend(s, user, [b], now=NOW)
        ca.add_tag(s, user, [c, e], "verbos_ñ", now=NOW)
        s.execute(update(mk.sql.marks).where(mk.sql.marks.c.card_id == c).values(leech=True))
    assert _ids(engine, user, text="질문") == [d]
    assert _ids(engine, user, text="ÑANDÚ") == [d]  # any language, any case
    assert _ids(engine, user, text="100%") == []  # "%" is the character
    assert _ids(engine, user, state="new") == [d, e, g]
    assert _ids(engine, user, state="learning") == [b]
    assert _ids(engine, user, state="review") == [a]
    assert _ids(engine, user, state="relearning") == [c]
    assert _ids(engine, user, flag=2) == [a, e]
    assert _ids(engine, user, flag=0) == [b, c, d, g]
    assert _ids(engine, user, tag="verbos_ñ") == [c, e]
    assert _ids(engine, user, tag="verbos") == []  # a whole tag, not a part
    assert _ids(engine, user, tag="leech") == [c]
    assert _ids(engine, user, leech=True) == [c]
    assert _ids(engine, user, suspended=True) == [b]
    assert len(_ids(engine, user, suspended=False)) == 5
    assert _ids(engine, user, due_from=TODAY + timedelta(days=1)) == [a, c]
    assert _ids(engine, user, due_from=TODAY, due_to=TODAY + timedelta(days=3)) == [b, a]
    assert _ids(engine, user, deck="browse", state="review", flag=2) == [a]
    assert _ids(engine, user, deck="nothing") == []
    assert _ids(engine, user, due_from=date.min, due_to=date.max) == [b, a, c]


def test_a_deck_filter_takes_in_the_subdecks_studied_under_it(engine: Engine) -> None:
    with transaction(engine) as s:
        user = f.make_user(s)
        decks = {}
        for slug, title in [("lang", "Languages"), ("es", "Languages::Spanish"),
                            ("es-w1", "Languages::Spanish::Week 1"), ("geo", "Geography"),
                            ("lang-x", "Languages::Extra")]:  # fmt: skip
            decks[slug] = f.make_deck(s, slug, 1)
            s.execute(
                update(DeckText).where(DeckText.deck_id == decks[slug].id).values(title=title)
            )
            if slug != "lang-x":  # a subdeck the person does not study
                f.subscribe(s, user, decks[slug])
        ids = {slug: f.card_ids(s, d.id)[0] for slug, d in decks.items()}
    assert _ids(engine, user, deck="lang") == [ids["lang"], ids["es"], ids["es-w1"]]
    assert _ids(engine, user, deck="es") == [ids["es"], ids["es-w1"]]
    assert _ids(engine, user, deck="es-w1") == [ids["es-w1"]]
    assert _ids(engine, user, deck="geo") == [ids["geo"]]
    with transaction(engine) as s:
        assert sorted(br.searched_decks(s, user)) == ["es", "es-w1", "geo", "lang"]


@pytest.mark.parametrize("timezone", ["Pacific/Kiritimati", "Pacific/Pago_Pago"])
def test_the_calendars_ends_in_any_time_zone(engine: Engine, timezone: str) -> None:
    with transaction(engine) as s:
        user = f.make_user(s, timezone=timezone)
        deck = f.make_deck(s, "far", 1)
        f.subscribe(s, user, deck)
        (card,) = f.card_ids(s, deck.id)
        f.set_state(s, user, card, state=State.Review, due=NOW + timedelta(days=2))
    assert _ids(engine, user, due_from=date.min, due_to=date.max) == [card]


def test_reviewed_today_and_history(engine: Engine) -> None:
    user, (a, b, *_rest) = _setup(engine, 3)
    with transaction(engine) as s:
        f.answer(s, user, a, Rating.Good, now=NOW - timedelta(days=2))
        f.answer(s, user, a, Rating.Again, now=NOW - timedelta(minutes=10))
        f.answer(s, user, b, Rating.Good, now=NOW - timedelta(days=1))
    assert _ids(engine, user, reviewed_today=True) == [a]
    assert a not in _ids(engine, user, reviewed_today=False)
    with transaction(engine) as s:
        history = load_history(s, user, a)
    assert [x.rating for x in history.answers] == [3, 1]
    assert history.answers[0].reviewed_at == NOW - timedelta(days=2)
    assert history.answers[0].interval_days > 0 and history.answers[0].stability > 0
    assert history.question == "browse q1 en"


@pytest.mark.parametrize("order", ["asc", "desc"])
def test_sorts_put_new_cards_last_and_pages_hold_fifty(engine: Engine, order: str) -> None:
    user, ids = _setup(engine, 120)
    with transaction(engine) as s:
        for i, card_id in enumerate(ids[:60]):
            f.set_state(
                s,
                user,
                card_id,
                state=State.Review,
                due=NOW + timedelta(days=i % 7),
                stability=float(i + 1),
                last_review=NOW - timedelta(days=i),
            )
    for sort in br.SORTS:
        with transaction(engine) as s:
            search = br.Search(sort=sort, order=order)  # type: ignore[arg-type]
            first = br.browse(s, user, search, now=NOW)
            last = br.browse(s, user, replace(search, page=99), now=NOW)
        assert (first.total, first.pages, len(first.cards)) == (120, 3, 50)
        assert last.page == 3 and len(last.cards) == 20
        assert all(c.state == "new" for c in last.cards)
    with transaction(engine) as s:
        page = br.browse(s, user, br.Search(sort="stability", order=order), now=NOW)  # type: ignore[arg-type]
    values = [c.stability for c in page.cards]
    assert values == sorted(values, reverse=order == "desc")
    with transaction(engine) as s:
        page = br.browse(s, user, br.Search(sort="interval", order=order), now=NOW)  # type: ignore[arg-type]
    intervals = [c.interval_days for c in page.cards if c.interval_days is not None]
    assert intervals == sorted(intervals, reverse=order == "desc")
    # A review card's interval is whole study days, at least one (this one is due the day
    # of its last review, which no answer leaves).
    assert intervals[0] == pytest.approx(1 if order == "asc" else 59 + 59 % 7)


def test_a_review_card_moved_to_a_day_shows_that_day_and_whole_days(engine: Engine) -> None:
    # As Anki's browser: a review card's due is a day, and its interval whole days, even when
    # set due date put it at the study day's start, hours after its last answer.
    user, (a, b, *_rest) = _setup(engine)
    with transaction(engine) as s:
        last = NOW - timedelta(hours=6)
        for card_id in (a, b):
            f.set_state(s, user, card_id, state=State.Review, stability=5.0,
                        due=NOW + timedelta(days=3), last_review=last)  # fmt: skip
        f.set_state(s, user, _rest[0], state=State.Learning, stability=1.0,
                    due=NOW + timedelta(minutes=10), last_review=NOW)  # fmt: skip
        ca.set_due(s, user, [a], (1, 1), now=NOW)
    with transaction(engine) as s:
        cards = {c.id: c for c in br.browse(s, user, br.Search(), now=NOW).cards}
    assert (cards[a].due_day, cards[a].interval_days) == (TODAY + timedelta(days=1), 1)
    assert (cards[b].due_day, cards[b].interval_days) == (TODAY + timedelta(days=3), 3)
    learning = cards[_rest[0]]
    assert learning.due_day is None and learning.interval_days == pytest.approx(10 / 1440)


def test_tags_added_and_removed_in_one_undoable_action(engine: Engine) -> None:
    user, (a, b, c, *_rest) = _setup(engine)
    with transaction(engine) as s:
        ca.add_tag(s, user, [a], "old", now=NOW)
        tagged = ca.add_tag(s, user, [a, b], "verbs", now=NOW + timedelta(seconds=1))
    with transaction(engine) as s:
        assert mk.card_marks(s, user, a).tags == ("old", "verbs")
        assert mk.card_marks(s, user, b).tags == ("verbs",)
        assert study.undoable(s, user, now=NOW + timedelta(seconds=2)) == tagged.action_id
        study.undo(s, user, now=NOW + timedelta(seconds=2))
    with transaction(engine) as s:
        assert mk.card_marks(s, user, a).tags == ("old",)
        assert mk.card_marks(s, user, b).tags == ()
        ca.remove_tag(s, user, [a, c], "old", now=NOW + timedelta(seconds=3))
        assert mk.card_marks(s, user, a).tags == ()
    for bad in ("", "two words", "x" * 101, "leech", "LEECH"):
        with transaction(engine) as s, pytest.raises(InvalidInput):
            ca.add_tag(s, user, [a], bad, now=NOW)
