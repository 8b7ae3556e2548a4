"""The smaller limits of issue 26: sign-up answers for taken emails count and say less, API
tokens made are limited per account, and a new password must differ from the old one.
(Parallel requests against real servers: test_limits_concurrency.py.)"""

from __future__ import annotations

import re
from typing import Any

import pytest
from click.testing import CliRunner
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import Engine, func, select

from flashcards.cli import main
from flashcards.people import accounts
from flashcards.storage.engine import transaction
from flashcards.storage.models import ApiToken, User

from .conftest import T0
from .web_helpers import PASSWORD, csrf, sign_up

PROBLEM = "application/problem+json"


@pytest.fixture(autouse=True)
def cheap_password_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(accounts, "PASSWORD_METHOD", "scrypt:1024:8:1")


def add_user(engine: Engine, email: str = "ana@example.com") -> tuple[int, str]:
    with transaction(engine) as s:
        user = accounts.create_user(s, email, PASSWORD, now=T0)
        return user.id, accounts.issue_token(s, user.id, now=T0)


def assert_429_problem(response: Any) -> None:
    assert response.status_code == 429, response.get_data(as_text=True)
    assert response.mimetype == PROBLEM
    assert 0 < int(response.headers["Retry-After"]) <= 3600


# --- sign-up and existing emails ---


def test_taken_emails_use_up_the_sign_up_allowance(
    app: Flask, client: FlaskClient, engine: Engine
) -> None:
    """Asking which emails have an account costs a place each time: before, 60 taken
    emails in a row were answered and a new sign-up still got 201."""
    app.config["SIGNUPS_PER_HOUR"] = 5
    add_user(engine)
    for _ in range(5):
        taken = client.post("/api/v1/users", json={"email": "ana@example.com", "password": "x" * 8})
        assert taken.status_code == 409 and taken.mimetype == PROBLEM
        # The answer does not assert that an account exists, only that this one cannot be.
        assert taken.get_json()["detail"] == (
            "this email cannot be used for a new account; if it is yours, sign in"
        )
    assert_429_problem(
        client.post("/api/v1/users", json={"email": "ana@example.com", "password": "x" * 8})
    )
    assert_429_problem(
        client.post("/api/v1/users", json={"email": "new@example.com", "password": "x" * 8})
    )
    with transaction(engine) as s:
        assert s.scalar(select(func.count()).select_from(User)) == 1


# --- API tokens per account ---


def test_api_tokens_are_limited_per_account(
    app: Flask, client: FlaskClient, engine: Engine
) -> None:
    app.config["TOKENS_PER_HOUR"] = 3
    user_id, _token = add_user(engine)
    add_user(engine, "bo@example.com")
    right = {"email": "ana@example.com", "password": PASSWORD}
    for _ in range(3):
        assert client.post("/api/v1/tokens", json=right).status_code == 201
    response = client.post("/api/v1/tokens", json=right)
    assert_429_problem(response)
    assert "API tokens" in response.get_json()["detail"]
    # The right password was not a failure: sign-in itself is not locked by it.
    wrong = {"email": "ana@example.com", "password": "wrong horse"}
    assert client.post("/api/v1/tokens", json=wrong).status_code == 401
    # Per account: another person is not affected.
    other = {"email": "bo@example.com", "password": PASSWORD}
    assert client.post("/api/v1/tokens", json=other).status_code == 201
    # The tokens page counts against the same allowance.
    browser = app.test_client()
    signed_in = browser.post(
        "/signin",
        data={"csrf_token": csrf(browser), "email": "ana@example.com", "password": PASSWORD},
    )
    assert signed_in.status_code == 302
    page = browser.post("/tokens", data={"csrf_token": csrf(browser, "/tokens"), "name": "x"})
    assert page.status_code == 429 and int(page.headers["Retry-After"]) > 0
    html = page.get_data(as_text=True)
    assert "Too many API tokens were made for your account" in html
    assert 'id="new-token"' not in html
    with transaction(engine) as s:
        count = s.scalar(select(func.count()).where(ApiToken.user_id == user_id))
    assert count == 1 + 3


def test_the_tokens_page_is_limited_on_its_own_too(app: Flask, client: FlaskClient) -> None:
    app.config["TOKENS_PER_HOUR"] = 2
    sign_up(client)
    statuses = [
        client.post("/tokens", data={"csrf_token": csrf(client, "/tokens"), "name": f"t{n}"})
        for n in range(3)
    ]
    assert [r.status_code for r in statuses] == [201, 201, 429]
    listed = re.findall(r"<td>(t\d)</td>", client.get("/tokens").get_data(as_text=True))
    assert sorted(listed) == ["t0", "t1"]


# --- a new password equal to the old one ---


def test_api_refuses_the_current_password_as_the_new_one(
    client: FlaskClient, engine: Engine
) -> None:
    _user_id, token = add_user(engine)
    same = {"current_password": PASSWORD, "new_password": PASSWORD}
    response = client.post(
        "/api/v1/me/password", json=same, headers={"Authorization": f"Bearer {token}"}
    )
    assert response.status_code == 422 and response.mimetype == PROBLEM
    assert response.get_json()["field"] == "new_password"
    assert "differ" in response.get_json()["detail"]
    # Refusing it is not a failed attempt: the right current password was given.
    changed = client.post(
        "/api/v1/me/password",
        json={"current_password": PASSWORD, "new_password": "another passphrase"},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert changed.status_code == 204


def test_web_refuses_the_current_password_as_the_new_one(client: FlaskClient) -> None:
    sign_up(client)
    form = {
        "csrf_token": csrf(client, "/settings"),
        "current_password": PASSWORD,
        "new_password": PASSWORD,
    }
    assert client.post("/settings/password", data=form).status_code == 302
    page = client.get("/settings").get_data(as_text=True)
    assert "Choose a new password that is not the current one." in page
    assert "Password changed." not in page


def test_cli_reset_refuses_the_same_password(cli: CliRunner, engine: Engine) -> None:
    assert cli.invoke(main, ["users", "add", "ana@example.com"], input="s3cret pw\n").exit_code == 0
    result = cli.invoke(main, ["users", "password", "ana@example.com"], input="s3cret pw\n")
    assert result.exit_code == 1
    assert "must differ" in result.output and "Traceback" not in result.output
    result = cli.invoke(main, ["users", "password", "ana@example.com"], input="new secret\n")
    assert result.exit_code == 0, result.output
