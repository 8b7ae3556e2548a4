"""Suspended cards, and cards buried until a later study day, as the queue treats them: the
stats' forecast and next due, and a team's pacing, leave them out (a buried card counts from
the day it is back)."""

from __future__ import annotations

from datetime import date, datetime, timedelta

from fsrs import State
from sqlalchemy import Engine

from flashcards.srs import card_actions, stats
from flashcards.srs.days import day_start
from flashcards.storage.engine import transaction
from flashcards.storage.models import Subscription
from flashcards.teams import assignments, invitations, membership

from . import factories as f
from .conftest import T0

TODAY = date(2026, 3, 2)  # T0 is noon UTC; days start at 04:00 UTC


def _day(n: int) -> datetime:
    return day_start(TODAY + timedelta(days=n), "UTC", 4) + timedelta(hours=2)


def test_the_forecast_and_next_due_leave_out_suspended_and_buried_cards(engine: Engine) -> None:
    with transaction(engine) as s:
        uid = f.make_user(s)
        deck = f.make_deck(s, "d", 4)
        f.subscribe(s, uid, deck, new_per_day=0)
        a, b, c, d = f.card_ids(s, deck.id)
        for card, due_in in ((a, 1), (b, 2), (c, 5), (d, 7)):
            f.set_state(s, uid, card, state=State.Review, due=_day(due_in))
    with transaction(engine) as s:
        forecast = [d.count for d in stats.due_forecast(s, uid, now=T0, days=10)]
        assert forecast == [0, 1, 1, 0, 0, 1, 0, 1, 0, 0]
        assert stats.next_due(s, uid, now=T0) == day_start(TODAY + timedelta(1), "UTC", 4)
        card_actions.suspend(s, uid, [a], now=T0)
        # Buried until day 4: b (due on day 2) comes back on day 4, c and d when due.
        for card in (b, c, d):
            card_actions.bury(s, uid, [card], now=T0, until=TODAY + timedelta(4))
    with transaction(engine) as s:
        forecast = [d.count for d in stats.due_forecast(s, uid, now=T0, days=10)]
        assert forecast == [0, 0, 0, 0, 1, 1, 0, 1, 0, 0]
        assert stats.next_due(s, uid, now=T0) == day_start(TODAY + timedelta(4), "UTC", 4)
        card_actions.suspend(s, uid, [b, c, d], now=T0)
    with transaction(engine) as s:
        assert sum(d.count for d in stats.due_forecast(s, uid, now=T0)) == 0
        assert stats.next_due(s, uid, now=T0) is None  # nothing will ever come up


def test_buried_new_cards_come_back_on_their_day(engine: Engine) -> None:
    with transaction(engine) as s:
        uid = f.make_user(s)
        deck = f.make_deck(s, "d", 2)
        f.subscribe(s, uid, deck)
        cards = f.card_ids(s, deck.id)
        card_actions.bury(s, uid, cards, now=T0, until=TODAY + timedelta(3))
    with transaction(engine) as s:
        assert stats.next_due(s, uid, now=T0) == day_start(TODAY + timedelta(3), "UTC", 4)
        card_actions.suspend(s, uid, cards, now=T0)
    with transaction(engine) as s:
        assert stats.next_due(s, uid, now=T0) is None


def test_team_pacing_does_not_ask_for_hidden_new_cards(engine: Engine) -> None:
    with transaction(engine) as s:
        lead, ana = f.make_user(s), f.make_user(s, new_per_day=0)
        deck = f.make_deck(s, "shared", 12)
        team = membership.create_team(s, lead, "T", now=T0)
        invitations.join(s, ana, invitations.create_invitation(s, team.id, lead, now=T0).token,
                         now=T0)  # fmt: skip
        # Due in 3 days: 4 study days for 12 new cards, 3 a day.
        assignments.assign(s, team.id, lead, "shared", TODAY + timedelta(3), now=T0)
        sub = s.get(Subscription, (ana, deck.id))
        assert sub is not None and sub.paced_new_per_day == 3
        cards = f.card_ids(s, deck.id)
        card_actions.suspend(s, ana, cards[:4], now=T0)
        card_actions.bury(s, ana, cards[4:8], now=T0, until=TODAY + timedelta(2))
    with transaction(engine) as s:
        # 4 left to introduce today: one a day.
        views = assignments.list_assignments(s, team.id, ana, now=T0 + timedelta(minutes=1))
        assert views[0].new_per_day == 1
        # Two days on, the buried ones are back: 8 over the 2 days left.
        views = assignments.list_assignments(s, team.id, ana, now=T0 + timedelta(days=2))
        assert views[0].new_per_day == 4
