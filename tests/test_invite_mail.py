"""Invitation links mailed from the team's page through a real SMTP server on localhost, in
the language the lead picks."""

from __future__ import annotations

import re

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import Engine, func, select

from flashcards import create_app
from flashcards.people import accounts
from flashcards.storage.engine import transaction
from flashcards.storage.models import TeamInvitation, TeamMember
from flashcards.web.invite_mail import MAX_INVITE_MAILS

from .smtp_server import (
    BASE_URL,
    Inbox,
    free_port,
    inbox,
    link_in,
    mail_app,
    mail_config,
    smtp,
    text_of,
)
from .web_helpers import csrf, sign_up

__all__ = ["inbox", "mail_app", "smtp"]  # fixtures
LINK_RE = re.compile(r'<code id="new-link">[^<]*/join#([A-Za-z0-9_-]+)</code>')


@pytest.fixture(autouse=True)
def cheap_password_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(accounts, "PASSWORD_METHOD", "scrypt:1024:8:1")


def _lead(app: Flask, team_name: str = "Plataforma") -> tuple[FlaskClient, int]:
    lead = app.test_client()
    sign_up(lead, "lead@example.com")
    with transaction(app.extensions["flashcards.engine"]) as s:
        accounts.user_by_email(s, "lead@example.com").display_name = "Lena"
    response = lead.post("/teams", data={"csrf_token": csrf(lead, "/teams"), "name": team_name})
    return lead, int(response.headers["Location"].rsplit("/", 1)[1])


def _invite(lead: FlaskClient, team: int, **form: str):  # type: ignore[no-untyped-def]
    data = {"csrf_token": csrf(lead, f"/teams/{team}"), "days": "7", **form}
    return lead.post(f"/teams/{team}/invitations", data=data)


def _invitations(engine: Engine) -> int:
    with transaction(engine) as s:
        return int(s.scalar(select(func.count()).select_from(TeamInvitation)) or 0)


def test_the_invitation_is_mailed_in_the_language_the_lead_picks(
    mail_app: Flask, inbox: Inbox, engine: Engine
) -> None:
    lead, team = _lead(mail_app)
    page = lead.get(f"/teams/{team}").get_data(as_text=True)
    assert 'name="emails"' in page and 'name="mail_locale"' in page
    response = _invite(
        lead, team, emails="Kim@Example.com, jo@example.com\nkim@example.com", mail_locale="ko"
    )
    assert response.status_code == 201
    page = response.get_data(as_text=True)
    assert "The invitation was mailed to 2 addresses." in page
    shown = LINK_RE.search(page)
    assert shown  # the link is shown too, as without mail

    assert sorted(m["To"] for m in inbox.messages) == ["jo@example.com", "kim@example.com"]
    [mail] = inbox.to("kim@example.com")
    assert mail["Subject"] == "Flashcards의 “Plataforma” 팀에 참여하세요"
    assert mail["Content-Language"] == "ko"
    body = text_of(mail)
    assert "Lena 님이" in body and "7일" in body
    token = link_in(mail, "/join")
    assert token == shown[1]

    # The mailed link lets its reader join.
    kim = mail_app.test_client()
    sign_up(kim, "kim@example.com")
    opened = kim.post(
        "/join",
        data={"csrf_token": csrf(kim, "/join"), "invitation": f"{BASE_URL}/join#{token}"},
    )
    assert opened.status_code == 303
    joined = kim.post("/join/confirm", data={"csrf_token": csrf(kim, "/join"), "token": token})
    assert joined.status_code == 303
    with transaction(engine) as s:
        assert s.scalar(select(func.count()).select_from(TeamMember)) == 2


def test_spanish_mail_and_the_lead_language_by_default(mail_app: Flask, inbox: Inbox) -> None:
    lead, team = _lead(mail_app, "Ops")
    assert _invite(lead, team, emails="ana@example.com", mail_locale="es").status_code == 201
    [mail] = inbox.messages
    assert mail["Subject"] == "Únete al equipo «Ops» en Flashcards"
    assert "El enlace funciona durante 7 días." in text_of(mail)
    # A language that is not offered: the lead's own.
    assert _invite(lead, team, emails="bo@example.com", mail_locale="zz").status_code == 201
    assert inbox.to("bo@example.com")[0]["Subject"] == "Join the team “Ops” on Flashcards"


