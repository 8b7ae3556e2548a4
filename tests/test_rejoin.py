"""Someone a lead removed cannot come back through a link (the one they joined with, or any
other) until a lead allows it; someone who left of their own accord can. API and web."""

from __future__ import annotations

import re
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import Engine, func, select

from flashcards.people.accounts import create_user, issue_token
from flashcards.storage.engine import transaction
from flashcards.storage.models import TeamInvitation, TeamMember, TeamRemoval
from tests.conftest import T0
from tests.test_teams_api import Api
from tests.web_helpers import csrf, sign_up

PASSWORD = "password1"


def _api_people(client: FlaskClient, engine: Engine) -> tuple[dict[str, Api], dict[str, int]]:
    apis, ids = {}, {}
    with transaction(engine) as s:
        for name in ("lead", "ana", "ben", "eve"):
            user = create_user(s, f"{name}@example.com", PASSWORD, now=T0)
            apis[name], ids[name] = Api(client, issue_token(s, user.id, now=T0)), user.id
    return apis, ids


def _uses(engine: Engine) -> dict[int, int]:
    with transaction(engine) as s:
        return {i: uses for i, uses in s.execute(select(TeamInvitation.id, TeamInvitation.uses))}


def test_api_removed_member_needs_a_lead_to_come_back(client: FlaskClient, engine: Engine) -> None:
    api, ids = _api_people(client, engine)
    team = api["lead"]("POST", "/api/v1/teams", {"name": "Platform"}).get_json()["id"]
    link = api["lead"]("POST", f"/api/v1/teams/{team}/invitations", {"max_uses": 10}).get_json()
    for name in ("ana", "ben"):
        assert api[name]("POST", "/api/v1/teams/join", {"token": link["token"]}).status_code == 200

    assert api["lead"]("DELETE", f"/api/v1/teams/{team}/members/{ids['ana']}").status_code == 204
    # The link she joined with still works for others, and a fresh one is made: neither
    # lets her back in, and her refused attempts use none of their uses.
    fresh = api["lead"]("POST", f"/api/v1/teams/{team}/invitations").get_json()
    before = _uses(engine)
    for token in (link["token"], fresh["token"]):
        refused = api["ana"]("POST", "/api/v1/teams/join", {"token": token})
        assert refused.status_code == 403
        assert refused.content_type == "application/problem+json"
        assert "ask a team lead" in refused.get_json()["detail"]
    assert _uses(engine) == before
    assert api["ana"]("GET", f"/api/v1/teams/{team}").status_code == 404

    # Leads see whom they removed; a plain member and an outsider do not.
    listed = api["lead"]("GET", f"/api/v1/teams/{team}/removals")
    assert listed.status_code == 200
    assert [(r["user_id"], r["email"]) for r in listed.get_json()["removals"]] == [
        (ids["ana"], "ana@example.com")
    ]
    assert api["ben"]("GET", f"/api/v1/teams/{team}/removals").status_code == 403
    assert api["eve"]("GET", f"/api/v1/teams/{team}/removals").status_code == 404
    for who in ("ben", "eve"):
        denied = api[who]("DELETE", f"/api/v1/teams/{team}/removals/{ids['ana']}")
        assert denied.status_code in (403, 404)
    # Nobody removed under that id: nothing to allow.
    assert api["lead"]("DELETE", f"/api/v1/teams/{team}/removals/{ids['ben']}").status_code == 404

    # A lead lets her back; then the very link she was refused with works.
    assert api["lead"]("DELETE", f"/api/v1/teams/{team}/removals/{ids['ana']}").status_code == 204
    assert api["lead"]("GET", f"/api/v1/teams/{team}/removals").get_json()["removals"] == []
    back = api["ana"]("POST", "/api/v1/teams/join", {"token": link["token"]})
    assert back.status_code == 200 and back.get_json()["role"] == "member"

    # Leaving of one's own accord is not a removal: the link lets Ben back.
    assert api["ben"]("DELETE", f"/api/v1/teams/{team}/membership").status_code == 204
    assert api["ben"]("POST", "/api/v1/teams/join", {"token": link["token"]}).status_code == 200
    with transaction(engine) as s:
        assert s.scalar(select(func.count()).select_from(TeamRemoval)) == 0
        assert s.scalar(select(func.count()).select_from(TeamMember)) == 3


