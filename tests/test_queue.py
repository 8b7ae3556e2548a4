"""The due queue: order, daily limits, learn-ahead, retired cards, subscriptions, counts."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import psycopg
from fsrs import Rating, State
from sqlalchemy import Engine, delete, update

from flashcards.hot_sql import next_card as next_card_sql
from flashcards.srs import queue, subscriptions
from flashcards.storage.engine import transaction
from flashcards.storage.models import Card, CardText, DeckText

from . import factories as f
from .conftest import T0

NOW = T0  # 12:00 UTC; the user's day (UTC, 4:00) runs from 04:00 to 04:00 next day.


def next_ids(engine: Engine, user: int, now: object = NOW, **kwargs: object) -> list[int]:
    """The cards the queue serves, in order, answering each Good as it comes."""
    served = []
    for _ in range(100):
        with transaction(engine) as s:
            card, _counts = queue.next_card(s, user, now=now, **kwargs)  # type: ignore[arg-type]
            if card is None:
                return served
            served.append(card.card_id)
            f.answer(s, user, card.card_id, Rating.Easy, now=now)  # type: ignore[arg-type]
    raise AssertionError("queue never emptied")


def test_order_is_learning_then_review_then_new(engine: Engine) -> None:
    with transaction(engine) as s:
        user = f.make_user(s)
        deck = f.make_deck(s, "order", 4)
        f.subscribe(s, user, deck)
        new, review, learning, _ = f.card_ids(s, deck.id)
        f.set_state(s, user, review, state=State.Review, due=NOW - timedelta(days=1))
        f.set_state(s, user, learning, state=State.Learning, due=NOW - timedelta(minutes=1))
        # An earlier-due review must not jump ahead of a learning card.
        s.execute(update(Card).where(Card.id == new).values(position=0))
    with transaction(engine) as s:
        card, counts = queue.next_card(s, user, now=NOW)
    assert card is not None and (card.card_id, card.kind) == (learning, "learning")
    assert (counts.learning, counts.review, counts.new) == (1, 1, 2)
    assert next_ids(engine, user) == [learning, review, new, _]


def test_new_cards_come_in_deck_order_with_text_in_the_subscribed_locale(engine: Engine) -> None:
    with transaction(engine) as s:
        user = f.make_user(s)
        deck = f.make_deck(s, "ordered", 4, locales=("en", "es"))
        f.subscribe(s, user, deck, "es")
        ids = f.card_ids(s, deck.id)
        # Positions, not ids, decide the order.
        for position, card_id in zip([4, 2, 3, 1], ids, strict=True):
            s.execute(update(Card).where(Card.id == card_id).values(position=position))
    with transaction(engine) as s:
        card, _ = queue.next_card(s, user, now=NOW)
    assert card is not None and card.kind == "new" and card.state is None
    assert (card.locale, card.deck_slug, card.key) == ("es", "ordered", "c04")
    assert card.question == "ordered q4 es"
    assert next_ids(engine, user) == [ids[3], ids[1], ids[2], ids[0]]


def test_a_card_missing_the_subscribed_locale_is_shown_in_the_decks(engine: Engine) -> None:
    with transaction(engine) as s:
        user = f.make_user(s)
        deck = f.make_deck(s, "partial", 2, locales=("en", "es"))
        f.subscribe(s, user, deck, "es")
        review, new = f.card_ids(s, deck.id)
        s.execute(
            delete(CardText).where(CardText.card_id.in_([review, new]), CardText.locale == "es")
        )
        f.set_state(s, user, review, state=State.Review, due=NOW - timedelta(days=1))
    with transaction(engine) as s:
        card, _ = queue.next_card(s, user, now=NOW)
        assert card is not None and (card.card_id, card.kind, card.locale) == (
            review,
            "review",
            "en",
        )
        assert (card.question, card.answer, card.key) == ("partial q1 en", "partial a1 en", "c01")
        f.answer(s, user, review, Rating.Easy, now=NOW)
    with transaction(engine) as s:
        card, _ = queue.next_card(s, user, now=NOW)
    assert card is not None and (card.card_id, card.kind, card.locale) == (new, "new", "en")
    assert card.question == "partial q2 en"


def test_daily_new_limit_defaults_to_20_and_resets_next_study_day(engine: Engine) -> None:
    with transaction(engine) as s:
        user = f.make_user(s)
        deck = f.make_deck(s, "many", 25)
        f.subscribe(s, user, deck)
    with transaction(engine) as s:
        _card, counts = queue.next_card(s, user, now=NOW)
    assert counts.new == 20
    assert len(next_ids(engine, user)) == 20
    # Late the same study day (03:59 next calendar day), still nothing new.
    with transaction(engine) as s:
        card, counts = queue.next_card(s, user, now=NOW + timedelta(hours=15, minutes=59))
    assert counts.new == 0 and (card is None or card.kind != "new")
    # From 04:00 the allowance is back: the 5 cards left.
    with transaction(engine) as s:
        _card, counts = queue.next_card(s, user, now=NOW + timedelta(hours=16))
    assert counts.new == 5


def test_subscription_overrides_the_new_limit_and_counts_today_introductions(
    engine: Engine,
) -> None:
    with transaction(engine) as s:
        user = f.make_user(s, new_per_day=10)
        small = f.make_deck(s, "small", 8)
        big = f.make_deck(s, "big", 8)
        f.subscribe(s, user, small, new_per_day=3)
        f.subscribe(s, user, big)
        small_ids = f.card_ids(s, small.id)
        f.answer(s, user, small_ids[0], Rating.Good, now=NOW - timedelta(hours=1))
        # Introduced yesterday: does not count against today.
        f.answer(s, user, small_ids[1], Rating.Easy, now=NOW - timedelta(days=1))
    with transaction(engine) as s:
        _card, counts = queue.next_card(s, user, now=NOW, deck_ids=[small.id])
        assert counts.new == 2
        _card, counts = queue.next_card(s, user, now=NOW, deck_ids=[big.id])
        assert counts.new == 8
        _card, counts = queue.next_card(s, user, now=NOW)
        assert counts.new == 10


def test_daily_review_limit(engine: Engine) -> None:
    with transaction(engine) as s:
        user = f.make_user(s, reviews_per_day=2)
        deck = f.make_deck(s, "reviews", 4)
        f.subscribe(s, user, deck, new_per_day=0)
        ids = f.card_ids(s, deck.id)
        for i, card_id in enumerate(ids):
            f.set_state(s, user, card_id, state=State.Review, due=NOW - timedelta(hours=4 - i))
    with transaction(engine) as s:
        card, counts = queue.next_card(s, user, now=NOW)
    assert counts.review == 2
    assert card is not None and card.card_id == ids[0]  # most overdue first
    assert next_ids(engine, user) == ids[:2]
    with transaction(engine) as s:
        assert queue.next_card(s, user, now=NOW)[1].review == 0
    # The subscription may raise it.
    with transaction(engine) as s:
        f.subscribe(s, user, subscriptions.find_visible_deck(s, user, "reviews"), reviews_per_day=3)
    with transaction(engine) as s:
        card, counts = queue.next_card(s, user, now=NOW)
    assert counts.review == 1 and card is not None and card.card_id == ids[2]


def test_learn_ahead_only_when_nothing_else_is_due(engine: Engine) -> None:
    with transaction(engine) as s:
        user = f.make_user(s)
        deck = f.make_deck(s, "ahead", 3)
        f.subscribe(s, user, deck, new_per_day=0)
        soon, later, review = f.card_ids(s, deck.id)
        f.set_state(s, user, soon, state=State.Learning, due=NOW + timedelta(minutes=10))
        f.set_state(s, user, later, state=State.Relearning, due=NOW + timedelta(minutes=30))
        f.set_state(s, user, review, state=State.Review, due=NOW - timedelta(days=1))
    with transaction(engine) as s:
        card, counts = queue.next_card(s, user, now=NOW)
    assert card is not None and card.card_id == review
    assert counts.learning == 1  # the one within the window
    with transaction(engine) as s:
        f.answer(s, user, review, Rating.Easy, now=NOW)
    with transaction(engine) as s:
        card, counts = queue.next_card(s, user, now=NOW)
    assert card is not None and (card.card_id, card.kind) == (soon, "learning")
    with transaction(engine) as s:
        f.answer(s, user, soon, Rating.Easy, now=NOW)
    # 30 minutes ahead is outside the window: nothing to do.
    with transaction(engine) as s:
        card, counts = queue.next_card(s, user, now=NOW)
    assert card is None and counts.learning == 0
    with transaction(engine) as s:
        card, _ = queue.next_card(s, user, now=NOW + timedelta(minutes=11))
    assert card is not None and card.card_id == later


def test_learn_ahead_yields_to_new_cards(engine: Engine) -> None:
    with transaction(engine) as s:
        user = f.make_user(s)
        deck = f.make_deck(s, "ahead-new", 2)
        f.subscribe(s, user, deck)
        soon, new = f.card_ids(s, deck.id)
        f.set_state(s, user, soon, state=State.Learning, due=NOW + timedelta(minutes=10))
    with transaction(engine) as s:
        card, _ = queue.next_card(s, user, now=NOW)
    assert card is not None and (card.card_id, card.kind) == (new, "new")


def test_retired_cards_are_not_introduced_and_unsubscribed_decks_not_served(
    engine: Engine,
) -> None:
    with transaction(engine) as s:
        user = f.make_user(s)
        deck = f.make_deck(s, "retiring", 3)
        other = f.make_deck(s, "other", 2)
        f.subscribe(s, user, deck)
        ids = f.card_ids(s, deck.id)
        s.execute(update(Card).where(Card.id == ids[0]).values(retired_at=NOW))
    with transaction(engine) as s:
        card, counts = queue.next_card(s, user, now=NOW)
    assert card is not None and card.card_id == ids[1] and counts.new == 2
    assert ids[0] not in next_ids(engine, user)
    with transaction(engine) as s:
        f.subscribe(s, user, other)
    with transaction(engine) as s:
        card, counts = queue.next_card(s, user, now=NOW)
    assert card is not None and card.deck_slug == "other" and counts.new == 2
    with transaction(engine) as s:
        assert subscriptions.unsubscribe(s, user, other)
    with transaction(engine) as s:
        assert queue.next_card(s, user, now=NOW) == (None, queue.QueueCounts())


def test_retired_cards_with_states_are_neither_counted_nor_served(engine: Engine) -> None:
    with transaction(engine) as s:
        user = f.make_user(s)
        deck = f.make_deck(s, "retired-states", 6)
        f.subscribe(s, user, deck)
        review, learning, seen, live_review, *new = f.card_ids(s, deck.id)
        yesterday = NOW - timedelta(days=1)
        f.set_state(s, user, review, state=State.Review, due=yesterday, introduced_at=yesterday)
        f.set_state(s, user, learning, state=State.Learning, due=NOW, introduced_at=yesterday)
        f.set_state(s, user, seen, state=State.Review, due=NOW + timedelta(days=9))
        f.set_state(s, user, live_review, state=State.Review, due=yesterday)
        s.execute(update(Card).where(Card.id.in_([review, learning, seen])).values(retired_at=NOW))
    with transaction(engine) as s:
        card, counts = queue.next_card(s, user, now=NOW)
    # Only the live review card is due, and the two cards without states are the new ones.
    assert card is not None and (card.card_id, card.kind) == (live_review, "review")
    assert (counts.learning, counts.review, counts.new) == (0, 1, 2)
    assert next_ids(engine, user) == [live_review, *new]


def test_deck_filter(engine: Engine) -> None:
    with transaction(engine) as s:
        user = f.make_user(s)
        first = f.make_deck(s, "first", 2)
        second = f.make_deck(s, "second", 3)
        f.subscribe(s, user, first)
        f.subscribe(s, user, second)
        f.set_state(s, user, f.card_ids(s, first.id)[0], state=State.Review, due=NOW)
    with transaction(engine) as s:
        card, counts = queue.next_card(s, user, now=NOW, deck_ids=[second.id])
        assert card is not None and card.deck_slug == "second" and card.kind == "new"
        assert (counts.new, counts.review) == (3, 0)
        card, counts = queue.next_card(s, user, now=NOW)
        assert card is not None and card.deck_slug == "first" and card.kind == "review"
        assert (counts.new, counts.review) == (4, 1)
    assert len(next_ids(engine, user, deck_ids=[second.id])) == 3


def test_another_users_state_does_not_leak(engine: Engine) -> None:
    with transaction(engine) as s:
        ana = f.make_user(s)
        ben = f.make_user(s)
        deck = f.make_deck(s, "shared", 2)
        f.subscribe(s, ana, deck)
        f.subscribe(s, ben, deck)
        first = f.card_ids(s, deck.id)[0]
        f.answer(s, ana, first, Rating.Again, now=NOW - timedelta(minutes=5))
    with transaction(engine) as s:
        card, counts = queue.next_card(s, ben, now=NOW)
    assert card is not None and card.card_id == first and card.kind == "new"
    assert (counts.new, counts.learning) == (2, 0)


# --- A heavy day: the counts' cost does not follow the day's answers (issue 20) ---

DAY_START = NOW.replace(hour=4)  # the user's day (UTC, 04:00)


def _review_answers(engine: Engine, user: int, card: int, n: int) -> None:
    """`n` answers today to one review card (Good keeps it in review), through the answer."""
    step = (NOW - DAY_START) / (n + 1)
    with transaction(engine) as s:
        f.set_state(s, user, card, state=State.Review, due=DAY_START, introduced_at=DAY_START)
        for i in range(1, n + 1):
            f.answer(s, user, card, Rating.Good, now=NOW, reviewed_at=DAY_START + step * i)


def test_a_review_limit_above_the_counted_bound_is_still_exact(engine: Engine) -> None:
    # The counts stop counting the day's review answers at REVIEWED_COUNTED; a deck whose
    # limit is higher is counted again up to its limit, so its allowance stays exact.
    answered = queue.REVIEWED_COUNTED + 3
    with transaction(engine) as s:
        user = f.make_user(s, reviews_per_day=answered + 2)
        deck = f.make_deck(s, "heavy", 4)
        f.subscribe(s, user, deck, new_per_day=0)
        busy, *due = f.card_ids(s, deck.id)
        for card in due:
            f.set_state(s, user, card, state=State.Review, due=NOW - timedelta(hours=1))
    _review_answers(engine, user, busy, answered)
    with transaction(engine) as s:
        card, counts = queue.next_card(s, user, now=NOW)
    assert counts.review == 2 and card is not None and card.kind == "review"
    # At the default limit, the bound is the limit: nothing left.
    with transaction(engine) as s:
        f.subscribe(
            s,
            user,
            subscriptions.find_visible_deck(s, user, "heavy"),
            reviews_per_day=queue.REVIEWED_COUNTED,
        )
    with transaction(engine) as s:
        assert queue.next_card(s, user, now=NOW)[1].review == 0


def _plan(engine: Engine, user: int) -> str:
    """The plan of the counts' statement as the hot path runs it: on PostgreSQL the generic
    plan of a prepared statement, which is what the libpq runner's statements get."""
    compiled = next_card_sql._PLANS.compiled(engine.dialect, {})
    values = {
        "user_id": user,
        "day_start": DAY_START,
        "day_end": DAY_START + timedelta(days=1),
        "learn_ahead_until": NOW + queue.LEARN_AHEAD,
        "today": DAY_START.date(),
    }
    params = compiled.parameters(values)
    raw = engine.raw_connection()
    try:
        driver: Any = raw.driver_connection
        if engine.dialect.name == "sqlite":
            rows = driver.execute("EXPLAIN QUERY PLAN " + compiled.sql, params).fetchall()
            return "\n".join(row[3] for row in rows)
        cursor = psycopg.ClientCursor(driver)
        cursor.execute("SET plan_cache_mode = force_generic_plan")
        # A few hundred rows cost less to scan than to look up, so on data this small the
        # planner's pick says nothing; at scale it is the index. Taking the sequential scan
        # away asks what matters here: that the index serves the statement, and bounded.
        cursor.execute("SET enable_seqscan = off")
        cursor.execute("PREPARE plans AS " + compiled.sql)  # in PostgreSQL's own $n already
        arguments = ", ".join(["%s"] * len(params))
        cursor.execute(f"EXPLAIN EXECUTE plans({arguments})", params)
        return "\n".join(row[0] for row in cursor.fetchall())
    finally:
        raw.close()


