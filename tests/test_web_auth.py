"""Sign up, sign in, sign out; CSRF, cookies, security headers, redirects and escaping."""

from __future__ import annotations

from datetime import timedelta

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session
from werkzeug.test import TestResponse

from flashcards.people import accounts
from flashcards.storage.models import User, WebSession
from flashcards.storage.schema import utcnow

from .web_helpers import PASSWORD, csrf, sign_in, sign_up


def test_sign_up_signs_in_and_stores_the_chosen_language(
    client: FlaskClient, engine: Engine
) -> None:
    sign_up(client, "Ana@Example.com", language="ko", timezone="Asia/Seoul")
    page = client.get("/").get_data(as_text=True)
    assert '<html lang="ko">' in page
    assert "내 덱" in page
    with Session(engine) as s:
        user = s.scalars(select(User)).one()
    assert (user.email, user.locale, user.timezone) == ("ana@example.com", "ko", "Asia/Seoul")


def test_sign_up_with_a_zone_we_do_not_know_keeps_the_name_and_uses_utc(
    client: FlaskClient, engine: Engine
) -> None:
    # Chrome reports "Etc/Unknown" where it cannot tell the zone.
    r = client.post(
        "/signup",
        data={
            "csrf_token": csrf(client, "/signup"),
            "email": "zed@example.com",
            "password": PASSWORD,
            "display_name": "Zed Name",
            "timezone": "Etc/Unknown",
        },
    )
    assert r.status_code == 302
    with Session(engine) as s:
        user = s.scalars(select(User)).one()
    assert (user.display_name, user.timezone) == ("Zed Name", "UTC")


def test_sign_up_errors_are_shown_on_the_form(client: FlaskClient) -> None:
    token = csrf(client, "/signup")
    r = client.post("/signup", data={"csrf_token": token, "email": "nope", "password": PASSWORD})
    assert r.status_code == 422
    assert "name@example.com" in r.get_data(as_text=True)
    # An empty form: both fields are flagged at once.
    r = client.post("/signup", data={"csrf_token": token, "email": "", "password": ""})
    assert r.status_code == 422
    assert 'id="email-error"' in r.get_data(as_text=True)
    assert 'id="password-error"' in r.get_data(as_text=True)
    r = client.post(
        "/signup",
        data={"csrf_token": token, "email": "a@b.co", "password": "short", "display_name": "Ana"},
    )
    assert r.status_code == 422
    assert 'id="password-error"' in r.get_data(as_text=True)
    assert 'value="Ana"' in r.get_data(as_text=True)  # what was typed stays
    sign_up(client, "a@b.co")
    client.post("/signout", data={"csrf_token": csrf(client, "/")})
    token = csrf(client, "/signup")
    r = client.post("/signup", data={"csrf_token": token, "email": "A@B.co", "password": PASSWORD})
    assert r.status_code == 422
    assert "This email cannot be used for a new account" in r.get_data(as_text=True)


def test_sign_up_can_be_closed(app: Flask, client: FlaskClient) -> None:
    app.config["SIGNUP_OPEN"] = False
    assert client.get("/signup").status_code == 403


def test_sign_ups_from_one_address_are_limited(
    app: Flask, client: FlaskClient, engine: Engine
) -> None:
    app.config["SIGNUPS_PER_HOUR"] = 3
    # A form refused for its own values does not count; two accounts and a taken email do.
    token = csrf(client, "/signup")
    r = client.post("/signup", data={"csrf_token": token, "email": "nope", "password": PASSWORD})
    assert r.status_code == 422
    for n in range(2):
        sign_up(client, f"user{n}@example.com")
        client.post("/signout", data={"csrf_token": csrf(client, "/")})
    token = csrf(client, "/signup")
    taken = {"csrf_token": token, "email": "user0@example.com", "password": PASSWORD}
    assert client.post("/signup", data=taken).status_code == 422
    data = {"csrf_token": token, "email": "third@example.com", "password": PASSWORD}
    r = client.post("/signup", data=data)
    assert r.status_code == 429 and int(r.headers["Retry-After"]) > 0
    assert "Too many sign-up attempts from your network" in r.get_data(as_text=True)
    # Another address may still sign up; the limited one made nothing.
    other = app.test_client()
    token = csrf(other, "/signup")
    other_data = {**data, "csrf_token": token}
    r = other.post("/signup", data=other_data, environ_base={"REMOTE_ADDR": "203.0.113.9"})
    assert r.status_code == 302
    with Session(engine) as s:
        emails = set(s.scalars(select(User.email)))
    assert emails == {"user0@example.com", "user1@example.com", "third@example.com"}


