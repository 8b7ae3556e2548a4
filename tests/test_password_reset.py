"""Password reset: links mailed through a real SMTP server on localhost, links printed by the
CLI and made by a team owner; each works once, for an hour, and dies with a new password."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from flashcards import create_app
from flashcards.cli import main
from flashcards.config import settings_from_env
from flashcards.errors import InvalidInput, NotFound
from flashcards.mail import Mail, MailNotSent, SmtpServer, parse_smtp_url, send
from flashcards.people import accounts, resets, web_sessions
from flashcards.storage.engine import transaction
from flashcards.storage.models import ApiToken, PasswordReset, TeamMember, User, WebSession
from flashcards.storage.schema import utcnow

from .conftest import T0
from .factories import PASSWORD as FACTORY_PASSWORD
from .factories import make_token, make_user
from .smtp_server import (
    BASE_URL,
    MAIL_FROM,
    Inbox,
    free_port,
    inbox,
    link_in,
    mail_app,
    mail_config,
    smtp,
    text_of,
)
from .web_helpers import PASSWORD, csrf, sign_in, sign_up

__all__ = ["inbox", "mail_app", "smtp"]  # fixtures
NEW_PASSWORD = "a brand new passphrase"


@pytest.fixture(autouse=True)
def cheap_password_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    # The production cost (32 MiB, ~0.1 s a hash) is tested once in test_accounts.py.
    monkeypatch.setattr(accounts, "PASSWORD_METHOD", "scrypt:1024:8:1")


def ask_for_link(client: FlaskClient, email: str):  # type: ignore[no-untyped-def]
    # buffered: the response is closed, as a server closes it once sent, and the link is
    # mailed then (see web/password_reset.py).
    return client.post(
        "/forgot", data={"csrf_token": csrf(client, "/forgot"), "email": email}, buffered=True
    )


def use_link(client: FlaskClient, token: str, password: str = NEW_PASSWORD, **form: str):  # type: ignore[no-untyped-def]
    data = {
        "csrf_token": csrf(client, "/reset"),
        "link": f"{BASE_URL}/reset#{token}",
        "new_password": password,
        **form,
    }
    return client.post("/reset", data=data)


def signs_in(app: Flask, email: str, password: str) -> bool:
    client = app.test_client()
    response = client.post(
        "/signin", data={"csrf_token": csrf(client), "email": email, "password": password}
    )
    return response.status_code == 302


# --- The domain, with the clock passed in ---


def test_a_link_works_once_and_for_an_hour(session: Session) -> None:
    uid = make_user(session, "ana@example.com")
    token = resets.issue(session, uid, now=T0)
    assert session.scalar(select(PasswordReset.id_hash)) == resets.token_hash(token)
    assert token not in repr(session.execute(select(PasswordReset)).all())  # stored hashed
    assert resets.user_for(session, token, now=T0 + timedelta(minutes=59)).id == uid
    with pytest.raises(resets.ResetLinkNotUsable):
        resets.user_for(session, token, now=T0 + timedelta(hours=1))
    with pytest.raises(resets.ResetLinkNotUsable):
        resets.use(session, token, NEW_PASSWORD, now=T0 + timedelta(hours=2), revoke_tokens=False)

    fresh = resets.issue(session, uid, now=T0 + timedelta(hours=2))
    # The expired link's row went when the new one was made.
    assert session.scalar(select(func.count()).select_from(PasswordReset)) == 1
    user, revoked = resets.use(
        session, fresh, NEW_PASSWORD, now=T0 + timedelta(hours=2), revoke_tokens=False
    )
    assert (user.id, revoked) == (uid, 0)
    assert accounts.authenticate(session, "ana@example.com", NEW_PASSWORD) is not None
    with pytest.raises(resets.ResetLinkNotUsable):
        resets.use(
            session, fresh, "yet another password", now=T0 + timedelta(hours=2), revoke_tokens=False
        )
    assert session.scalar(select(func.count()).select_from(PasswordReset)) == 0


def test_a_new_password_by_any_path_kills_the_links_made_before(session: Session) -> None:
    uid = make_user(session, "ana@example.com")
    first, second = (resets.issue(session, uid, now=T0) for _ in range(2))
    accounts.set_password(session, uid, "changed from the cli")  # not through a link
    for token in (first, second):
        with pytest.raises(resets.ResetLinkNotUsable):
            resets.user_for(session, token, now=T0)
    # Using one link kills the others too.
    third, fourth = (resets.issue(session, uid, now=T0) for _ in range(2))
    resets.use(session, third, NEW_PASSWORD, now=T0, revoke_tokens=False)
    with pytest.raises(resets.ResetLinkNotUsable):
        resets.use(session, fourth, "yet another password", now=T0, revoke_tokens=False)


def test_using_a_link_ends_sessions_and_can_revoke_tokens(session: Session) -> None:
    uid = make_user(session, "ana@example.com")
    make_token(session, uid)
    web_sessions.start(session, uid, now=T0, lifetime=timedelta(days=31))
    token = resets.issue(session, uid, now=T0)
    _user, revoked = resets.use(session, token, NEW_PASSWORD, now=T0, revoke_tokens=True)
    assert revoked == 1
    assert session.scalar(select(func.count()).select_from(WebSession)) == 0
    assert session.scalar(select(func.count()).select_from(ApiToken)) == 0


def test_a_refused_password_leaves_the_link_working(session: Session) -> None:
    uid = make_user(session, "ana@example.com")
    token = resets.issue(session, uid, now=T0)
    session.commit()
    for bad in ("short", FACTORY_PASSWORD):
        with pytest.raises(InvalidInput):  # SamePassword is one
            resets.use(session, token, bad, now=T0, revoke_tokens=False)
        session.rollback()
    assert resets.user_for(session, token, now=T0).id == uid


def test_tokens_that_cannot_be_links_are_refused_without_a_lookup(session: Session) -> None:
    for token in ("", "short", "x" * 500, "ünïcode" * 5, "a b" * 10):
        with pytest.raises(resets.ResetLinkNotUsable):
            resets.user_for(session, token, now=T0)
    assert resets.token_from(f"{BASE_URL}/reset#abc ") == "abc"
    assert resets.token_from(" abc") == "abc"


# --- Mail ---


def test_forgot_password_mails_a_link_in_the_persons_language(
    mail_app: Flask, inbox: Inbox
) -> None:
    ana = mail_app.test_client()
    sign_up(ana, "ana@example.com", language="es")
    other_browser = mail_app.test_client()
    sign_in(other_browser, "ana@example.com")

    visitor = mail_app.test_client()
    page = visitor.get("/signin").get_data(as_text=True)
    assert 'href="/forgot"' in page
    response = ask_for_link(visitor, "ANA@example.com")
    assert response.status_code == 200
    assert "If an account exists for ana@example.com" in response.get_data(as_text=True)

    [mail] = inbox.to("ana@example.com")
    assert mail["From"] == MAIL_FROM
    assert mail["Subject"] == "Restablece tu contraseña de Flashcards"
    assert mail["Content-Language"] == "es"
    assert "una hora" in text_of(mail)
    token = link_in(mail, "/reset")

    # The page's form takes the link; the new password is set and this browser signed in.
    assert "data-reset-link" in visitor.get("/reset").get_data(as_text=True)
    response = use_link(visitor, token)
    assert response.status_code == 303 and response.headers["Location"] == "/"
    settings = visitor.get("/settings")
    assert settings.status_code == 200 and '<html lang="es">' in settings.get_data(as_text=True)
    assert signs_in(mail_app, "ana@example.com", NEW_PASSWORD)
    assert not signs_in(mail_app, "ana@example.com", PASSWORD)
    # Every other browser is signed out, as a new password does from the settings page.
    assert other_browser.get("/settings").status_code == 302
    assert ana.get("/settings").status_code == 302

    # Once only.
    again = use_link(mail_app.test_client(), token, "a third password here")
    assert again.status_code == 404
    assert "This link does not work" in again.get_data(as_text=True)
    assert signs_in(mail_app, "ana@example.com", NEW_PASSWORD)


def test_an_unknown_email_gets_the_same_page_and_no_mail(mail_app: Flask, inbox: Inbox) -> None:
    sign_up(mail_app.test_client(), "ana@example.com")
    known = ask_for_link(mail_app.test_client(), "ana@example.com")
    unknown = ask_for_link(mail_app.test_client(), "nobody@example.com")
    assert known.status_code == unknown.status_code == 200

    def page(response, email: str) -> str:  # type: ignore[no-untyped-def]
        text: str = response.get_data(as_text=True)
        return re.sub(r'name="csrf_token" value="[^"]+"', "", text).replace(email, "EMAIL")

    assert page(known, "ana@example.com") == page(unknown, "nobody@example.com")
    assert [m["To"] for m in inbox.messages] == ["ana@example.com"]


def test_bad_addresses_and_the_csrf_token(mail_app: Flask, inbox: Inbox) -> None:
    client = mail_app.test_client()
    response = ask_for_link(client, "not an address")
    assert response.status_code == 422
    assert "Enter an email address" in response.get_data(as_text=True)
    response = client.post("/forgot", data={"email": "ana@example.com"}, buffered=True)
    assert response.status_code == 400
    response = client.post("/reset", data={"link": "x" * 43, "new_password": NEW_PASSWORD})
    assert response.status_code == 400
    assert inbox.messages == []


def test_reset_requests_are_limited_per_address_and_per_client(
    mail_app: Flask, inbox: Inbox
) -> None:
    mail_app.config.update(RESET_MAILS_PER_HOUR=2, RESET_REQUESTS_PER_HOUR=6)
    sign_up(mail_app.test_client(), "ana@example.com")
    client = mail_app.test_client()
    for _ in range(2):
        assert ask_for_link(client, "ana@example.com").status_code == 200
    refused = ask_for_link(client, "Ana@Example.com")  # the same address, spelled otherwise
    assert refused.status_code == 429
    assert int(refused.headers["Retry-After"]) > 0
    assert "Too many reset links" in refused.get_data(as_text=True)
    assert len(inbox.to("ana@example.com")) == 2
    # An unknown address counts the same, so a refusal tells nothing either.
    for _ in range(2):
        assert ask_for_link(client, "nobody@example.com").status_code == 200
    assert ask_for_link(client, "nobody@example.com").status_code == 429
    # The client's own allowance (6, refusals included) is used up, whatever the address.
    assert ask_for_link(client, "third@example.com").status_code == 429
    other_client = mail_app.test_client()
    other_client.environ_base["REMOTE_ADDR"] = "192.0.2.7"
    assert ask_for_link(other_client, "third@example.com").status_code == 200


def test_an_expired_link_and_one_outdated_by_a_password_change(
    mail_app: Flask, engine: Engine
) -> None:
    client = mail_app.test_client()
    sign_up(client, "ana@example.com")
    with transaction(engine) as s:
        uid = accounts.user_by_email(s, "ana@example.com").id
        expired = resets.issue(s, uid, now=utcnow() - timedelta(hours=1, seconds=1))
        outdated = resets.issue(s, uid, now=utcnow())
    response = client.post(
        "/settings/password",
        data={
            "csrf_token": csrf(client, "/settings"),
            "current_password": PASSWORD,
            "new_password": "changed in the settings",
        },
    )
    assert response.status_code == 302
    for token in (expired, outdated):
        assert use_link(mail_app.test_client(), token).status_code == 404
    assert signs_in(mail_app, "ana@example.com", "changed in the settings")


def test_a_refused_new_password_keeps_the_link_in_the_form(mail_app: Flask, engine: Engine) -> None:
    sign_up(mail_app.test_client(), "ana@example.com")
    with transaction(engine) as s:
        token = resets.issue(s, accounts.user_by_email(s, "ana@example.com").id, now=utcnow())
    client = mail_app.test_client()
    for bad, message in ((PASSWORD, "not the current one"), ("short", "Choose a password")):
        response = use_link(client, token, bad)
        assert response.status_code == 422
        page = response.get_data(as_text=True)
        assert message in page and token in page
    assert use_link(client, token, revoke_tokens="1").status_code == 303


def test_a_mail_server_that_fails_is_logged_and_the_page_stays_the_same(
    database_url: str, engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    app = create_app(mail_config(database_url, free_port()))  # nothing listens there
    try:
        sign_up(app.test_client(), "ana@example.com")
        response = ask_for_link(app.test_client(), "ana@example.com")
        assert response.status_code == 200
        assert "If an account exists" in response.get_data(as_text=True)
        assert "cannot be reached" in caplog.text
    finally:
        app.extensions["flashcards.engine"].dispose()


def test_without_mail_the_page_says_who_can_help(client: FlaskClient) -> None:
    page = client.get("/forgot").get_data(as_text=True)
    assert "This server sends no email" in page
    assert 'name="email"' not in page
    response = client.post(
        "/forgot", data={"csrf_token": csrf(client, "/forgot"), "email": "a@b.c"}
    )
    assert response.status_code == 200 and "This server sends no email" in response.get_data(
        as_text=True
    )


def test_the_mail_module_reports_server_errors(smtp: tuple[Inbox, int]) -> None:
    inbox, port = smtp
    server = parse_smtp_url(f"smtp://127.0.0.1:{port}")
    inbox.refuse.add("gone@example.com")
    refused = send(
        server,
        MAIL_FROM,
        [
            Mail("gone@example.com", "Hi", "body"),
            # Would be read as another address, or cannot be written in a header as it is.
            Mail("here(comment)@example.com", "Hi", "body"),
            Mail("a<b@example.com", "Hi", "body"),
            Mail("ü@example.com", "Hi", "body"),
            Mail("here@example.com", "Hi", "body", html="<p>body</p>"),
        ],
    )
    assert refused == [
        "gone@example.com",
        "here(comment)@example.com",
        "a<b@example.com",
        "ü@example.com",
    ]
    [mail] = inbox.messages
    assert mail["To"] == "here@example.com" and mail["Auto-Submitted"] == "auto-generated"
    assert mail.get_body(("html",)) is not None
    with pytest.raises(MailNotSent, match="cannot be reached"):
        send(SmtpServer("127.0.0.1", free_port(), "plain"), MAIL_FROM, [Mail("a@b.c", "s", "t")])
    # TLS asked of a server that offers none: refused, said in one line.
    with pytest.raises(MailNotSent, match="could not be sent"):
        send(
            SmtpServer("127.0.0.1", port, "starttls", "user", "pw"),
            MAIL_FROM,
            [Mail("a@b.c", "s", "t")],
        )
    assert "pw" not in repr(parse_smtp_url("smtps://user:pw@mail.example.com"))


def test_mail_settings_are_checked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("FLASHCARDS_SMTP_URL", "FLASHCARDS_MAIL_FROM", "FLASHCARDS_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    path = tmp_path
    monkeypatch.setenv("FLASHCARDS_SMTP_URL", "smtps://u:p%40ss@mail.example.com")
    with pytest.raises(InvalidInput, match="FLASHCARDS_MAIL_FROM"):
        settings_from_env(path)
    monkeypatch.setenv("FLASHCARDS_MAIL_FROM", "Cards <cards@example.com>")
    monkeypatch.setenv("FLASHCARDS_BASE_URL", "https://cards.example.com/")
    settings = settings_from_env(path)
    assert settings["BASE_URL"] == "https://cards.example.com"
    assert parse_smtp_url(settings["SMTP_URL"]).password == "p@ss"
    for name, bad in (
        ("FLASHCARDS_SMTP_URL", "http://mail.example.com"),
        ("FLASHCARDS_SMTP_URL", "smtp://user:pw@mail.example.com"),  # a password in clear
        ("FLASHCARDS_BASE_URL", "cards.example.com"),
        ("FLASHCARDS_MAIL_FROM", "not an address"),
    ):
        with monkeypatch.context() as m:
            m.setenv(name, bad)
            with pytest.raises(InvalidInput, match=name):
                settings_from_env(path)


# --- Without mail: the CLI and a team owner ---


def test_cli_prints_a_link_that_works_once(
    cli: CliRunner, engine: Engine, monkeypatch: pytest.MonkeyPatch, app: Flask
) -> None:
    with transaction(engine) as s:
        make_user(s, "ana@example.com")
    monkeypatch.delenv("FLASHCARDS_BASE_URL", raising=False)
    result = cli.invoke(main, ["users", "reset-link", "ana@example.com"])
    assert result.exit_code == 1 and "FLASHCARDS_BASE_URL" in result.output
    result = cli.invoke(main, ["users", "reset-link", "nobody@example.com", "--base-url", BASE_URL])
    assert result.exit_code == 1 and "no user" in result.output
    result = cli.invoke(main, ["users", "reset-link", "ana@example.com", "--base-url", "nope"])
    assert result.exit_code == 1 and "--base-url" in result.output

    monkeypatch.setenv("FLASHCARDS_BASE_URL", "https://cards.example.test/")
    result = cli.invoke(main, ["users", "reset-link", "Ana@Example.com"])
    assert result.exit_code == 0, result.output
    link = result.output.strip()
    assert link.startswith(f"{BASE_URL}/reset#")
    token = resets.token_from(link)
    client = app.test_client()
    assert use_link(client, token).status_code == 303
    assert use_link(app.test_client(), token, "a third password here").status_code == 404
    assert signs_in(app, "ana@example.com", NEW_PASSWORD)


RESET_LINK_RE = re.compile(r'<code id="reset-link">[^<]*/reset#([A-Za-z0-9_-]+)</code>')


def _team_with(app: Flask, engine: Engine) -> tuple[FlaskClient, int, dict[str, int]]:
    """An owner's team with a manager and a member; the owner's client, the team, ids."""
    owner = app.test_client()
    sign_up(owner, "owner@example.com")
    response = owner.post("/teams", data={"csrf_token": csrf(owner, "/teams"), "name": "Ops"})
    team = int(response.headers["Location"].rsplit("/", 1)[1])
    ids: dict[str, int] = {}
    with transaction(engine) as s:
        for email, role in (("mia@example.com", "member"), ("max@example.com", "manager")):
            uid = make_user(s, email)
            ids[email] = uid
            s.add(TeamMember(team_id=team, user_id=uid, role=role, joined_at=T0))
        ids["owner@example.com"] = accounts.user_by_email(s, "owner@example.com").id
        ids["otto@example.com"] = make_user(s, "otto@example.com")  # in no team
    return owner, team, ids


def _make_link(client: FlaskClient, team: int, member: int):  # type: ignore[no-untyped-def]
    return client.post(
        f"/teams/{team}/members/{member}/reset-link",
        data={"csrf_token": csrf(client, f"/teams/{team}" if team else "/teams")},
    )


def test_a_team_owner_makes_a_link_for_a_member(app: Flask, engine: Engine) -> None:
    owner, team, ids = _team_with(app, engine)
    assert "Password reset link" in owner.get(f"/teams/{team}").get_data(as_text=True)
    response = _make_link(owner, team, ids["mia@example.com"])
    assert response.status_code == 201
    page = response.get_data(as_text=True)
    assert "A password reset link for mia@example.com" in page
    match = RESET_LINK_RE.search(page)
    assert match
    mia = app.test_client()
    assert use_link(mia, match[1]).status_code == 303
    assert signs_in(app, "mia@example.com", NEW_PASSWORD)
    assert use_link(app.test_client(), match[1], "a third password here").status_code == 404


def test_only_the_owner_of_a_team_the_member_is_in_gets_a_link(app: Flask, engine: Engine) -> None:
    owner, team, ids = _team_with(app, engine)
    # Someone in no team of the owner's: as if there were no such person.
    assert _make_link(owner, team, ids["otto@example.com"]).status_code == 404
    assert _make_link(owner, team, 2**31).status_code == 404
    assert _make_link(owner, team + 1, ids["mia@example.com"]).status_code == 404
    manager = app.test_client()
    with transaction(engine) as s:
        accounts.set_password(s, ids["max@example.com"], PASSWORD)
    sign_in(manager, "max@example.com")
    assert _make_link(manager, team, ids["mia@example.com"]).status_code == 404
    assert "Password reset link" not in manager.get(f"/teams/{team}").get_data(as_text=True)
    outsider = app.test_client()
    with transaction(engine) as s:
        accounts.set_password(s, ids["otto@example.com"], PASSWORD)
    sign_in(outsider, "otto@example.com")
    assert _make_link(outsider, team, ids["mia@example.com"]).status_code == 404
    with transaction(engine) as s:
        assert s.scalar(select(func.count()).select_from(PasswordReset)) == 0
        # An administrator's account is not a team's to hand over.
        admin = s.get(User, ids["mia@example.com"])
        assert admin is not None
        admin.is_admin = True
    response = _make_link(owner, team, ids["mia@example.com"])
    assert response.status_code == 303
    assert "administrator" in owner.get(f"/teams/{team}").get_data(as_text=True)
    with transaction(engine) as s:
        assert s.scalar(select(func.count()).select_from(PasswordReset)) == 0
    with pytest.raises(NotFound), transaction(engine) as s:
        resets.issue(s, 2**31 - 1, now=T0)