def test_the_days_review_answers_are_counted_from_their_own_index_and_bounded(
    engine: Engine,
) -> None:
    with transaction(engine) as s:
        user = f.make_user(s)
        deck = f.make_deck(s, "plan", 3)
        f.subscribe(s, user, deck)
        busy, learning, _new = f.card_ids(s, deck.id)
    _review_answers(engine, user, busy, 300)
    with transaction(engine) as s:  # and a day's learning answers, which the count skips
        for minute in range(30):
            f.answer(s, user, learning, Rating.Again, now=NOW - timedelta(minutes=minute))
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql("VACUUM ANALYZE" if engine.dialect.name == "postgresql" else "ANALYZE")
    plan = _plan(engine, user)
    if engine.dialect.name == "sqlite":
        logs = [line for line in plan.splitlines() if "review_logs" in line]
        # An index-only range over the deck's review answers: no visit to each log row.
        assert logs and all(
            "USING COVERING INDEX ix_review_logs_review_answers" in line for line in logs
        ), plan
    else:
        lines = plan.splitlines()
        scans = [i for i, line in enumerate(lines) if "on review_logs" in line]
        assert scans and all("ix_review_logs_review_answers" in lines[i] for i in scans), plan
        # Bounded: a Limit right above the scan stops it at REVIEWED_COUNTED entries.
        assert all("Limit" in lines[i - 1] for i in scans), plan


