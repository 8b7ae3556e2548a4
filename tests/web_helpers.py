"""Helpers for the HTML tests: read the CSRF token from a page, sign up through the form."""

from __future__ import annotations

import re

from flask.testing import FlaskClient

CSRF_RE = re.compile(r'name="csrf_token" value="([^"]+)"')
REVIEW_ID_RE = re.compile(r'name="review_id" value="([^"]+)"')
CARD_ID_RE = re.compile(r'name="card_id" value="(\d+)"')
PASSWORD = "correct horse battery"


def csrf(client: FlaskClient, path: str = "/signin") -> str:
    match = CSRF_RE.search(client.get(path).get_data(as_text=True))
    assert match, f"no CSRF token on {path}"
    return match.group(1)


def sign_up(
    client: FlaskClient,
    email: str = "ana@example.com",
    *,
    language: str = "en",
    timezone: str = "UTC",
) -> None:
    client.environ_base["HTTP_ACCEPT_LANGUAGE"] = language
    token = csrf(client, "/signup")
    response = client.post(
        "/signup",
        data={"csrf_token": token, "email": email, "password": PASSWORD, "timezone": timezone},
    )
    assert response.status_code == 302, response.get_data(as_text=True)


def sign_in(client: FlaskClient, email: str, path: str = "/signin") -> None:
    """Sign in with the helpers' password, from a page whose form token is taken."""
    response = client.post(
        "/signin",
        data={"csrf_token": csrf(client, path), "email": email, "password": PASSWORD},
    )
    assert response.status_code == 302, response.get_data(as_text=True)


def subscribe(client: FlaskClient, locale: str, slug: str = "eks-model-training") -> None:
    response = client.post(
        f"/decks/{slug}/subscription", data={"csrf_token": csrf(client, "/"), "locale": locale}
    )
    assert response.status_code == 302


def answer_shown_card(client: FlaskClient, rating: str = "3") -> None:
    """Answer the card the study page shows, as a person pressing a rating button does."""
    page = client.get("/study?show=1").get_data(as_text=True)
    card, review = CARD_ID_RE.search(page), REVIEW_ID_RE.search(page)
    assert card and review, "no card to answer"
    form = {
        "csrf_token": csrf(client, "/study"),
        "card_id": card[1],
        "review_id": review[1],
        "rating": rating,
    }
    assert client.post("/study/answer", data=form).status_code in (200, 302, 303)
