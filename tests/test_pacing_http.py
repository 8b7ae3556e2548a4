"""Team pacing is brought up to date when the queue is shown, also on a read-only request."""

from __future__ import annotations

import sqlite3
import threading
from datetime import timedelta

import pytest
from flask.testing import FlaskClient
from sqlalchemy import Engine, select

from flashcards.srs.days import study_date
from flashcards.storage.engine import transaction
from flashcards.storage.models import Deck, SchedulerSettings, Subscription
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


def test_reads_with_the_pace_up_to_date_wait_for_no_writer(
    engine: Engine, client: FlaskClient
) -> None:
    """The assignments list and the queue check the pace with a read; only a change is
    written. So while another writer holds SQLite's write lock, they answer at once."""
    if engine.dialect.name != "sqlite":
        pytest.skip("SQLite's write lock")
    load_shipped_decks(engine)
    now = utcnow()
    with transaction(engine) as s:
        lead = make_user(s, "lead@example.com")
        ana = make_user(s, "ana@example.com")
        team = membership.create_team(s, lead, "Platform", now=now)
        invitations.join(
            s, ana, invitations.create_invitation(s, team.id, lead, now=now).token, now=now
        )
        due = study_date(now, "UTC", 4) + timedelta(days=3)
        assignments.assign(s, team.id, lead, "eks-model-training", due, now=now)
        token = make_token(s, ana)
        team_id = team.id
    headers = {"Authorization": f"Bearer {token}"}
    assert client.get(f"/api/v1/teams/{team_id}/assignments", headers=headers).status_code == 200

    writer = sqlite3.connect(str(engine.url.database), isolation_level=None, timeout=30)
    statuses: list[int] = []

    def read() -> None:
        for path in (f"/api/v1/teams/{team_id}/assignments", "/api/v1/study/next"):
            statuses.append(client.get(path, headers=headers).status_code)

    reader = threading.Thread(target=read)
    try:
        writer.execute("BEGIN IMMEDIATE")
        reader.start()
        reader.join(timeout=5)  # a request waiting for the lock would wait 30 s
        assert statuses == [200, 200]
    finally:
        writer.execute("ROLLBACK")
        writer.close()
        reader.join()