def test_counts_by_deck_are_each_decks_queue_counts_in_one_plan(engine: Engine) -> None:
    with transaction(engine) as s:
        user = f.make_user(s)
        busy = f.make_deck(s, "busy", 6)
        capped = f.make_deck(s, "capped", 5)
        f.subscribe(s, user, busy)
        f.subscribe(s, user, capped, new_per_day=2, reviews_per_day=1)
        first, second, *_ = f.card_ids(s, busy.id)
        f.set_state(s, user, first, state=State.Review, due=NOW - timedelta(days=1))
        f.set_state(s, user, second, state=State.Learning, due=NOW - timedelta(minutes=1))
        for card in f.card_ids(s, capped.id)[:2]:
            f.set_state(
                s,
                user,
                card,
                state=State.Review,
                due=NOW - timedelta(days=2),
                introduced_at=NOW - timedelta(days=9),
            )
        f.make_deck(s, "unstudied", 3)
    with transaction(engine) as s:
        by_deck = queue.counts_by_deck(s, user, now=NOW)
        for deck in (busy, capped):
            assert by_deck[deck.id] == queue.next_card(s, user, now=NOW, deck_ids=[deck.id])[1]
        assert queue.total(by_deck) == queue.next_card(s, user, now=NOW)[1]
    assert set(by_deck) == {busy.id, capped.id}
    assert by_deck[busy.id] == queue.QueueCounts(new=4, learning=1, review=1)
    assert by_deck[capped.id] == queue.QueueCounts(new=2, learning=0, review=1)  # its limits


