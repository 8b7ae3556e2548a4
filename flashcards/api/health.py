"""GET /api/v1/health: whether this instance can serve, for a load balancer or a monitor."""

from __future__ import annotations

from flask import Response

from ..hot_sql.health import ping
from ..http.request_db import direct
from . import bp
from .models import reply
from .models_accounts import Health
from .openapi import Answer, documented


@bp.get("/health")
@documented(
    "getHealth",
    "Health check: 200 while this instance can reach its database.",
    {200: Answer("This instance can serve.", Health)},
    description="For a load balancer's or monitor's probe; no token needed. A 503 with "
    "Retry-After while the database is out of reach.",
    public=True,
)
def health() -> Response:
    # A round trip on the connection that answers use: a database that cannot be reached
    # (or a connection it dropped) is a 503 from the API's error handler.
    ping(direct())
    return reply(Health(status="ok"))