def test_removing_twice_after_a_return_and_deleting_the_team(
    client: FlaskClient, engine: Engine
) -> None:
    api, ids = _api_people(client, engine)
    team = api["lead"]("POST", "/api/v1/teams", {"name": "Platform"}).get_json()["id"]
    token = api["lead"]("POST", f"/api/v1/teams/{team}/invitations").get_json()["token"]
    for _ in range(2):
        assert api["ana"]("POST", "/api/v1/teams/join", {"token": token}).status_code == 200
        path = f"/api/v1/teams/{team}/members/{ids['ana']}"
        assert api["lead"]("DELETE", path).status_code == 204
        assert api["ana"]("POST", "/api/v1/teams/join", {"token": token}).status_code == 403
        path = f"/api/v1/teams/{team}/removals/{ids['ana']}"
        assert api["lead"]("DELETE", path).status_code == 204
    assert api["lead"]("DELETE", f"/api/v1/teams/{team}/members/{ids['lead']}").status_code == 409
    assert api["ana"]("POST", "/api/v1/teams/join", {"token": token}).status_code == 200
    assert api["lead"]("DELETE", f"/api/v1/teams/{team}/members/{ids['ana']}").status_code == 204
    assert api["lead"]("DELETE", f"/api/v1/teams/{team}").status_code == 204
    with transaction(engine) as s:
        assert s.scalar(select(func.count()).select_from(TeamRemoval)) == 0  # went with it


def _post(client: FlaskClient, path: str, data: dict[str, str], page: str) -> Any:
    return client.post(path, data={"csrf_token": csrf(client, page), **data})


def _open(client: FlaskClient, token: str) -> Any:
    response = _post(client, "/join", {"invitation": f"http://localhost/join#{token}"}, "/join")
    assert response.status_code == 303 and response.location == "/join"
    return client.get("/join")


def test_web_removed_member_is_told_to_ask_a_lead(app: Flask, engine: Engine) -> None:
    lead, mia = app.test_client(), app.test_client()
    sign_up(lead, "lead@example.com")
    sign_up(mia, "mia@example.com", language="es")
    created = _post(lead, "/teams", {"name": "Platform"}, "/teams")
    team = int(re.search(r"/teams/(\d+)$", created.location)[1])  # type: ignore[index]
    page = _post(lead, f"/teams/{team}/invitations", {"days": "7"}, f"/teams/{team}")
    token = re.search(r"/join#([A-Za-z0-9_-]+)", page.get_data(as_text=True))[1]  # type: ignore[index]
    assert _open(mia, token).status_code == 200
    joined = _post(mia, "/join/confirm", {"token": token}, "/join")
    assert joined.status_code == 303

    with transaction(engine) as s:
        mia_id = s.scalar(select(TeamMember.user_id).where(TeamMember.role == "member"))
    removed = _post(lead, f"/teams/{team}/members/{mia_id}/remove", {}, f"/teams/{team}")
    assert removed.status_code == 303

    # Her own link, opened again: the page says why, in her language, with no join button.
    refused = _open(mia, token)
    text = refused.get_data(as_text=True)
    assert refused.status_code == 403
    assert "Te han quitado de este equipo" in text and "Platform" in text
    assert 'action="/join/confirm"' not in text
    # Another link is then the page's only action: shown, not folded away as beside a Join.
    assert 'name="invitation"' in text and 'class="other-invitation"' not in text
    # A confirmation kept open from before is refused too, and nothing is written.
    confirm = _post(mia, "/join/confirm", {"token": token}, "/join")
    assert confirm.status_code == 403
    assert "Te han quitado de este equipo" in confirm.get_data(as_text=True)
    with transaction(engine) as s:
        assert s.get(TeamMember, (team, mia_id)) is None
        assert s.scalar(select(TeamInvitation.uses)) == 1

    # The lead sees her among the removed, and lets her back.
    team_page = lead.get(f"/teams/{team}").get_data(as_text=True)
    assert "Removed from the team" in team_page and "mia@example.com" in team_page
    allow = f"/teams/{team}/removals/{mia_id}/allow"
    assert f'action="{allow}"' in team_page
    assert mia.post(allow, data={}).status_code == 400  # CSRF first
    assert _post(mia, allow, {}, "/join").status_code == 404  # not in the team: not found
    allowed = _post(lead, allow, {}, f"/teams/{team}")
    assert allowed.status_code == 303
    assert "They can join again" in lead.get(allowed.location).get_data(as_text=True)
    assert _open(mia, token).status_code == 200
    assert _post(mia, "/join/confirm", {"token": token}, "/join").status_code == 303
    with transaction(engine) as s:
        assert s.get(TeamMember, (team, mia_id)) is not None
