"""Behind trusted reverse proxies, sign-in limits count per client, not per proxy."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient
from sqlalchemy import Engine

from flashcards import create_app
from tests.test_api_auth import add_user


def failures_from(client: FlaskClient, address: str, times: int) -> list[int]:
    body = {"email": "ana@example.com", "password": "wrong horse"}
    headers = {"X-Forwarded-For": address}
    return [
        client.post("/api/v1/tokens", json=body, headers=headers).status_code for _ in range(times)
    ]


@pytest.mark.parametrize("proxies", [0, 1])
def test_forwarded_for_is_believed_only_from_trusted_proxies(
    database_url: str, engine: Engine, proxies: int
) -> None:
    add_user(engine)
    app = create_app(
        {
            "TESTING": True,
            "DATABASE_URL": database_url,
            "SECRET_KEY": "test",
            "SIGNIN_ATTEMPTS_PER_15_MIN": 2,
            "TRUSTED_PROXIES": proxies,
        }
    )
    try:
        client = app.test_client()
        assert failures_from(client, "203.0.113.7", 3) == [401, 401, 429]
        # Another client behind the same proxy: its own count when the proxy is trusted;
        # without trust every client is the proxy's one address, and a header can't dodge it.
        expected = [401] if proxies else [429]
        assert failures_from(client, "198.51.100.9", 1) == expected
    finally:
        app.extensions["flashcards.engine"].dispose()