def test_sign_in_regenerates_the_session_and_honours_only_local_next(
    client: FlaskClient,
) -> None:
    sign_up(client, "bo@example.com")
    client.post("/signout", data={"csrf_token": csrf(client, "/")})
    visitor_token = csrf(client, "/signin")
    r = client.post(
        "/signin",
        data={
            "csrf_token": visitor_token,
            "email": "bo@example.com",
            "password": PASSWORD,
            "next": "/stats",
        },
    )
    assert r.status_code == 302 and r.location == "/stats"
    # The visitor's token died with the old session: a fixated session is worth nothing.
    assert csrf(client, "/") != visitor_token
    r = client.post("/signout", data={"csrf_token": visitor_token})
    assert r.status_code == 400
    for evil in ("//evil.example/", "https://evil.example/", "/\\evil.example", "javascript:x"):
        client.post("/signout", data={"csrf_token": csrf(client, "/")})
        r = client.post(
            "/signin",
            data={
                "csrf_token": csrf(client, "/signin"),
                "email": "bo@example.com",
                "password": PASSWORD,
                "next": evil,
            },
        )
        assert r.status_code == 302 and r.location == "/", evil


def test_wrong_password_and_rate_limit(app: Flask, client: FlaskClient) -> None:
    app.config["SIGNIN_ATTEMPTS_PER_15_MIN"] = 3
    sign_up(client, "cy@example.com")
    client.post("/signout", data={"csrf_token": csrf(client, "/")})
    token = csrf(client, "/signin")
    for _ in range(3):
        r = client.post(
            "/signin", data={"csrf_token": token, "email": "cy@example.com", "password": "wrong!!!"}
        )
        assert r.status_code == 401
        assert "Wrong email or password" in r.get_data(as_text=True)
    r = client.post(
        "/signin", data={"csrf_token": token, "email": "cy@example.com", "password": PASSWORD}
    )
    assert r.status_code == 429 and int(r.headers["Retry-After"]) > 0
    assert "Too many failed attempts" in r.get_data(as_text=True)


def test_signed_out_pages_redirect_to_sign_in(client: FlaskClient) -> None:
    for path in ("/study", "/stats", "/settings", "/tokens", "/decks/eks-model-training"):
        r = client.get(path)
        assert r.status_code == 302
        assert r.location.startswith("/signin?next=")
    # A form sent after the session ended comes back to the page the form was on.
    r = client.post(
        "/decks/eks-model-training/subscription",
        data={"csrf_token": csrf(client, "/signin")},
        headers={"Referer": "http://localhost/decks/eks-model-training"},
    )
    assert r.status_code == 302
    assert r.location == "/signin?next=/decks/eks-model-training"


def test_session_cookie_flags(app: Flask, client: FlaskClient) -> None:
    sign_up(client, "di@example.com")
    r = client.post("/signout", data={"csrf_token": csrf(client, "/")})
    cookie = r.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" not in cookie
    app.config["SESSION_COOKIE_SECURE"] = True
    r = client.get("/signin", base_url="https://localhost")
    assert "Secure" in r.headers["Set-Cookie"]


def test_csrf_is_required_on_every_web_write_but_not_on_the_api(client: FlaskClient) -> None:
    sign_up(client, "ed@example.com")
    for path in ("/signout", "/decks/eks-model-training/subscription", "/study/undo", "/tokens"):
        r = client.post(path, data={"csrf_token": "forged"})
        assert r.status_code == 400, path
        r = client.post(path)
        assert r.status_code == 400, path
    # fetch() sends the token as a header instead.
    r = client.post("/study/undo", headers={"X-CSRF-Token": csrf(client, "/")})
    assert r.status_code == 303
    r = client.post("/api/v1/tokens", json={"email": "ed@example.com", "password": PASSWORD})
    assert r.status_code == 201


