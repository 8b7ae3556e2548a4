"""The colour scheme a person picks (System, Light, Dark): saved from the settings form and
PATCH /me, refused when unknown with nothing written, and rendered as data-theme on <html>;
and the header's menu marks the current page."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient
from sqlalchemy import Engine, select

from flashcards.people import accounts
from flashcards.storage.engine import transaction
from flashcards.storage.models import User

from .conftest import T0
from .web_helpers import settings_form, sign_up

PROBLEM = "application/problem+json"


@pytest.fixture(autouse=True)
def cheap_password_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(accounts, "PASSWORD_METHOD", "scrypt:1024:8:1")


def _settings(client: FlaskClient, theme: str | None) -> tuple[int, str]:
    form = settings_form(client, display_name="Ana")
    if theme is None:
        form.pop("theme", None)
    else:
        form["theme"] = theme
    response = client.post("/settings", data=form, follow_redirects=True)
    return response.status_code, response.get_data(as_text=True)


def _stored_theme(engine: Engine) -> str:
    with transaction(engine) as s:
        return s.scalars(select(User.theme).where(User.email == "ana@example.com")).one()


def test_the_settings_form_saves_the_theme_and_every_page_wears_it(
    client: FlaskClient, engine: Engine
) -> None:
    sign_up(client)
    page = client.get("/settings").get_data(as_text=True)
    assert '<html lang="en">' in page  # "system": the browser decides
    assert '<option value="system" selected>' in page
    status, page = _settings(client, "dark")
    assert status == 200 and "Settings saved." in page
    assert '<html lang="en" data-theme="dark">' in page
    assert '<option value="dark" selected>' in page
    assert _stored_theme(engine) == "dark"
    assert '<html lang="en" data-theme="dark">' in client.get("/stats").get_data(as_text=True)
    status, page = _settings(client, "light")
    assert '<html lang="en" data-theme="light">' in page
    # A form that does not send the choice (made before it existed) leaves it as it is.
    status, page = _settings(client, None)
    assert status == 200 and _stored_theme(engine) == "light"
    status, page = _settings(client, "system")
    assert '<html lang="en">' in page and _stored_theme(engine) == "system"


def test_an_unknown_theme_is_refused_beside_its_field_and_nothing_is_written(
    client: FlaskClient, engine: Engine
) -> None:
    sign_up(client)
    status, page = _settings(client, "neon")
    assert status == 422
    assert 'id="theme-error"' in page and 'aria-invalid="true"' in page
    assert _stored_theme(engine) == "system"
    with transaction(engine) as s:
        assert s.scalars(select(User.display_name)).one() == ""  # the rest of the form neither


def test_patch_me_sets_the_theme_and_refuses_an_unknown_one(
    client: FlaskClient, engine: Engine
) -> None:
    with transaction(engine) as s:
        user = accounts.create_user(s, "ana@example.com", "correct horse", now=T0)
        token = accounts.issue_token(s, user.id, now=T0)
    headers = {"Authorization": f"Bearer {token}"}
    response = client.patch("/api/v1/me", json={"theme": "dark"}, headers=headers)
    assert response.status_code == 200 and response.get_json()["theme"] == "dark"
    refused = client.patch("/api/v1/me", json={"theme": "neon"}, headers=headers)
    assert refused.status_code == 422 and refused.content_type == PROBLEM
    assert refused.get_json()["field"] == "theme"
    assert client.get("/api/v1/me", headers=headers).get_json()["theme"] == "dark"


def test_the_menu_marks_the_current_page_and_works_without_javascript(
    client: FlaskClient,
) -> None:
    sign_up(client)
    page = client.get("/stats").get_data(as_text=True)
    # A disclosure (no script needed) holding the main navigation.
    assert '<details class="menu">' in page and "<summary>" in page
    assert page.count('aria-current="page"') == 1
    assert '<a href="/stats" aria-current="page">' in page
    team_page = client.get("/teams").get_data(as_text=True)
    assert '<a href="/teams" aria-current="page">' in team_page
    # The language keeps its button for browsers without JavaScript.
    assert 'form class="lang"' in page and "Change</button>" in page
