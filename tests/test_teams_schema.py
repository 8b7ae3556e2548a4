"""The teams API against its OpenAPI document (schemathesis), and the migration's
downgrade keeping every shipped deck's cards and progress."""

from __future__ import annotations

import os
from typing import Any

import schemathesis
from flask import Flask
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import positive_data_acceptance
from sqlalchemy import Engine, func, select

from flashcards.people.accounts import create_user, issue_token
from flashcards.storage import migrate
from flashcards.storage.engine import transaction
from flashcards.storage.models import Card
from flashcards.teams import invitations, membership, team_decks
from tests.conftest import T0, load_shipped_decks
from tests.test_teams_domain import QUIZ

SKIP = {"deleteTeam", "leaveTeam", "transferTeam"}  # would end the run's own access
REAL = st.sampled_from([True, True, False])  # Hypothesis favours the first element


def use_real_ids(case: Any, data: st.DataObject, real: dict[str, list[Any]]) -> None:
    """Mostly the team's real ids in the path (and a real join token), sometimes the
    generated ones: generated ids almost never exist, so alone they test only the 404s."""
    for name in list(case.path_parameters or {}):
        if name in real and data.draw(REAL, label=name):
            case.path_parameters[name] = data.draw(st.sampled_from(real[name]), label=name)
    body = case.body
    if isinstance(body, dict) and "token" in body and data.draw(REAL, label="real token"):
        body["token"] = data.draw(st.sampled_from(real["token"]), label="token")


def test_team_operations_conform_and_never_500(app: Flask, engine: Engine) -> None:
    load_shipped_decks(engine)
    with transaction(engine) as s:
        user = create_user(s, "lead@example.com", "password1", now=T0)
        token = issue_token(s, user.id, now=T0)
        team = membership.create_team(s, user.id, "T", now=T0)
        deck, _ = team_decks.create_team_deck(
            s, team.id, user.id, fmt="quiz", content=QUIZ, locale="en", title=None, now=T0
        )
        member = create_user(s, "member@example.com", "password1", now=T0)
        link = invitations.create_invitation(s, team.id, user.id, now=T0, max_uses=100)
        invitations.join(s, member.id, link.token, now=T0)
        # A team the caller may join: its link is a real token for joinTeam.
        other_lead = create_user(s, "other@example.com", "password1", now=T0)
        other = membership.create_team(s, other_lead.id, "U", now=T0)
        other_link = invitations.create_invitation(s, other.id, other_lead.id, now=T0)
        real: dict[str, list[Any]] = {
            "team_id": [team.id],
            "slug": [deck.slug, "eks-model-training"],
            "key": ["q01", "q02"],
            "member_id": [member.id, user.id],
            "invitation_id": [link.invitation.id],
            "token": [other_link.token, link.token],
        }
    schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", app)
    headers = {"Authorization": f"Bearer {token}"}
    tested = []
    statuses: set[int] = set()
    operations = [result.ok() for result in schema.get_all_operations()]
    # Deletions last, so that the other operations still find what they delete.
    operations.sort(key=lambda operation: operation.method.lower() == "delete")
    for operation in operations:
        if not operation.path.startswith("/api/v1/teams"):
            continue
        if operation.definition.raw.get("operationId") in SKIP:
            continue

        @given(case=operation.as_strategy(), data=st.data())
        @settings(
            max_examples=int(os.environ.get("TEAMS_SCHEMA_EXAMPLES", "6")),
            derandomize=True,  # the same cases every run: CI is red only for a change
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def check(case: Any, data: st.DataObject) -> None:
            use_real_ids(case, data, real)
            # Upload grammar (quiz, CSV) and team rules cannot be said in JSON Schema, so a
            # schema-valid body may still be a precise 422/409; every other check applies.
            response = case.call_and_validate(
                headers=headers, excluded_checks=[positive_data_acceptance]
            )
            statuses.add(response.status_code)

        check()
        tested.append(operation.path)
    assert len(tested) >= 20
    # The real ids got past the lookups: successes were checked against the document too.
    assert {200, 201, 204} <= statuses, statuses


def test_downgrade_keeps_shipped_decks_and_drops_team_decks(engine: Engine) -> None:
    load_shipped_decks(engine)
    with transaction(engine) as s:
        user = create_user(s, "lead@example.com", "password1", now=T0)
        team = membership.create_team(s, user.id, "T", now=T0)
        team_decks.create_team_deck(
            s, team.id, user.id, fmt="quiz", content=QUIZ, locale="en", title=None, now=T0
        )
    with transaction(engine) as s:
        assert s.scalar(select(func.count()).select_from(Card)) == 17
    migrate.downgrade(engine, "0001")
    with transaction(engine) as s:
        assert s.scalar(select(func.count()).select_from(Card)) == 15
    migrate.upgrade(engine)
    with transaction(engine) as s:
        assert s.scalar(select(func.count()).select_from(Card)) == 15