def test_bad_addresses_make_no_link_and_send_nothing(
    mail_app: Flask, inbox: Inbox, engine: Engine
) -> None:
    lead, team = _lead(mail_app)
    response = _invite(lead, team, emails="ana@example.com, not-an-address")
    assert response.status_code == 303
    assert "“not-an-address” is not an email address." in lead.get(f"/teams/{team}").get_data(
        as_text=True
    )
    assert _invite(lead, team, emails="kim<kim@example.com").status_code == 303
    page = lead.get(f"/teams/{team}").get_data(as_text=True)
    assert "“kim&lt;kim@example.com” is not an email address." in page  # escaped
    many = ", ".join(f"p{i}@example.com" for i in range(MAX_INVITE_MAILS + 1))
    assert _invite(lead, team, emails=many).status_code == 303
    assert f"at most {MAX_INVITE_MAILS} addresses" in lead.get(f"/teams/{team}").get_data(
        as_text=True
    )
    assert _invitations(engine) == 0
    assert inbox.messages == []


def test_invitation_mails_are_limited_per_lead(
    mail_app: Flask, inbox: Inbox, engine: Engine
) -> None:
    mail_app.config["INVITE_MAILS_PER_HOUR"] = 3
    lead, team = _lead(mail_app)
    assert _invite(lead, team, emails="a@example.com b@example.com").status_code == 201
    # Two more would pass the allowance: none is sent, the link is made and shown.
    response = _invite(lead, team, emails="c@example.com; d@example.com")
    assert response.status_code == 201
    page = response.get_data(as_text=True)
    assert "Too many invitations were mailed" in page and LINK_RE.search(page)
    assert len(inbox.messages) == 2
    # The refused ones took no place: one more fits.
    assert _invite(lead, team, emails="c@example.com").status_code == 201
    assert len(inbox.messages) == 3
    assert _invitations(engine) == 3


def test_a_refused_recipient_and_a_server_out_of_reach_are_said_plainly(
    mail_app: Flask, inbox: Inbox, database_url: str, engine: Engine
) -> None:
    inbox.refuse.add("gone@example.com")
    lead, team = _lead(mail_app)
    page = _invite(lead, team, emails="gone@example.com here@example.com").get_data(as_text=True)
    assert "The invitation was mailed to 1 address." in page
    assert "The mail server refused these addresses: gone@example.com." in page

    down = create_app(mail_config(database_url, free_port()))  # nothing listens there
    try:
        client = down.test_client()
        client.set_cookie("session", lead.get_cookie("session").value)  # type: ignore[union-attr]
        response = _invite(client, team, emails="ana@example.com")
        assert response.status_code == 201
        page = response.get_data(as_text=True)
        assert "The invitation could not be mailed (the mail server 127.0.0.1:" in page
        assert "cannot be reached" in page and LINK_RE.search(page)
    finally:
        down.extensions["flashcards.engine"].dispose()


def test_without_mail_the_form_has_no_address_field(app: Flask) -> None:
    lead, team = _lead(app)
    page = lead.get(f"/teams/{team}").get_data(as_text=True)
    assert 'name="emails"' not in page
    # Addresses sent anyway are not mailed to: the link is made as before.
    assert _invite(lead, team, emails="ana@example.com").status_code == 201


def test_only_leads_mail_invitations(mail_app: Flask, inbox: Inbox) -> None:
    _lead_client, team = _lead(mail_app)
    outsider = mail_app.test_client()
    sign_up(outsider, "otto@example.com")
    response = outsider.post(
        f"/teams/{team}/invitations",
        data={"csrf_token": csrf(outsider, "/teams"), "days": "7", "emails": "x@example.com"},
    )
    assert response.status_code == 404
    assert inbox.messages == []
