from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from sqlalchemy import Engine

from flashcards.api.models_teams import MAX_CARD_TEXT, MAX_UPLOAD
from flashcards.api.openapi import build_document
from flashcards.people import accounts
from flashcards.storage.engine import transaction
from flashcards.storage.schema import MAX_ID
from flashcards.teams import membership
from flashcards.teams.membership import create_team

from .conftest import T0

OURS = {
    ("/api/v1/openapi.json", "get"),
    ("/api/v1/tokens", "post"),
    ("/api/v1/tokens/current", "delete"),
    ("/api/v1/me", "get"),
    ("/api/v1/me", "patch"),
    ("/api/v1/me/password", "post"),
    ("/api/v1/users", "post"),
}


@pytest.fixture(autouse=True)
def cheap_password_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    # The production cost (32 MiB, ~0.1 s a hash) is tested once in test_accounts.py.
    monkeypatch.setattr(accounts, "PASSWORD_METHOD", "scrypt:1024:8:1")


def document(client: FlaskClient) -> dict[str, Any]:
    response = client.get("/api/v1/openapi.json")
    assert response.status_code == 200
    body: dict[str, Any] = response.get_json()
    return body


def refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from refs(item)


def test_document_is_valid_openapi_3_1(client: FlaskClient) -> None:
    doc = document(client)
    assert doc["openapi"].startswith("3.1")
    from schemathesis.specs.openapi.definitions import OPENAPI_31_VALIDATOR

    OPENAPI_31_VALIDATOR.validate(doc)  # raises on any structural error
    schemathesis.openapi.from_dict(doc).validate()


def test_document_fails_validation_when_broken(client: FlaskClient) -> None:
    # The validator above is not a no-op.
    from schemathesis.specs.openapi.definitions import OPENAPI_31_VALIDATOR

    doc = document(client)
    doc["paths"]["/api/v1/me"]["get"]["responses"] = "nothing"
    assert not OPENAPI_31_VALIDATOR.is_valid(doc)


def test_every_reference_resolves(client: FlaskClient) -> None:
    doc = document(client)
    for ref in refs(doc):
        assert ref.startswith("#/"), ref
        node: Any = doc
        for part in ref[2:].split("/"):
            assert part in node, f"unresolved {ref}"
            node = node[part]


def test_lists_the_account_endpoints_with_security(client: FlaskClient) -> None:
    doc = document(client)
    operations = {(path, method) for path, item in doc["paths"].items() for method in item}
    assert operations >= OURS
    assert doc["components"]["securitySchemes"]["bearer"] == {
        "type": "http",
        "scheme": "bearer",
        "description": doc["components"]["securitySchemes"]["bearer"]["description"],
    }
    assert "Problem" in doc["components"]["schemas"]
    assert doc["paths"]["/api/v1/tokens"]["post"]["security"] == []
    me = doc["paths"]["/api/v1/me"]
    assert "401" in me["get"]["responses"]
    assert {"400", "401", "413", "415", "422"} <= set(me["patch"]["responses"])


def routes(app: Flask) -> set[tuple[str, str]]:
    routed = set()
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/api/"):
            continue
        path = re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", r"{\1}", rule.rule)
        for method in rule.methods or ():
            if method not in {"HEAD", "OPTIONS"}:
                routed.add((path, method.lower()))
    return routed


def test_documented_operations_exist(app: Flask, client: FlaskClient) -> None:
    doc = document(client)
    documented = {(path, method) for path, item in doc["paths"].items() for method in item}
    assert documented - routes(app) == set()
    assert routes(app) >= OURS


def test_every_api_route_is_documented(app: Flask, client: FlaskClient) -> None:
    doc = document(client)
    documented = {(path, method) for path, item in doc["paths"].items() for method in item}
    assert routes(app) - documented == set()


def test_account_endpoints_conform_and_never_500(app: Flask, engine: Engine) -> None:
    """Schemathesis on our operations: no 5xx, every response matches the document."""
    with transaction(engine) as s:
        user = accounts.create_user(s, "ana@example.com", "correct horse", now=T0)
        token = accounts.issue_token(s, user.id, now=T0)
    app.config["SIGNIN_ATTEMPTS_PER_15_MIN"] = 1_000_000
    schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", app)
    headers = {"Authorization": f"Bearer {token}"}
    tested = []
    for result in schema.get_all_operations():
        operation = result.ok()
        if (operation.path, operation.method.lower()) not in OURS:
            continue
        if operation.path == "/api/v1/tokens/current":
            continue  # would revoke the token the other operations use

        @given(case=operation.as_strategy())
        @settings(
            max_examples=12,
            derandomize=True,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )
        def check(case: Any) -> None:
            case.call_and_validate(headers=headers)

        check()
        tested.append((operation.path, operation.method.lower()))
    assert set(tested) >= OURS - {
        ("/api/v1/tokens/current", "delete"),
        ("/api/v1/openapi.json", "get"),
    }