def test_a_parent_decks_limits_cap_its_subdecks_when_it_is_studied(engine: Engine) -> None:
    """As Anki's selected deck: studying a parent, its subdecks' new and review cards stay
    within the parent's own daily limits, less what all of them were given today."""
    with transaction(engine) as s:
        user = f.make_user(s)
        parent = f.make_deck(s, "parent", 3)
        child = f.make_deck(s, "child", 6)
        title = s.get(DeckText, (child.id, "en"))
        assert title is not None
        title.title = "parent (en)::Child"
        f.subscribe(s, user, parent, new_per_day=5, reviews_per_day=2)
        f.subscribe(s, user, child)
        for card_id in f.card_ids(s, child.id)[3:]:
            f.set_state(s, user, card_id, state=State.Review, due=NOW - timedelta(hours=1),
                        introduced_at=NOW - timedelta(days=9))  # fmt: skip
        head = subscriptions.with_subdecks(s, user, parent)
        assert head == {parent.id: None, child.id: parent.id}
        _card, together = queue.next_card(s, user, now=NOW, deck_ids=head)
        _card, alone = queue.next_card(s, user, now=NOW, deck_ids=[child.id])
        assert (alone.new, alone.review) == (3, 3)
        assert (together.new, together.review) == (5, 2)  # 3 + 3 new, 3 reviews: capped
        own, shown = queue.counts_with_subdecks(s, user, now=NOW, subdecks={parent.id: head})
        assert shown[parent.id] == together and own[child.id] == alone
    # Two reviews and a new card answered in the subdeck count against the parent's limits.
    for _ in range(2):
        with transaction(engine) as s:
            card, _counts = queue.next_card(s, user, now=NOW, deck_ids=[child.id])
            assert card is not None and card.kind == "review"
            f.answer(s, user, card.card_id, Rating.Good, now=NOW)
    with transaction(engine) as s:
        f.answer(s, user, f.card_ids(s, child.id)[0], Rating.Good, now=NOW)
    with transaction(engine) as s:
        _card, alone = queue.next_card(s, user, now=NOW, deck_ids=[child.id])
        _card, together = queue.next_card(s, user, now=NOW, deck_ids=head)
        assert (alone.new, alone.review) == (2, 1)
        assert (together.new, together.review) == (4, 0)  # 5 - 1 new given; 2 - 2 reviews