def test_signing_out_ends_a_copied_session_cookie_but_not_other_sign_ins(
    app: Flask, engine: Engine
) -> None:
    laptop, phone = app.test_client(), app.test_client()
    sign_up(laptop, "sam@example.com")
    sign_in(phone, "sam@example.com")
    name = app.config["SESSION_COOKIE_NAME"]
    cookie = laptop.get_cookie(name)
    assert cookie is not None
    copy = app.test_client()  # someone who kept the cookie: a shared computer, a stolen one
    copy.set_cookie(name, cookie.value)
    assert copy.get("/settings").status_code == 200
    laptop.post("/signout", data={"csrf_token": csrf(laptop, "/")})
    r = copy.get("/settings")
    assert r.status_code == 302 and r.location.startswith("/signin")
    assert phone.get("/settings").status_code == 200  # signed in on its own
    with Session(engine) as s:
        assert s.scalar(select(func.count()).select_from(WebSession)) == 1


def test_a_session_in_use_stays_and_one_unused_for_31_days_ends(app: Flask, engine: Engine) -> None:
    active, idle = app.test_client(), app.test_client()
    sign_up(active, "act@example.com")
    sign_up(idle, "idle@example.com")
    with Session(engine) as s:  # both signed in 40 days ago; one used 2 days ago, one 32
        rows = {r.user_id: r for r in s.scalars(select(WebSession))}
        for row in rows.values():
            row.created_at -= timedelta(days=40)
        users = dict(s.execute(select(User.email, User.id)).all())
        rows[users["act@example.com"]].seen_at -= timedelta(days=2)
        rows[users["idle@example.com"]].seen_at -= timedelta(days=32)
        s.commit()
    assert active.get("/settings").status_code == 200
    r = idle.get("/settings")
    assert r.status_code == 302 and r.location.startswith("/signin")
    with Session(engine) as s:
        seen = s.scalar(
            select(WebSession.seen_at).where(WebSession.user_id == users["act@example.com"])
        )
    assert seen is not None and utcnow() - seen < timedelta(minutes=1)  # renewed just now


def test_signing_in_over_someone_elses_session_ends_theirs(app: Flask, engine: Engine) -> None:
    shared = app.test_client()
    sign_up(shared, "ann@example.com")
    sign_up(app.test_client(), "bob@example.com")
    name = app.config["SESSION_COOKIE_NAME"]
    cookie = shared.get_cookie(name)
    assert cookie is not None
    anns = app.test_client()
    anns.set_cookie(name, cookie.value)
    sign_in(shared, "bob@example.com", "/")
    assert shared.get("/settings").status_code == 200
    r = anns.get("/settings")
    assert r.status_code == 302 and r.location.startswith("/signin")
    with Session(engine) as s:
        owners = s.scalars(select(User.email).join(WebSession)).all()
    assert sorted(owners) == ["bob@example.com", "bob@example.com"]  # two browsers, no Ann


def test_signing_out_every_other_browser_from_settings(app: Flask) -> None:
    laptop, phone, tablet = app.test_client(), app.test_client(), app.test_client()
    sign_up(laptop, "dee@example.com")
    assert "You are not signed in on any other browser." in laptop.get("/settings").get_data(
        as_text=True
    )
    for other in (phone, tablet):
        sign_in(other, "dee@example.com")
    page = laptop.get("/settings").get_data(as_text=True)
    assert "You are also signed in on 2 other browsers." in page
    r = laptop.post("/settings/sessions", data={"csrf_token": csrf(laptop, "/settings")})
    assert r.status_code == 302
    page = laptop.get("/settings").get_data(as_text=True)
    assert "You are signed out on every other browser." in page
    assert "You are not signed in on any other browser." in page
    for other in (phone, tablet):
        r = other.get("/settings")
        assert r.status_code == 302 and r.location.startswith("/signin")
        # Told why, once.
        page = other.get(r.location).get_data(as_text=True)
        assert "You were signed out. Sign in again to continue." in page
        assert "You were signed out" not in other.get(r.location).get_data(as_text=True)
    # Without the form's token, nothing happens.
    assert laptop.post("/settings/sessions").status_code == 400


def test_security_headers(client: FlaskClient) -> None:
    r = client.get("/signin")
    csp = r.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert "frame-ancestors 'none'" in csp
    assert r.headers["X-Frame-Options"] == "DENY"
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    page = r.get_data(as_text=True)
    assert "<script>" not in page and " on" + "click=" not in page


