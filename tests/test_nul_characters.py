"""A NUL character is not text: in a request it is a 400 (a 422 naming the field in a JSON
body), and nothing is written.

PostgreSQL refuses NUL in text columns, so before this guard such input was a 500 there,
some of it (sign-in, sign-up) without signing in.
"""

from __future__ import annotations

from flask.testing import FlaskClient
from sqlalchemy import Engine, func, select

from flashcards.storage.engine import transaction
from flashcards.storage.models import ApiToken, Team, User

from .web_helpers import PASSWORD, csrf, sign_up


def _rows(engine: Engine) -> tuple[int, int, int]:
    with transaction(engine) as s:
        return tuple(  # type: ignore[return-value]
            s.scalar(select(func.count()).select_from(model)) or 0
            for model in (User, ApiToken, Team)
        )


def test_nul_in_json_query_and_form_values_is_refused(client: FlaskClient, engine: Engine) -> None:
    sign_up(client)
    before = _rows(engine)
    for path, body in (
        ("/api/v1/users", {"email": "n\u0000@example.com", "password": PASSWORD}),
        ("/api/v1/tokens", {"email": "ana\u0000@example.com", "password": PASSWORD}),
        ("/api/v1/tokens", {"email": "ana@example.com", "password": PASSWORD, "name": "a\u0000"}),
    ):
        response = client.post(path, json=body)
        assert response.status_code == 422, (path, response.get_data(as_text=True))
        problem = response.get_json()
        assert "NUL" in problem["detail"] and problem["field"] in body
    # The check reads what the JSON says, not how it is escaped: a backslash is text.
    literal = client.post(
        "/api/v1/tokens", json={"email": "ana\\u0000@example.com", "password": PASSWORD}
    )
    assert literal.status_code == 401
    assert client.get("/api/v1/decks/eks\u0000/export.apkg?locale=e\u0000n").status_code == 400
    for path, form in (
        ("/tokens", {"name": "a\u0000b"}),
        ("/teams", {"name": "t\u0000x"}),
    ):
        response = client.post(path, data={"csrf_token": csrf(client, "/"), **form})
        assert response.status_code == 400, path
        assert "<html" in response.get_data(as_text=True)  # the site's own error page
    client.post("/signout", data={"csrf_token": csrf(client, "/")})
    response = client.post(
        "/signin",
        data={"csrf_token": csrf(client, "/signin"), "email": "a\u0000@x.io", "password": "x"},
    )
    assert response.status_code == 400
    assert _rows(engine) == before
