from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import Engine, func, select

from flashcards.people import accounts
from flashcards.storage.engine import transaction
from flashcards.storage.models import User

from .conftest import T0
from .web_helpers import PASSWORD, csrf

PROBLEM = "application/problem+json"


@pytest.fixture(autouse=True)
def cheap_password_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    # The production cost (32 MiB, ~0.1 s a hash) is tested once in test_accounts.py.
    monkeypatch.setattr(accounts, "PASSWORD_METHOD", "scrypt:1024:8:1")


@pytest.fixture
def token(engine: Engine) -> str:
    with transaction(engine) as s:
        user = accounts.create_user(s, "ana@example.com", "correct horse", now=T0)
        return accounts.issue_token(s, user.id, now=T0)


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_get_me_has_every_setting(client: FlaskClient, token: str) -> None:
    response = client.get("/api/v1/me", headers=auth(token))
    assert response.status_code == 200
    assert response.get_json() == {
        "id": response.get_json()["id"],
        "email": "ana@example.com",
        "display_name": "",
        "locale": "en",
        "timezone": "UTC",
        "day_start_hour": 4,
        "desired_retention": 0.9,
        "learning_steps": [60, 600],
        "relearning_steps": [600],
        "maximum_interval": 36500,
        "new_per_day": 20,
        "reviews_per_day": 200,
        "theme": "system",
        "load_balancing": True,
        "easy_days": ["normal"] * 7,
    }


def test_patch_me_changes_a_subset_and_persists(client: FlaskClient, token: str) -> None:
    change = {
        "locale": "ko",
        "timezone": "America/Los_Angeles",
        "day_start_hour": 0,
        "desired_retention": 0.85,
        "learning_steps": [30, 300, 3600],
        "new_per_day": 5,
    }
    response = client.patch("/api/v1/me", json=change, headers=auth(token))
    assert response.status_code == 200
    body = response.get_json()
    assert {k: body[k] for k in change} == change
    assert body["reviews_per_day"] == 200
    again = client.get("/api/v1/me", headers=auth(token)).get_json()
    assert again == body


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("desired_retention", 0.5),
        ("desired_retention", 0.995),
        ("desired_retention", "high"),
        ("day_start_hour", 24),
        ("day_start_hour", True),
        ("new_per_day", -1),
        ("new_per_day", 1.5),
        ("reviews_per_day", 100_000),
        ("maximum_interval", 0),
        ("learning_steps", [60, -1]),
        ("relearning_steps", {"a": 1}),
        ("locale", "de"),
        ("timezone", "Nowhere/City"),
        ("email", "other@example.com"),
        ("id", 2),
    ],
)
def test_patch_me_rejects_each_bad_value_naming_the_field(
    client: FlaskClient, token: str, field: str, value: Any
) -> None:
    before = client.get("/api/v1/me", headers=auth(token)).get_json()
    response = client.patch(
        "/api/v1/me", json={"new_per_day": 7, field: value}, headers=auth(token)
    )
    assert response.status_code == 422
    assert response.mimetype == PROBLEM
    problem = response.get_json()
    assert problem["field"] == field
    assert field in problem["detail"]
    # Nothing of the request was applied, not even its valid part.
    assert client.get("/api/v1/me", headers=auth(token)).get_json() == before


def test_patch_me_requires_a_token(client: FlaskClient, token: str) -> None:
    response = client.patch("/api/v1/me", json={"new_per_day": 1})
    assert response.status_code == 401
    assert response.mimetype == PROBLEM


def test_change_password(client: FlaskClient, token: str) -> None:
    wrong = {"current_password": "wrong horse", "new_password": "new password!"}
    response = client.post("/api/v1/me/password", json=wrong, headers=auth(token))
    assert response.status_code == 403
    assert response.get_json()["field"] == "current_password"
    short = {"current_password": "correct horse", "new_password": "short"}
    response = client.post("/api/v1/me/password", json=short, headers=auth(token))
    assert response.get_json()["field"] == "new_password"
    right = {"current_password": "correct horse", "new_password": "new password!"}
    assert client.post("/api/v1/me/password", json=right, headers=auth(token)).status_code == 204
    # Tokens are kept unless asked: a routine change does not break scripts.
    assert client.get("/api/v1/me", headers=auth(token)).status_code == 200
    sign_in = {"email": "ana@example.com", "password": "new password!"}
    assert client.post("/api/v1/tokens", json=sign_in).status_code == 201


def test_wrong_current_passwords_are_limited_per_account(
    app: Flask, client: FlaskClient, token: str, engine: Engine
) -> None:
    # A leaked token or cookie must not become a way to try passwords without end.
    app.config["SIGNIN_ATTEMPTS_PER_15_MIN"] = 3
    wrong = {"current_password": "wrong horse", "new_password": "new password!"}
    for _ in range(3):
        assert (
            client.post("/api/v1/me/password", json=wrong, headers=auth(token)).status_code == 403
        )
    right = {"current_password": "correct horse", "new_password": "new password!"}
    limited = client.post("/api/v1/me/password", json=right, headers=auth(token))
    assert limited.status_code == 429 and int(limited.headers["Retry-After"]) > 0
    with transaction(engine) as s:
        user = s.scalars(select(User)).one()
        assert accounts.verify_password(user.password_hash, "correct horse")  # unchanged
    # The web form counts against the same account.
    browser = app.test_client()
    signed_in = browser.post(
        "/signin",
        data={"csrf_token": csrf(browser, "/signin"), "email": "ana@example.com",
              "password": "correct horse"},
    )  # fmt: skip
    assert signed_in.status_code == 302
    form = {"csrf_token": csrf(browser, "/settings"), "current_password": "correct horse",
            "new_password": "new password!"}  # fmt: skip
    assert browser.post("/settings/password", data=form).status_code == 302
    assert "Too many failed attempts" in browser.get("/settings").get_data(as_text=True)