SECURITY_HEADERS = (
    "Content-Security-Policy",
    "X-Content-Type-Options",
    "X-Frame-Options",
    "Referrer-Policy",
    "Cross-Origin-Opener-Policy",
    "Permissions-Policy",
)


def test_every_response_has_each_security_header_once(client: FlaskClient) -> None:
    responses = {
        "page": client.get("/signin"),
        "API": client.get("/api/v1/openapi.json"),
        "API error": client.get("/api/v1/study/next"),
        "page error": client.get("/no-such-page"),
        "stylesheet": client.get("/static/app.css"),
        "redirect": client.get("/"),
    }
    for kind, r in responses.items():
        for name in SECURITY_HEADERS:
            assert len(r.headers.getlist(name)) == 1, (kind, name, r.headers)
    # Pages and API answers may show personal data: never stored. Static files are cached.
    for kind in ("page", "page error", "API", "API error", "redirect"):
        assert responses[kind].headers.getlist("Cache-Control") == ["no-store"], kind
    assert responses["stylesheet"].headers.getlist("Cache-Control") == ["no-cache"]
    for r in responses.values():
        r.close()


def test_user_text_is_escaped(client: FlaskClient) -> None:
    sign_up(client, "fa@example.com")
    r = client.post(
        "/tokens", data={"csrf_token": csrf(client, "/tokens"), "name": "<script>x()</script>"}
    )
    assert r.status_code == 201
    page = r.get_data(as_text=True)
    assert "<script>x()" not in page and "&lt;script&gt;x()" in page


def test_unknown_pages_are_localized_and_api_keeps_problem_json(client: FlaskClient) -> None:
    r = client.get("/nope", headers={"Accept-Language": "es"})
    assert r.status_code == 404 and "No encontrado" in r.get_data(as_text=True)
    r = client.get("/api/v1/nope")
    assert r.status_code == 404 and r.mimetype == "application/problem+json"
    assert r.get_json()["status"] == 404


def _change_password(client: FlaskClient, current: str, new: str, **more: str) -> TestResponse:
    form = {
        "csrf_token": csrf(client, "/settings"),
        "current_password": current,
        "new_password": new,
    }
    return client.post("/settings/password", data={**form, **more})


def test_a_new_password_ends_every_other_session(app: Flask) -> None:
    laptop, phone = app.test_client(), app.test_client()
    sign_up(laptop, "cy@example.com")
    sign_in(phone, "cy@example.com")
    assert phone.get("/settings").status_code == 200
    assert _change_password(laptop, PASSWORD, "a brand new passphrase").status_code == 302
    page = laptop.get("/settings")  # the session that changed it stays, in a new session
    assert page.status_code == 200 and "Password changed." in page.get_data(as_text=True)
    assert "revoked" not in page.get_data(as_text=True)  # no token, none revoked
    r = phone.get("/settings")
    assert r.status_code == 302 and r.location.startswith("/signin")


def test_a_new_password_can_revoke_the_api_tokens(app: Flask, engine: Engine) -> None:
    client = app.test_client()
    sign_up(client, "di@example.com")
    with Session(engine) as s, s.begin():
        user_id = s.scalar(select(User.id).where(User.email == "di@example.com"))
        assert user_id is not None
        tokens = [accounts.issue_token(s, user_id, now=utcnow()) for _ in range(2)]
    settings = client.get("/settings").get_data(as_text=True)
    assert 'name="revoke_tokens"' in settings
    assert _change_password(client, PASSWORD, "a routine new passphrase").status_code == 302
    assert "revoked" not in client.get("/settings").get_data(as_text=True)
    with Session(engine) as s:
        assert [accounts.user_id_for_token(s, t) for t in tokens] == [user_id, user_id]
    r = _change_password(
        client, "a routine new passphrase", "a brand new passphrase", revoke_tokens="1"
    )
    assert r.status_code == 302
    page = client.get("/settings").get_data(as_text=True)
    assert "Password changed. 2 API tokens were revoked." in page
    with Session(engine) as s:
        assert [accounts.user_id_for_token(s, t) for t in tokens] == [None, None]
