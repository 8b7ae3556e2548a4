"""No password or token in any log, and request bodies above the limit refused with 413.

Every logger is captured at DEBUG, SQLAlchemy's included (at that level it logs every
statement with its parameters and every row it reads), while people sign up, sign in with
wrong and right passwords (API tokens and the web form, until the rate limit answers), use
tokens, join a team through an invitation (API and web) and change their passwords.
The same flows also run through a real HTTP server (Werkzeug's) with its access log on.
"""

from __future__ import annotations

import http.client
import http.cookiejar
import io
import json
import logging
import re
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import Engine
from werkzeug.serving import make_server

from flashcards import create_app
from flashcards.teams.deck_uploads import MAX_UPLOAD_BYTES
from flashcards.web.uploads import MULTIPART_SLACK

from .web_helpers import csrf

PASSWORDS = ["first secret pw 7Hq", "second secret pw 9Zk", "wrong secret pw 3Xy"]
SMALL_LIMIT = 16 * 1024


def all_text(records: list[logging.LogRecord]) -> str:
    """Everything a handler could write: message, raw arguments, traceback."""
    formatter = logging.Formatter("%(name)s %(levelname)s %(message)s")
    parts = []
    for record in records:
        parts.append(formatter.format(record))
        parts.append(repr(record.args))
        parts.append(repr(record.msg))
    return "\n".join(parts)


@pytest.fixture
def debug_app(
    database_url: str, engine: Engine, caplog: pytest.LogCaptureFixture
) -> Iterator[Flask]:
    # Set before the app (and its engine) exist, so SQLAlchemy's statement logging is on.
    caplog.set_level(logging.DEBUG)
    # Libraries set levels of their own (SQLAlchemy puts "sqlalchemy" at WARN): every logger
    # that exists by now goes to DEBUG too, and caplog puts them back afterwards.
    import flashcards.api  # noqa: F401  (creates the app's library loggers before the sweep)

    for name in list(logging.root.manager.loggerDict):
        caplog.set_level(logging.DEBUG, logger=name)
    app = create_app(
        {
            "TESTING": True,
            "DATABASE_URL": database_url,
            "SECRET_KEY": "test-secret",
            "SIGNIN_ATTEMPTS_PER_15_MIN": 3,
            "MAX_CONTENT_LENGTH": SMALL_LIMIT,
            "MAX_UPLOAD_BYTES": 4 * SMALL_LIMIT,
        }
    )
    yield app
    app.extensions["flashcards.engine"].dispose()


def run_flows(client: FlaskClient) -> list[str]:
    """Sign-up, sign-in, token use, invitation, password change; the secrets they used."""
    first, second, wrong = PASSWORDS
    secrets: list[str] = list(PASSWORDS)
    for email in ("lead@example.com", "joiner@example.com", "webby@example.com"):
        r = client.post("/api/v1/users", json={"email": email, "password": first})
        assert r.status_code == 201, r.get_json()
    r = client.post("/api/v1/tokens", json={"email": "lead@example.com", "password": wrong})
    assert r.status_code == 401
    tokens = {}
    for email in ("lead@example.com", "joiner@example.com"):
        r = client.post("/api/v1/tokens", json={"email": email, "password": first})
        assert r.status_code == 201
        tokens[email] = r.get_json()["token"]
    secrets += tokens.values()
    lead = {"Authorization": f"Bearer {tokens['lead@example.com']}"}
    joiner = {"Authorization": f"Bearer {tokens['joiner@example.com']}"}
    assert client.get("/api/v1/me", headers=lead).status_code == 200
    bad = {"Authorization": f"Bearer {tokens['lead@example.com']}x"}
    assert client.get("/api/v1/me", headers=bad).status_code == 401

    team = client.post("/api/v1/teams", json={"name": "Loggers"}, headers=lead).get_json()["id"]
    links = []
    for _ in range(2):
        r = client.post(f"/api/v1/teams/{team}/invitations", json={}, headers=lead)
        assert r.status_code == 201
        links.append(r.get_json()["token"])
    secrets += links
    r = client.post("/api/v1/teams/join", json={"token": links[0]}, headers=joiner)
    assert r.status_code == 200

    r = client.post(
        "/api/v1/me/password",
        json={"current_password": wrong, "new_password": second},
        headers=lead,
    )
    assert 400 <= r.status_code < 500
    r = client.post(
        "/api/v1/me/password",
        json={"current_password": first, "new_password": second},
        headers=lead,
    )
    assert r.status_code in (200, 204), r.get_data(as_text=True)

    # The web: wrong passwords until the limit, the right one, a link, a password change.
    for _ in range(4):
        form = {"csrf_token": csrf(client), "email": "lead@example.com", "password": wrong}
        assert client.post("/signin", data=form).status_code in (401, 429)
    form = {"csrf_token": csrf(client), "email": "webby@example.com", "password": first}
    assert client.post("/signin", data=form).status_code == 302
    form = {"csrf_token": csrf(client, "/join"), "invitation": links[1]}
    assert client.post("/join", data=form).status_code == 303
    assert client.get("/join").status_code == 200
    form = {"csrf_token": csrf(client, "/join"), "token": links[1]}
    assert client.post("/join/confirm", data=form).status_code == 303
    form = {"csrf_token": csrf(client, "/settings"), "current_password": first,
            "new_password": second}  # fmt: skip
    assert client.post("/settings/password", data=form).status_code in (200, 302, 303)
    r = client.post("/tokens", data={"csrf_token": csrf(client, "/tokens"), "name": "cli"})
    assert r.status_code == 201
    secrets += re.findall(r"\b[A-Za-z0-9_-]{43}\b", r.get_data(as_text=True))
    return secrets


