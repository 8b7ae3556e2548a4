"""Authorization, swept over every route of `app.url_map` that takes an id or a slug.

Alice owns team Alpha (Mia is a plain member), a private deck and an API token; Bob owns team
Bravo. Each route is called, through the API with a bearer token and through the web with a
signed-in browser session:
- by Bob, with Alice's and Alpha's objects: 404, and nothing of theirs in the body (deck and
  card routes once with Alice's private deck, once with Alpha's team deck; the same for ids
  in API bodies and queries and in the web study forms);
- by Mia, on routes only owners and managers may use: 403;
- by Alice inside Alpha, with Bravo's objects (deck, member, invitation): 404;
- by Alice with ids too large for any column: 404, never a database error.
Nothing any of them tried may have changed a row.

ROUTES below is explicit; `test_every_route_with_an_argument_is_in_the_table` fails when a
route taking an argument is added without an entry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import Engine, select, update
from sqlalchemy.orm import Session
from werkzeug.test import TestResponse

from flashcards import create_app
from flashcards.anki_sync import devices as anki_devices
from flashcards.people import media_folder
from flashcards.storage.engine import transaction
from flashcards.storage.models import ApiToken, CardText, DeckText
from flashcards.storage.schema import Base
from flashcards.teams import assignments, invitations, team_decks
from flashcards.teams.membership import create_team

from . import factories as f
from .conftest import T0
from .web_helpers import csrf

HUGE = 2**40
SECRETS = ("Alpha Secret Team", "Alpha deck secret", "alice@example.com", "mia@example.com",
           "alpha private question", "Alpha private title")  # fmt: skip
CSV = "front,back\nAlpha deck secret q1,a1\nsecond,two\n"


@dataclass(frozen=True)
class Probe:
    """How to call one route. `url` names Alice's or Alpha's objects with placeholders.

    member: what Mia (a plain member of Alpha) gets, None where she is not asked (the route
    is not a team's, or is hers to use, such as leaving). cross: the route inside Alpha with
    Bravo's object, which Alice must get 404 for. outsider: what Bob gets (a web route that
    only acts on the caller's own rows redirects without acting).
    """

    url: str
    body: dict[str, Any] | None = None
    member: int | None = 403
    cross: str | None = None
    cross_body: dict[str, Any] | None = None
    outsider: tuple[int, ...] = (404,)
    exempt: str = ""


UPLOAD = {"format": "csv", "content": "front,back\nQ,A\n", "locale": "en", "title": "T"}
CARD = {"locale": "en", "front": "a", "back": "b"}
WEB_CARD = {"locale": "en", "question": "a", "answer": "b"}

ROUTES: dict[tuple[str, str], Probe] = {
    # API: Alice's own objects
    ("/api/v1/cards/<int:card_id>", "GET"): Probe("/api/v1/cards/{card}", member=404),
    ("/api/v1/cards/<int:card_id>", "PATCH"): Probe(
        "/api/v1/cards/{card}", {"suspended": True}, member=404
    ),
    ("/api/v1/cards/<int:card_id>/history", "GET"): Probe(
        "/api/v1/cards/{card}/history", member=404
    ),
    ("/api/v1/decks/<slug>", "DELETE"): Probe("/api/v1/decks/{private}", member=404),
    ("/api/v1/decks/<slug>/cards", "POST"): Probe(
        "/api/v1/decks/{private}/cards", {"front": "a", "back": "b"}, member=404
    ),
    ("/api/v1/decks/<slug>", "PATCH"): Probe(
        "/api/v1/decks/{private}", {"title": "Taken"}, member=404
    ),
    ("/api/v1/decks/<slug>/cards/<key>", "PATCH"): Probe(
        "/api/v1/decks/{private}/cards/c01", {"front": "a", "tags": ["t"]}, member=404
    ),
    ("/api/v1/decks/<slug>/cards/<key>", "DELETE"): Probe(
        "/api/v1/decks/{private}/cards/c01", member=404
    ),
    ("/api/v1/decks/<slug>/cards/<key>/cloze", "GET"): Probe(
        "/api/v1/decks/{private}/cards/c01/cloze", member=404
    ),
    ("/api/v1/decks/<slug>/cards/<key>/cloze", "PUT"): Probe(
        "/api/v1/decks/{private}/cards/c01/cloze", {"text": "x"}, member=404
    ),
    ("/api/v1/decks/<slug>/export.apkg", "GET"): Probe(
        "/api/v1/decks/{private}/export.apkg", member=404
    ),
    ("/api/v1/decks/<slug>/subscription", "PUT"): Probe(
        "/api/v1/decks/{private}/subscription", {}, member=404
    ),
    ("/api/v1/decks/<slug>/subscription", "DELETE"): Probe(
        "/api/v1/decks/{private}/subscription", member=404
    ),
    # API: team Alpha
    ("/api/v1/teams/<int:team_id>", "GET"): Probe("/api/v1/teams/{team}", member=200),
    ("/api/v1/teams/<int:team_id>", "PATCH"): Probe("/api/v1/teams/{team}", {"name": "x"}),
    ("/api/v1/teams/<int:team_id>", "DELETE"): Probe("/api/v1/teams/{team}"),
    ("/api/v1/teams/<int:team_id>/assignments", "GET"): Probe(
        "/api/v1/teams/{team}/assignments", member=200
    ),
    ("/api/v1/teams/<int:team_id>/assignments/<slug>", "PUT"): Probe(
        "/api/v1/teams/{team}/assignments/{deck}",
        {},
        cross="/api/v1/teams/{team}/assignments/{b_deck}",
    ),
    ("/api/v1/teams/<int:team_id>/assignments/<slug>", "DELETE"): Probe(
        "/api/v1/teams/{team}/assignments/{deck}",
        cross="/api/v1/teams/{team}/assignments/{b_deck}",
    ),
    ("/api/v1/teams/<int:team_id>/dashboard", "GET"): Probe("/api/v1/teams/{team}/dashboard"),
    ("/api/v1/teams/<int:team_id>/dashboard.csv", "GET"): Probe(
        "/api/v1/teams/{team}/dashboard.csv"
    ),
    ("/api/v1/teams/<int:team_id>/decks", "GET"): Probe("/api/v1/teams/{team}/decks", member=200),
    ("/api/v1/teams/<int:team_id>/decks", "POST"): Probe("/api/v1/teams/{team}/decks", UPLOAD),
    ("/api/v1/teams/<int:team_id>/decks/<slug>", "GET"): Probe(
        "/api/v1/teams/{team}/decks/{deck}", member=200, cross="/api/v1/teams/{team}/decks/{b_deck}"
    ),
    ("/api/v1/teams/<int:team_id>/decks/<slug>", "DELETE"): Probe(
        "/api/v1/teams/{team}/decks/{deck}", cross="/api/v1/teams/{team}/decks/{b_deck}"
    ),
    ("/api/v1/teams/<int:team_id>/decks/<slug>/cards", "POST"): Probe(
        "/api/v1/teams/{team}/decks/{deck}/cards",
        {"front": "x", "back": "y"},
        cross="/api/v1/teams/{team}/decks/{b_deck}/cards",
    ),
    ("/api/v1/teams/<int:team_id>/decks/<slug>/cards/<key>/cloze", "GET"): Probe(
        "/api/v1/teams/{team}/decks/{deck}/cards/q01/cloze",
        cross="/api/v1/teams/{team}/decks/{b_deck}/cards/q01/cloze",
    ),
    ("/api/v1/teams/<int:team_id>/decks/<slug>/cards/<key>/cloze", "PUT"): Probe(
        "/api/v1/teams/{team}/decks/{deck}/cards/q01/cloze",
        {"text": "x"},
        cross="/api/v1/teams/{team}/decks/{b_deck}/cards/q01/cloze",
    ),
    ("/api/v1/teams/<int:team_id>/decks/<slug>/cards/<key>", "PUT"): Probe(
        "/api/v1/teams/{team}/decks/{deck}/cards/q01",
        CARD,
        cross="/api/v1/teams/{team}/decks/{b_deck}/cards/q01",
    ),
    ("/api/v1/teams/<int:team_id>/decks/<slug>/cards/<key>", "DELETE"): Probe(
        "/api/v1/teams/{team}/decks/{deck}/cards/q01",
        cross="/api/v1/teams/{team}/decks/{b_deck}/cards/q01",
    ),
    ("/api/v1/teams/<int:team_id>/decks/<slug>/source", "PUT"): Probe(
        "/api/v1/teams/{team}/decks/{deck}/source",
        UPLOAD,
        cross="/api/v1/teams/{team}/decks/{b_deck}/source",
    ),
    ("/api/v1/teams/<int:team_id>/hardest", "GET"): Probe("/api/v1/teams/{team}/hardest"),
    ("/api/v1/teams/<int:team_id>/invitations", "GET"): Probe("/api/v1/teams/{team}/invitations"),
    ("/api/v1/teams/<int:team_id>/invitations", "POST"): Probe(
        "/api/v1/teams/{team}/invitations", {}
    ),
    ("/api/v1/teams/<int:team_id>/invitations/<int:invitation_id>", "DELETE"): Probe(
        "/api/v1/teams/{team}/invitations/{inv}", cross="/api/v1/teams/{team}/invitations/{b_inv}"
    ),
    ("/api/v1/teams/<int:team_id>/members", "GET"): Probe("/api/v1/teams/{team}/members"),
    ("/api/v1/teams/<int:team_id>/members/<int:member_id>", "PATCH"): Probe(
        "/api/v1/teams/{team}/members/{member}",
        {"role": "manager"},
        cross="/api/v1/teams/{team}/members/{bob}",
    ),
    ("/api/v1/teams/<int:team_id>/members/<int:member_id>", "DELETE"): Probe(
        "/api/v1/teams/{team}/members/{member}", cross="/api/v1/teams/{team}/members/{bob}"
    ),
    ("/api/v1/teams/<int:team_id>/removals", "GET"): Probe("/api/v1/teams/{team}/removals"),
    ("/api/v1/teams/<int:team_id>/removals/<int:member_id>", "DELETE"): Probe(
        "/api/v1/teams/{team}/removals/{member}", cross="/api/v1/teams/{team}/removals/{bob}"
    ),
    ("/api/v1/teams/<int:team_id>/membership", "DELETE"): Probe(
        "/api/v1/teams/{team}/membership", member=None
    ),
    ("/api/v1/teams/<int:team_id>/transfer", "POST"): Probe(
        "/api/v1/teams/{team}/transfer",
        {"user_id": "{member}"},
        cross="/api/v1/teams/{team}/transfer",
        cross_body={"user_id": "{bob}"},
    ),
    # Web: Alice's own objects
    ("/browse/cards/<int:card_id>", "GET"): Probe("/browse/cards/{card}", member=404),
    ("/decks/<slug>", "GET"): Probe("/decks/{private}", member=404),
    ("/decks/<slug>/apkg", "GET"): Probe("/decks/{private}/apkg", member=404),
    ("/decks/<slug>/cards", "GET"): Probe("/decks/{private}/cards", member=404),
    ("/decks/<slug>/cards", "POST"): Probe("/decks/{private}/cards", WEB_CARD, member=404),
    ("/decks/<slug>/cards/<key>", "GET"): Probe("/decks/{private}/cards/c01", member=404),
    ("/decks/<slug>/cards/<key>", "POST"): Probe(
        "/decks/{private}/cards/c01", dict(WEB_CARD, tags="t"), member=404
    ),
    ("/decks/<slug>/cards/<key>/retire", "POST"): Probe(
        "/decks/{private}/cards/c01/retire", {}, member=404
    ),
    ("/decks/<slug>/cards/<key>/cloze", "POST"): Probe(
        "/decks/{private}/cards/c01/cloze", {"cloze": "x", "extra": ""}, member=404
    ),
    ("/decks/<slug>/cards/<key>/media", "POST"): Probe(
        "/decks/{private}/cards/c01/media", {"locale": "en", "side": "question"}, member=404
    ),
    ("/decks/<slug>/rename", "POST"): Probe("/decks/{private}/rename", {"title": "x"}, member=404),
    ("/decks/<slug>/delete", "GET"): Probe("/decks/{private}/delete", member=404),
    ("/decks/<slug>/delete", "POST"): Probe("/decks/{private}/delete", {}, member=404),
    ("/decks/<slug>/settings", "POST"): Probe(
        "/decks/{private}/settings", {"new_per_day": "3"}, member=404
    ),
    ("/decks/<slug>/subscription", "POST"): Probe("/decks/{private}/subscription", {}, member=404),
    ("/decks/<slug>/unsubscribe", "POST"): Probe("/decks/{private}/unsubscribe", {}, member=404),
    # Revoking acts only on the caller's own tokens: another's id is not found.
    ("/leeches/<int:card_id>/unsuspend", "POST"): Probe(
        "/leeches/{card}/unsuspend", {}, member=404
    ),
    ("/tokens/<int:token_id>/revoke", "POST"): Probe(
        "/tokens/{token_id}/revoke", {}, member=None, outsider=(404,)
    ),
    # Web: team Alpha
    ("/teams/<int:team_id>", "GET"): Probe("/teams/{team}", member=200),
    ("/teams/<int:team_id>/assignments", "POST"): Probe(
        "/teams/{team}/assignments",
        {"deck": "{deck}"},
        cross="/teams/{team}/assignments",
        cross_body={"deck": "{b_deck}"},
    ),
    ("/teams/<int:team_id>/assignments/<slug>/remove", "POST"): Probe(
        "/teams/{team}/assignments/{deck}/remove",
        {},
        cross="/teams/{team}/assignments/{b_deck}/remove",
    ),
    ("/teams/<int:team_id>/dashboard", "GET"): Probe("/teams/{team}/dashboard"),
    ("/teams/<int:team_id>/dashboard.csv", "GET"): Probe("/teams/{team}/dashboard.csv"),
    ("/teams/<int:team_id>/decks", "GET"): Probe("/teams/{team}/decks", member=200),
    ("/teams/<int:team_id>/decks", "POST"): Probe(
        "/teams/{team}/decks", {"format": "csv", "content": "Q,A\n", "title": "T"}
    ),
    ("/teams/<int:team_id>/decks/<slug>", "GET"): Probe(
        "/teams/{team}/decks/{deck}", member=200, cross="/teams/{team}/decks/{b_deck}"
    ),
    ("/teams/<int:team_id>/decks/<slug>/cards/<key>", "GET"): Probe(
        "/teams/{team}/decks/{deck}/cards/q01",
        member=200,
        cross="/teams/{team}/decks/{b_deck}/cards/q01",
    ),
    ("/teams/<int:team_id>/decks/<slug>/cards/<key>", "POST"): Probe(
        "/teams/{team}/decks/{deck}/cards/q01",
        WEB_CARD,
        cross="/teams/{team}/decks/{b_deck}/cards/q01",
    ),
    ("/teams/<int:team_id>/decks/<slug>/cards/<key>/cloze", "POST"): Probe(
        "/teams/{team}/decks/{deck}/cards/q01/cloze",
        {"cloze": "x", "extra": ""},
        cross="/teams/{team}/decks/{b_deck}/cards/q01/cloze",
    ),
    ("/teams/<int:team_id>/decks/<slug>/cards", "POST"): Probe(
        "/teams/{team}/decks/{deck}/cards", WEB_CARD, cross="/teams/{team}/decks/{b_deck}/cards"
    ),
    ("/teams/<int:team_id>/decks/<slug>/cards/<key>/retire", "POST"): Probe(
        "/teams/{team}/decks/{deck}/cards/q01/retire",
        {},
        cross="/teams/{team}/decks/{b_deck}/cards/q01/retire",
    ),
    ("/teams/<int:team_id>/decks/<slug>/source", "POST"): Probe(
        "/teams/{team}/decks/{deck}/source",
        {"format": "csv", "content": "Q,A\n", "title": "T", "locale": "es"},
        cross="/teams/{team}/decks/{b_deck}/source",
    ),
    ("/teams/<int:team_id>/decks/<slug>/delete", "GET"): Probe(
        "/teams/{team}/decks/{deck}/delete", cross="/teams/{team}/decks/{b_deck}/delete"
    ),
    ("/teams/<int:team_id>/decks/<slug>/delete", "POST"): Probe(
        "/teams/{team}/decks/{deck}/delete", {}, cross="/teams/{team}/decks/{b_deck}/delete"
    ),
    ("/teams/<int:team_id>/rename", "POST"): Probe("/teams/{team}/rename", {"name": "x"}),
    ("/teams/<int:team_id>/delete", "GET"): Probe("/teams/{team}/delete"),
    ("/teams/<int:team_id>/delete", "POST"): Probe("/teams/{team}/delete", {}),
    ("/teams/<int:team_id>/invitations", "POST"): Probe("/teams/{team}/invitations", {}),
    ("/teams/<int:team_id>/invitations/<int:invitation_id>/revoke", "POST"): Probe(
        "/teams/{team}/invitations/{inv}/revoke",
        {},
        cross="/teams/{team}/invitations/{b_inv}/revoke",
    ),
    ("/teams/<int:team_id>/leave", "POST"): Probe("/teams/{team}/leave", {}, member=None),
    ("/teams/<int:team_id>/members/<int:member_id>/owner", "POST"): Probe(
        "/teams/{team}/members/{member}/owner", {}, cross="/teams/{team}/members/{bob}/owner"
    ),
    ("/teams/<int:team_id>/members/<int:member_id>/remove", "POST"): Probe(
        "/teams/{team}/members/{member}/remove", {}, cross="/teams/{team}/members/{bob}/remove"
    ),
    # Only the team's owner makes a member's reset link; anyone else learns nothing: 404.
    ("/teams/<int:team_id>/members/<int:member_id>/reset-link", "POST"): Probe(
        "/teams/{team}/members/{member}/reset-link",
        {},
        member=404,
        cross="/teams/{team}/members/{bob}/reset-link",
    ),
    ("/teams/<int:team_id>/members/<int:member_id>/role", "POST"): Probe(
        "/teams/{team}/members/{member}/role",
        {"role": "manager"},
        cross="/teams/{team}/members/{bob}/role",
    ),
    ("/teams/<int:team_id>/removals/<int:member_id>/allow", "POST"): Probe(
        "/teams/{team}/removals/{member}/allow", {}, cross="/teams/{team}/removals/{bob}/allow"
    ),
    ("/static/<path:filename>", "GET"): Probe("", exempt="files shipped with the app, no owner"),
    # A file of Alice's media folder: the web serves each person their own only.
    ("/media/<path:name>", "GET"): Probe("/media/alpha-secret.png", member=None),
    ("/api/v1/media/<path:name>", "GET"): Probe("/api/v1/media/alpha-secret.png", member=None),
    ("/api/v1/media/<path:name>", "POST"): Probe(
        "",
        exempt="adds to the caller's own media folder: a name there is nobody else's object "
        "(another person's file of that name stays theirs; tests/test_card_media.py)",
    ),
    ("/tokens/devices/<int:device_id>/revoke", "POST"): Probe(
        "/tokens/devices/{device_id}/revoke", {}, member=None, outsider=(404,)
    ),
    ("/sync/<method>", "POST"): Probe(
        "",
        exempt="Anki's sync: a protocol method, not an object; the host key names the "
        "person, and another's sync is a 409 (tests/test_anki_sync_wire.py)",
    ),
    ("/msync/<method>", "POST"): Probe(
        "", exempt="Anki's media sync: a protocol method, not an object (test_anki_sync_wire)"
    ),
}


def rules_with_arguments(app: Flask) -> set[tuple[str, str]]:
    return {
        (rule.rule, method)
        for rule in app.url_map.iter_rules()
        if rule.arguments
        for method in rule.methods or ()
        if method not in ("HEAD", "OPTIONS")
    }


def test_every_route_with_an_argument_is_in_the_table(tmp_path: Path) -> None:
    # Only the route table: no database is opened.
    app = create_app({"TESTING": True, "DATABASE_URL": f"sqlite:///{tmp_path / 'r.db'}"})
    routes = rules_with_arguments(app)
    app.extensions["flashcards.engine"].dispose()
    missing = sorted(routes - ROUTES.keys())
    assert not missing, f"add these routes to ROUTES, with how to call them: {missing}"
    stale = sorted(ROUTES.keys() - routes)
    assert not stale, f"these ROUTES entries match no route any more: {stale}"


def dump(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    with Session(engine) as s:
        return {
            t.name: [tuple(r) for r in s.execute(select(t).order_by(*t.primary_key.columns))]
            for t in Base.metadata.sorted_tables
        }


class World:
    def __init__(self, engine: Engine) -> None:
        with transaction(engine) as s:
            self.alice = f.make_user(s, "alice@example.com")
            self.mia = f.make_user(s, "mia@example.com")
            self.bob = f.make_user(s, "bob@example.com")
            self.tokens = {u: f.make_token(s, u) for u in (self.alice, self.mia, self.bob)}
            self.token_id = s.scalars(
                select(ApiToken.id).where(ApiToken.user_id == self.alice)
            ).one()
            device_key = anki_devices.issue_key(s, self.alice, client_version="anki", now=T0)
            device = anki_devices.device_for_key(s, device_key)
            assert device is not None
            self.device_id = device.id
            alpha = create_team(s, self.alice, "Alpha Secret Team", now=T0).id
            bravo = create_team(s, self.bob, "Bravo", now=T0).id
            link = invitations.create_invitation(s, alpha, self.alice, now=T0)
            invitations.join(s, self.mia, link.token, now=T0)
            revoked = invitations.create_invitation(s, alpha, self.alice, now=T0)
            invitations.revoke_invitation(s, alpha, self.alice, revoked.invitation.id, now=T0)
            deck, _ = team_decks.create_team_deck(
                s, alpha, self.alice, fmt="csv", content=CSV, locale="en",
                title="Alpha deck secret", now=T0,
            )  # fmt: skip
            assignments.assign(s, alpha, self.alice, deck.slug, None, now=T0)
            b_deck, _ = team_decks.create_team_deck(
                s, bravo, self.bob, fmt="csv", content="Q,A\n", locale="en", title="Bravo",
                now=T0,
            )  # fmt: skip
            private = f.make_deck(s, "alpha-private", 2, owner_user_id=self.alice)
            card = f.card_ids(s, private.id)[0]
            self.values = {
                "team": alpha,
                "deck": deck.slug,
                "inv": link.invitation.id,
                "revoked": revoked.token,
                "member": self.mia,
                "private": private.slug,
                "card": card,
                "token_id": self.token_id,
                "device_id": self.device_id,
                "team_card": f.card_ids(s, deck.id)[0],
                "b_deck": b_deck.slug,
                "b_inv": invitations.create_invitation(s, bravo, self.bob, now=T0).invitation.id,
                "bob": self.bob,
            }
            _hide_secrets_in(s, private.id, card)
            secret = media_folder.Change("alpha-secret.png", SECRETS[1].encode())
            media_folder.apply_changes(s, self.alice, [secret], quota_mb=10, now=T0)

    def fill(self, template: Any, values: dict[str, Any] | None = None) -> Any:
        values = values or self.values
        if isinstance(template, dict):
            return {k: self.fill(v, values) for k, v in template.items()}
        if not isinstance(template, str):
            return template
        whole = re.fullmatch(r"\{(\w+)\}", template)
        if whole and isinstance(values[whole[1]], int):
            return values[whole[1]]  # a JSON id stays a number
        return template.format(**values)


def _hide_secrets_in(s: Session, deck_id: int, card_id: int) -> None:
    s.execute(update(DeckText).where(DeckText.deck_id == deck_id).values(title=SECRETS[5]))
    s.execute(update(CardText).where(CardText.card_id == card_id).values(question=SECRETS[4]))


class Caller:
    """One person, through the API (bearer token) or the web (a signed-in session)."""

    def __init__(self, app: Flask, world: World, user: int, email: str, web: bool) -> None:
        self.client = app.test_client()
        self.web = web
        self.headers = {"Authorization": f"Bearer {world.tokens[user]}"}
        if web:
            form = {"csrf_token": csrf(self.client), "email": email, "password": f.PASSWORD}
            assert self.client.post("/signin", data=form).status_code == 302

    def __call__(self, method: str, url: str, body: dict[str, Any] | None) -> TestResponse:
        if not self.web:
            return self.client.open(url, method=method, headers=self.headers, json=body)
        if method == "GET":
            return self.client.get(url)
        return self.client.open(
            url, method=method, data={**(body or {}), "csrf_token": csrf(self.client, "/")}
        )


@pytest.fixture
def world(engine: Engine) -> World:
    return World(engine)


def probes(web: bool) -> list[tuple[str, str, Probe]]:
    return [
        (rule, method, probe)
        for (rule, method), probe in sorted(ROUTES.items())
        if not probe.exempt and rule.startswith("/api/") != web
    ]


def check(r: TestResponse, expected: tuple[int, ...], what: tuple[Any, ...]) -> None:
    assert r.status_code in expected, (*what, r.status_code, r.get_data(as_text=True)[:300])
    text = r.get_data(as_text=True)
    leaked = [secret for secret in SECRETS if secret in text]
    assert not leaked, (*what, leaked)
    if not what[0].startswith("/api/") or r.status_code < 300:
        return
    assert r.mimetype == "application/problem+json", what


@pytest.mark.parametrize("web", [False, True], ids=["api", "web"])
def test_other_people_and_teams_get_404_or_403(
    app: Flask, engine: Engine, world: World, web: bool
) -> None:
    bob = Caller(app, world, world.bob, "bob@example.com", web)
    mia = Caller(app, world, world.mia, "mia@example.com", web)
    alice = Caller(app, world, world.alice, "alice@example.com", web)
    before = dump(engine)
    huge = {k: HUGE if isinstance(v, int) else v for k, v in world.values.items()}
    for rule, method, probe in probes(web):
        url, body = world.fill(probe.url), world.fill(probe.body)
        check(bob(method, url, body), probe.outsider, (rule, method, "bob"))
        if probe.member is not None and probe.member != 200:
            check(mia(method, url, body), (probe.member,), (rule, method, "mia"))
        if probe.cross is not None:
            cross_url, cross_body = world.fill(probe.cross), world.fill(probe.cross_body or body)
            check(alice(method, cross_url, cross_body), (404,), (rule, method, "alice, Bravo's"))
        if "<int:" in rule:
            r = alice(method, world.fill(probe.url, huge), world.fill(probe.body, huge))
            # 422: a huge id in a JSON body is refused by its range check before any lookup.
            allowed = (404, 422, *probe.outsider)
            assert r.status_code in allowed, (rule, method, "huge", r.status_code)
    # Deck and card routes again, with Alpha's team deck and its card: Bob is no member.
    team_objects = {
        **world.values,
        "private": world.values["deck"],
        "card": world.values["team_card"],
    }
    for rule, method, probe in probes(web):
        if "{private}" in probe.url or "{card}" in probe.url:
            url, body = world.fill(probe.url, team_objects), world.fill(probe.body, team_objects)
            check(bob(method, url, body), probe.outsider, (rule, method, "bob, Alpha's deck"))
    assert dump(engine) == before
    # The probes meant something: Alice and Mia are let in where they belong.
    for rule, method, probe in probes(web):
        if method == "GET" and probe.member == 200:
            url = world.fill(probe.url)
            assert mia(method, url, None).status_code == 200, (rule, "mia")
            assert alice(method, url, None).status_code == 200, (rule, "alice")


OTHERS_OBJECTS = [("card", "private"), ("team_card", "deck")]
REVIEW_ID = "0" * 8 + "-0000-4000-8000-" + "0" * 12


@pytest.mark.parametrize(("card", "deck"), OTHERS_OBJECTS, ids=["alices", "alphas"])
def test_ids_in_bodies_and_queries(
    app: Flask, engine: Engine, world: World, card: str, deck: str
) -> None:
    bob = Caller(app, world, world.bob, "bob@example.com", False)
    card_id, slug = world.values[card], world.values[deck]
    review = {"card_id": card_id, "rating": "good", "review_id": REVIEW_ID}
    before = dump(engine)
    for method, url, body in [
        ("POST", "/api/v1/reviews", review),
        ("GET", f"/api/v1/study/next?deck={slug}", None),
        ("POST", "/api/v1/reviews/undo", {"card_id": card_id}),
        ("POST", "/api/v1/cards/actions", {"card_ids": [card_id], "action": "suspend"}),
    ]:
        r = bob(method, url, body)
        # 409 from undo: Bob has no answer to undo; nothing about Alice's card is said.
        assert r.status_code in (404, 409, 422), (url, r.status_code, r.get_json())
        assert not any(secret in r.get_data(as_text=True) for secret in SECRETS)
    # A search's deck is a filter, not a lookup: another's deck matches nothing, as no deck.
    found = bob("GET", f"/api/v1/cards?deck={slug}", None).get_json()
    assert found["total"] == 0 and found["cards"] == []
    assert dump(engine) == before


@pytest.mark.parametrize(("card", "deck"), OTHERS_OBJECTS, ids=["alices", "alphas"])
def test_ids_in_the_study_forms(
    app: Flask, engine: Engine, world: World, card: str, deck: str
) -> None:
    bob = Caller(app, world, world.bob, "bob@example.com", True)
    card_id, slug = world.values[card], world.values[deck]
    answer = {"card_id": str(card_id), "rating": "3", "deck": slug, "review_id": REVIEW_ID}
    before = dump(engine)
    page = bob("GET", f"/study?deck={slug}", None)
    assert page.status_code == 404, page.status_code
    # The browser's bulk form answers another's card as no card at all.
    r = bob("POST", "/browse/actions", {"card_id": str(card_id), "action": "suspend"})
    assert r.status_code == 404 and not any(s in r.get_data(as_text=True) for s in SECRETS)
    for url, body in [("/study/answer", answer), ("/study/undo", {"deck": slug})]:
        r = bob("POST", url, body)
        # The forms redirect back with a message; the card and deck stay unnamed.
        assert r.status_code == 303, (url, r.status_code)
        shown = bob("GET", "/library", None).get_data(as_text=True)
        assert not any(secret in shown for secret in SECRETS), url
    assert dump(engine) == before


def test_a_revoked_link_in_the_join_forms(app: Flask, engine: Engine, world: World) -> None:
    bob = Caller(app, world, world.bob, "bob@example.com", True)
    revoked = world.values["revoked"]
    before = dump(engine)
    for url, body in [
        ("/join", {"invitation": f"/join#{revoked}"}),
        ("/join/confirm", {"token": revoked}),
    ]:
        r = bob("POST", url, body)
        assert r.status_code == 404, (url, r.status_code)
        assert not any(secret in r.get_data(as_text=True) for secret in SECRETS), url
    assert "Alpha" not in bob("GET", "/join", None).get_data(as_text=True)
    assert dump(engine) == before