def test_an_undeclared_route_fails_the_document(app: Flask) -> None:
    # A view without @documented cannot slip past the document (and this test file).
    app.add_url_rule("/api/v1/undeclared", "undeclared", lambda: "")
    with pytest.raises(RuntimeError, match="/api/v1/undeclared"):
        build_document(app)


def test_schemas_are_the_models(client: FlaskClient) -> None:
    schemas = document(client)["components"]["schemas"]
    review = schemas["ReviewRequest"]
    assert review["additionalProperties"] is False
    assert review["properties"]["card_id"]["maximum"] == MAX_ID
    card = schemas["CardEdit"]["properties"]
    assert card["front"]["maxLength"] == card["back"]["maxLength"] == MAX_CARD_TEXT
    assert schemas["Upload"]["properties"]["content"]["maxLength"] == MAX_UPLOAD
    # Bounds are JSON Schema's words, never pydantic's own ("ge", "le").
    text = json.dumps(schemas)
    assert '"ge"' not in text and '"le"' not in text


def body_limit(client: FlaskClient, model: str, field: str, key: str) -> int:
    schema = document(client)["components"]["schemas"][model]["properties"][field]
    for kind in (schema, *schema.get("anyOf", ())):
        if key in kind:
            return int(kind[key])
    raise AssertionError(f"{model}.{field} has no {key}")


def test_documented_limits_are_the_enforced_ones(client: FlaskClient, engine: Engine) -> None:
    """At the documented limit a value passes validation; one past it is a 422 naming it."""
    with transaction(engine) as s:
        user = accounts.create_user(s, "lead@example.com", "correct horse", now=T0)
        token = accounts.issue_token(s, user.id, now=T0)
        team = create_team(s, user.id, "T", now=T0)
    auth = {"Authorization": f"Bearer {token}"}

    longest = body_limit(client, "CardEdit", "front", "maxLength")
    card = {"locale": "en", "back": "b"}
    url = f"/api/v1/teams/{team.id}/decks/nothing/cards/k"
    at_limit = client.put(url, json={**card, "front": "x" * longest}, headers=auth)
    assert at_limit.status_code == 404, at_limit.get_json()  # validated, then no such deck
    past = client.put(url, json={**card, "front": "x" * (longest + 1)}, headers=auth)
    assert past.status_code == 422 and past.get_json()["field"] == "front"

    highest = body_limit(client, "ReviewRequest", "card_id", "maximum")
    review = {"rating": 3, "review_id": "8d9f0f3e-4c83-4a46-9d5d-3f0a8a3f4e1a"}
    at_limit = client.post("/api/v1/reviews", json={**review, "card_id": highest}, headers=auth)
    assert at_limit.status_code == 404, at_limit.get_json()
    past = client.post("/api/v1/reviews", json={**review, "card_id": highest + 1}, headers=auth)
    assert past.status_code == 422 and past.get_json()["field"] == "card_id"
    assert past.get_json()["detail"] == f"card_id must be an integer from 1 to {highest}"

    most = body_limit(client, "InvitationRequest", "max_uses", "maximum")
    url = f"/api/v1/teams/{team.id}/invitations"
    assert client.post(url, json={"max_uses": most}, headers=auth).status_code == 201
    past = client.post(url, json={"max_uses": most + 1}, headers=auth)
    assert past.status_code == 422 and past.get_json()["field"] == "max_uses"


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ('{"name": "T", "extra": 1}', 422, "extra"),  # unknown fields first, as always
        ('{"name": 5}', 422, "name"),
        ('{"name": "T"', 400, None),
        ('{"name": NaN}', 400, None),
        ('["T"]', 422, None),
        ("{}", 422, "name"),
    ],
)
def test_refusals_name_the_field(
    client: FlaskClient, engine: Engine, body: str, status: int, field: str | None
) -> None:
    with transaction(engine) as s:
        user = accounts.create_user(s, "lead@example.com", "correct horse", now=T0)
        token = accounts.issue_token(s, user.id, now=T0)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    response = client.post("/api/v1/teams", data=body, headers=headers)
    assert response.status_code == status
    assert response.mimetype == "application/problem+json"
    assert response.get_json().get("field") == field
    with transaction(engine) as s:
        assert not membership.teams_of(s, user.id)  # nothing written


def test_a_utf16_body_is_still_read(client: FlaskClient, engine: Engine) -> None:
    # JSON may come in UTF-16 (RFC 8259 readers detect it); pydantic's parser reads UTF-8 only.
    with transaction(engine) as s:
        user = accounts.create_user(s, "lead@example.com", "correct horse", now=T0)
        token = accounts.issue_token(s, user.id, now=T0)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    body = '{"name": "Équipe"}'.encode("utf-16")
    response = client.post("/api/v1/teams", data=body, headers=headers)
    assert response.status_code == 201 and response.get_json()["name"] == "Équipe"
