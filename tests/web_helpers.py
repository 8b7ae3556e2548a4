"""Helpers for the HTML tests: read the CSRF token from a page, sign up through the form."""

from __future__ import annotations

import re
from html.parser import HTMLParser

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


class FormValues(HTMLParser):
    """What a browser would send for the form posting to `action`, as the page fills it in:
    inputs with their values (checkboxes only when checked), each select's chosen option and
    each textarea's text."""

    def __init__(self, action: str) -> None:
        super().__init__()
        self.action = action
        self.values: dict[str, str] = {}
        self.inside = False
        self.select: str | None = None
        self.first_option: str | None = None
        self.textarea: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.inside = a.get("action") == self.action
        if not self.inside or "disabled" in a:
            return
        if tag == "input" and a.get("name") and a.get("type") not in ("submit", "button"):
            if a.get("type") not in ("checkbox", "radio") or "checked" in a:
                self.values[a["name"]] = a.get("value", "on" if a.get("type") else "")
        elif tag == "select":
            self.select, self.first_option = a.get("name"), None
        elif tag == "option" and self.select:
            if self.first_option is None:
                self.first_option = a.get("value", "")
            if "selected" in a:
                self.values[self.select] = a.get("value", "")
        elif tag == "textarea" and a.get("name"):
            self.textarea = a["name"]
            self.values[self.textarea] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self.inside = False
        elif tag == "select" and self.select:
            if self.select not in self.values and self.first_option is not None:
                self.values[self.select] = self.first_option
            self.select = None
        elif tag == "textarea":
            self.textarea = None

    def handle_data(self, data: str) -> None:
        if self.textarea:
            self.values[self.textarea] += data


def form_values(client: FlaskClient, page: str, action: str) -> dict[str, str]:
    parser = FormValues(action)
    parser.feed(client.get(page).get_data(as_text=True))
    assert parser.values, f"no form posting to {action} on {page}"
    return parser.values


def settings_form(client: FlaskClient, **changes: str) -> dict[str, str]:
    """The settings form as the page shows it (with its CSRF token), with `changes` made."""
    return {**form_values(client, "/settings", "/settings"), **changes}