def test_no_password_or_token_in_any_log_record(
    debug_app: Flask, caplog: pytest.LogCaptureFixture
) -> None:
    secrets = run_flows(debug_app.test_client())
    assert len(secrets) >= 8
    text = all_text(caplog.records)
    # The capture works and sees the database traffic, parameters included.
    assert "sqlalchemy.engine" in text and "lead@example.com" in text
    leaked = [s for s in secrets if s in text]
    assert not leaked, f"secrets in the logs: {leaked}"


class Server:
    """The app behind Werkzeug's HTTP server, whose access log is the 'werkzeug' logger."""

    def __init__(self, app: Flask) -> None:
        self.server = make_server("127.0.0.1", 0, app, threaded=True)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def request(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> tuple[int, Any]:
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=10)
        try:
            data = json.dumps(body).encode() if body is not None else None
            all_headers = {"Content-Type": "application/json", **(headers or {})}
            conn.request(method, path, body=data, headers=all_headers)
            response = conn.getresponse()
            raw = response.read()
            return response.status, json.loads(raw) if raw.startswith(b"{") else raw
        finally:
            conn.close()

    def stop(self) -> None:
        self.server.shutdown()
        self.thread.join()
        self.server.server_close()


def test_access_log_of_a_real_server_has_no_secret(
    debug_app: Flask, caplog: pytest.LogCaptureFixture
) -> None:
    server = Server(debug_app)
    try:
        first, _, wrong = PASSWORDS
        status, _ = server.request(
            "POST", "/api/v1/users", {"email": "a@example.com", "password": first}
        )
        assert status == 201
        status, _ = server.request(
            "POST", "/api/v1/tokens", {"email": "a@example.com", "password": wrong}
        )
        assert status == 401
        status, body = server.request(
            "POST", "/api/v1/tokens", {"email": "a@example.com", "password": first}
        )
        assert status == 201
        token = body["token"]
        auth = {"Authorization": f"Bearer {token}"}
        assert server.request("GET", "/api/v1/me", headers=auth)[0] == 200
        status, team = server.request("POST", "/api/v1/teams", {"name": "T"}, auth)
        status, link = server.request("POST", f"/api/v1/teams/{team['id']}/invitations", {}, auth)
        assert status == 201
    finally:
        server.stop()
    access = [r for r in caplog.records if r.name == "werkzeug"]
    assert any("/api/v1/tokens" in r.getMessage() for r in access)  # the access log is on
    text = all_text(caplog.records)
    leaked = [s for s in (*PASSWORDS, token, link["token"]) if s in text]
    assert not leaked, f"secrets in the logs: {leaked}"


# --- request bodies above the limit ------------------------------------------------------


