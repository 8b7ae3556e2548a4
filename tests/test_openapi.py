from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from sqlalchemy import Engine

from flashcards import accounts
from flashcards.storage.engine import transaction

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
