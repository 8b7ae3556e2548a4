"""Team pacing is brought up to date when the queue is shown, also on a read-only request."""

from __future__ import annotations

from datetime import timedelta

from flask.testing import FlaskClient
from sqlalchemy import Engine, select

from flashcards.days import study_date
from flashcards.models import Deck, SchedulerSettings, Subscription
from flashcards.storage.engine import transaction
from flashcards.storage.schema import utcnow
from flashcards.teams import assignments, invitations, membership
from tests.conftest import load_shipped_decks
from tests.factories import make_token, make_user


def test_next_card_refreshes_a_stale_paced_allowance(engine: Engine, client: FlaskClient) -> None:
    load_shipped_decks(engine)
    now = utcnow()
    with transaction(engine) as s:
        lead = make_user(s, "lead@example.com")
        ana = make_user(s, "ana@example.com")
        team = membership.create_team(s, lead, "Platform", now=now)
        invitations.join(
            s, ana, invitations.create_invitation(s, team.id, lead, now=now).token, now=now
        )
        settings = s.get(SchedulerSettings, ana)
        assert settings is not None
        settings.new_per_day = 2
        # Due in 3 days: 4 study days for 15 cards is ceil(15 / 4) = 4 a day.
        due = study_date(now, "UTC", 4) + timedelta(days=3)
        assignments.assign(s, team.id, lead, "eks-model-training", due, now=now)
        deck_id = s.scalar(select(Deck.id).where(Deck.slug == "eks-model-training"))
        # What yesterday's pacing would have left behind.
        sub = s.get(Subscription, (ana, deck_id))
        assert sub is not None
        sub.paced_new_per_day = 1
        token = make_token(s, ana)

    response = client.get("/api/v1/study/next", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200
    assert response.json is not None and response.json["counts"]["new"] == 4
    with transaction(engine) as s:
        assert (
            s.scalar(
                select(Subscription.paced_new_per_day).where(
                    Subscription.user_id == ana, Subscription.deck_id == deck_id
                )
            )
            == 4
        )