def test_change_password_can_revoke_every_api_token(
    client: FlaskClient, engine: Engine, token: str
) -> None:
    with transaction(engine) as s:
        user_id = accounts.user_id_for_token(s, token)
        assert user_id is not None
        other = accounts.issue_token(s, user_id, now=T0)
        bo = accounts.create_user(s, "bo@example.com", "correct horse", now=T0)
        bos = accounts.issue_token(s, bo.id, now=T0)
    change = {"current_password": "correct horse", "new_password": "new password!"}
    for bad in ("yes", 1, None):
        response = client.post(
            "/api/v1/me/password", json={**change, "revoke_tokens": bad}, headers=auth(token)
        )
        assert response.status_code == 422
        assert response.get_json()["field"] == "revoke_tokens"
    # Refused: the password is the old one still.
    with transaction(engine) as s:
        assert accounts.authenticate(s, "ana@example.com", "correct horse") is not None
    response = client.post(
        "/api/v1/me/password", json={**change, "revoke_tokens": True}, headers=auth(token)
    )
    assert response.status_code == 204
    for revoked in (token, other):
        assert client.get("/api/v1/me", headers=auth(revoked)).status_code == 401
    assert client.get("/api/v1/me", headers=auth(bos)).status_code == 200


def test_sign_up(client: FlaskClient, engine: Engine) -> None:
    body = {
        "email": "Bo@Example.com",
        "password": "correct horse",
        "display_name": "Bo",
        "locale": "es",
        "timezone": "Asia/Seoul",
    }
    response = client.post("/api/v1/users", json=body)
    assert response.status_code == 201
    created = response.get_json()
    assert created["email"] == "bo@example.com"
    assert (created["locale"], created["timezone"], created["display_name"]) == (
        "es",
        "Asia/Seoul",
        "Bo",
    )
    again = client.post("/api/v1/users", json={**body, "email": "BO@example.com"})
    assert again.status_code == 409
    assert again.get_json()["field"] == "email"
    token = client.post(
        "/api/v1/tokens", json={"email": "bo@example.com", "password": "correct horse"}
    ).get_json()["token"]
    assert client.get("/api/v1/me", headers=auth(token)).get_json() == created


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"email": "bo", "password": "correct horse"}, "email"),
        ({"email": "bo@example.com", "password": "short"}, "password"),
        ({"email": "bo@example.com", "password": "correct horse", "locale": "xx"}, "locale"),
        ({"email": "bo@example.com", "password": "correct horse", "timezone": 3}, "timezone"),
        ({"email": "bo@example.com", "password": "correct horse", "is_admin": True}, "is_admin"),
    ],
)
def test_sign_up_validates(
    client: FlaskClient, engine: Engine, body: dict[str, Any], field: str
) -> None:
    response = client.post("/api/v1/users", json=body)
    assert response.status_code == 422
    assert response.get_json()["field"] == field
    with transaction(engine) as s:
        assert s.scalar(select(func.count()).select_from(User)) == 0


def test_sign_up_can_be_closed(app: Flask, client: FlaskClient, engine: Engine) -> None:
    app.config["SIGNUP_OPEN"] = False
    response = client.post(
        "/api/v1/users", json={"email": "bo@example.com", "password": "pw123456"}
    )
    assert response.status_code == 403
    assert response.mimetype == PROBLEM
    with transaction(engine) as s:
        assert s.scalar(select(func.count()).select_from(User)) == 0


def test_sign_ups_share_one_limit_per_address_with_the_web_page(
    app: Flask, client: FlaskClient, engine: Engine
) -> None:
    app.config["SIGNUPS_PER_HOUR"] = 3
    body = {"email": "ana@example.com", "password": "correct horse"}
    assert client.post("/api/v1/users", json=body).status_code == 201
    # A body refused for its own values (nothing looked up) does not count...
    short = {**body, "email": "bo@example.com", "password": "short"}
    assert client.post("/api/v1/users", json=short).status_code == 422
    # ...an email found taken does, as an account made does: nobody may ask without limit
    # which emails have an account.
    taken = client.post("/api/v1/users", json={**body, "email": "ANA@example.com"})
    assert taken.status_code == 409 and taken.mimetype == PROBLEM
    assert "already exists" not in taken.get_json()["detail"]
    assert client.post("/api/v1/users", json={**body, "email": "bo@example.com"}).status_code == 201
    response = client.post("/api/v1/users", json={**body, "email": "cy@example.com"})
    assert response.status_code == 429 and response.mimetype == PROBLEM
    assert 0 < int(response.headers["Retry-After"]) <= 3600
    # The web page counts against the same budget.
    web = app.test_client()
    form = {"csrf_token": csrf(web, "/signup"), "email": "dee@example.com", "password": PASSWORD}
    assert web.post("/signup", data=form).status_code == 429
    with transaction(engine) as s:
        emails = set(s.scalars(select(User.email)))
    assert emails == {"ana@example.com", "bo@example.com"}
    other = client.post(
        "/api/v1/users",
        json={**body, "email": "cy@example.com"},
        environ_base={"REMOTE_ADDR": "203.0.113.9"},
    )
    assert other.status_code == 201