def test_bodies_above_the_limit_get_413(debug_app: Flask) -> None:
    client = debug_app.test_client()
    r = client.post("/api/v1/users", json={"email": "big@example.com", "password": PASSWORDS[0]})
    assert r.status_code == 201
    token = client.post(
        "/api/v1/tokens", json={"email": "big@example.com", "password": PASSWORDS[0]}
    ).get_json()["token"]
    auth = {"Authorization": f"Bearer {token}"}
    team = client.post("/api/v1/teams", json={"name": "Big"}, headers=auth).get_json()["id"]
    big = "x" * (SMALL_LIMIT + 1)
    team_deck_big = "x" * (MAX_UPLOAD_BYTES + MULTIPART_SLACK + 1)
    api_calls = [
        ("/api/v1/users", {"email": "b@example.com", "password": big}, {}),
        ("/api/v1/tokens", {"email": "big@example.com", "password": big}, {}),
        ("/api/v1/reviews", {"card_id": 1, "rating": "good", "review_id": big}, auth),
        ("/api/v1/me/password", {"current_password": big, "new_password": big}, auth),
        (f"/api/v1/teams/{team}/decks", {"format": "csv", "content": big, "locale": "en"}, auth),
        ("/api/v1/teams/join", {"token": big}, auth),
    ]
    for url, body, headers in api_calls:
        r = client.post(url, json=body, headers=headers)
        assert r.status_code == 413, (url, r.status_code)
        assert r.mimetype == "application/problem+json"
    package = b"PK" + b"\0" * (4 * SMALL_LIMIT + 1)
    r = client.post(
        "/api/v1/imports",
        data=package,
        headers={**auth, "Content-Type": "application/octet-stream"},
    )
    assert r.status_code == 413 and r.mimetype == "application/problem+json"

    form = {"csrf_token": csrf(client), "email": "big@example.com", "password": PASSWORDS[0]}
    assert client.post("/signin", data=form).status_code == 302
    token = csrf(client, "/")
    web_calls = [
        ("/signin", {"email": "big@example.com", "password": big}),
        ("/signup", {"email": "c@example.com", "password": big}),
        ("/settings/password", {"current_password": big, "new_password": big}),
        # The team deck form takes uploads up to its own limit (a 5,000-card deck).
        (f"/teams/{team}/decks", {"format": "csv", "content": team_deck_big, "title": "T"}),
        ("/tokens", {"name": big}),
    ]
    for url, data in web_calls:
        r = client.post(url, data={"csrf_token": token, **data})
        assert r.status_code == 413, (url, r.status_code)
    r = client.post(
        "/decks/import",
        data={"csrf_token": token, "package": (io.BytesIO(package), "big.apkg")},
        content_type="multipart/form-data",
    )
    assert r.status_code == 413


class WebVisitor:
    """A cookie-keeping client of the real server that sends what a browser sends: a link's
    path and query, never its fragment. Redirects are returned, not followed."""

    class _Keep(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    def __init__(self, server: Server) -> None:
        self.base = f"http://127.0.0.1:{server.server.port}"
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()), self._Keep()
        )

    def open(self, url: str, form: dict[str, str] | None = None) -> tuple[int, str, str]:
        """Status, body and Location of a GET of `url` (or a POST of `form` to it)."""
        parts = urllib.parse.urlsplit(url)
        target = self.base + parts.path + (f"?{parts.query}" if parts.query else "")
        data = urllib.parse.urlencode(form).encode() if form is not None else None
        try:
            response = self.opener.open(target, data=data, timeout=10)
        except urllib.error.HTTPError as error:  # 3xx and 4xx alike
            response = error
        with response:
            body = response.read().decode()
            return response.status, body, response.headers.get("Location", "")

    def submit(self, page: str, action: str, form: dict[str, str]) -> tuple[int, str, str]:
        """Posts `form` to `action` with the CSRF token of `page`, as its form would."""
        found = re.search(r'name="csrf_token" value="([^"]+)"', self.open(page)[1])
        assert found, page
        return self.open(action, {"csrf_token": found[1], **form})


def test_an_invitation_link_stays_out_of_the_access_log(
    debug_app: Flask, caplog: pytest.LogCaptureFixture
) -> None:
    """From the link the lead is shown to a new member of the team, over real HTTP."""
    server = Server(debug_app)
    try:
        lead, joiner = WebVisitor(server), WebVisitor(server)
        first = PASSWORDS[0]
        signup = {"email": "lead@example.com", "password": first}
        assert lead.submit("/signup", "/signup", signup)[0] == 302
        status, _, team = lead.submit("/teams", "/teams", {"name": "Loggers"})
        assert status == 303
        status, page, _ = lead.submit(team, f"{team}/invitations", {"days": "7"})
        assert status == 201
        found = re.search(r'<code id="new-link">([^<]+)</code>', page)
        assert found and "#" in found[1]
        link = found[1]
        token = link.rpartition("#")[2]

        # The joiner has no account yet: the link's page, its script's post, sign-up, back.
        status, page, _ = joiner.open(link)
        assert status == 200 and "data-invitation" in page
        status, _, location = joiner.submit(link, "/join", {"invitation": token})
        assert (status, location) == (303, "/signin?next=/join")
        assert "Loggers" in joiner.open(location)[1]
        signup = {"email": "joiner@example.com", "password": first}
        assert joiner.submit("/signup", "/signup", signup)[:3:2] == (302, "/join")
        status, page, _ = joiner.open("/join")
        assert status == 200 and "Loggers" in page
        status, _, location = joiner.submit("/join", "/join/confirm", {"token": token})
        assert (status, location) == (303, team)
    finally:
        server.stop()
    requests = [r.getMessage() for r in caplog.records if r.name == "werkzeug"]
    assert any("POST /join/confirm" in line for line in requests)  # the access log is on
    assert token not in all_text(caplog.records)