def test_every_level_of_a_deck_tree_caps_what_is_under_it(engine: Engine) -> None:
    with transaction(engine) as s:
        user = f.make_user(s)
        decks = {}
        for slug, title, limit in (("a", "A", 10), ("b", "A::B", 2), ("c", "A::B::C", 20)):
            decks[slug] = f.make_deck(s, slug, 3)
            text = s.get(DeckText, (decks[slug].id, "en"))
            assert text is not None
            text.title = title
            f.subscribe(s, user, decks[slug], new_per_day=limit)
        a, b, c = (subscriptions.with_subdecks(s, user, decks[k]) for k in "abc")
        assert a == {decks["a"].id: None, decks["b"].id: decks["a"].id,
                     decks["c"].id: decks["b"].id}  # fmt: skip
        # A's 3, B's 2 (its limit), none of C's: B's limit holds C's cards too.
        assert queue.next_card(s, user, now=NOW, deck_ids=a)[1].new == 5
        assert queue.next_card(s, user, now=NOW, deck_ids=b)[1].new == 2
        assert queue.next_card(s, user, now=NOW, deck_ids=c)[1].new == 3
        _own, shown = queue.counts_with_subdecks(s, user, now=NOW, subdecks={decks["a"].id: a})
        assert shown[decks["a"].id].new == 5
