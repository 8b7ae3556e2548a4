"""GET /api/v1/health: whether this instance can serve, for a load balancer or a monitor."""

from __future__ import annotations

from typing import Any

from flask import Response, jsonify
from sqlalchemy import literal, select

from ..rawsql import Statement
from ..request_db import direct
from . import bp
from .openapi import json_content

_PING = Statement(select(literal(1).label("one")))


@bp.get("/health")
def health() -> Response:
    # A round trip on the connection that answers use: a database that cannot be reached
    # (or a connection it dropped) is a 503 from the API's error handler.
    direct().first(_PING, {})
    return jsonify(status="ok")


PATHS: dict[str, Any] = {
    "/api/v1/health": {
        "get": {
            "operationId": "getHealth",
            "summary": "Health check: 200 while this instance can reach its database.",
            "description": "For a load balancer's or monitor's probe; no token needed. A "
            "503 with Retry-After while the database is out of reach.",
            "security": [],
            "responses": {
                "200": {
                    "description": "This instance can serve.",
                    "content": json_content(
                        {
                            "type": "object",
                            "required": ["status"],
                            "properties": {"status": {"const": "ok"}},
                        }
                    ),
                }
            },
        }
    }
}
