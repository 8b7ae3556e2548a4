"""POST /api/v1/tokens (sign in for a bearer token) and DELETE /api/v1/tokens/current."""

from __future__ import annotations

from typing import Any

from flask import Response, jsonify

from .. import accounts
from ..request_db import begin_writing, db, writes
from ..request_policies import signed_in, token_key, token_limiter
from ..storage.schema import utcnow
from . import bp
from .auth import bearer_token, current_user_id
from .errors import json_body, reject_unknown, string_field
from .openapi import BODY_PROBLEMS, json_content, json_request, problems, ref


@bp.post("/tokens")
def create_token() -> tuple[Response, int]:
    body = json_body()
    reject_unknown(body, {"email", "password", "name"})
    email = string_field(body, "email", max_length=accounts.MAX_EMAIL_LENGTH)
    password = string_field(body, "password", max_length=accounts.MAX_PASSWORD_LENGTH)
    name = string_field(body, "name", required=False, max_length=100)
    user = signed_in(email, password)  # 401, or 429 with Retry-After
    token_limiter().reserve(token_key(user.id))  # every token made counts
    # The sign-in read and the reservation done, the token is this request's write.
    session = begin_writing()
    token = accounts.issue_token(session, user.id, now=utcnow(), name=name)
    session.commit()
    return jsonify({"token": token}), 201


@bp.delete("/tokens/current")
@writes
def revoke_current_token() -> tuple[str, int]:
    current_user_id()
    session = db()
    accounts.revoke_token(session, bearer_token())
    session.commit()
    return "", 204


SCHEMAS: dict[str, Any] = {
    "TokenRequest": {
        "type": "object",
        "required": ["email", "password"],
        "additionalProperties": False,
        "properties": {
            "email": {"type": "string", "format": "email", "maxLength": 320},
            "password": {"type": "string", "maxLength": 1024},
            "name": {"type": "string", "maxLength": 100, "description": "A label, e.g. 'phone'."},
        },
    },
    "Token": {
        "type": "object",
        "required": ["token"],
        "properties": {
            "token": {"type": "string", "description": "Send as 'Authorization: Bearer <token>'."}
        },
    },
}

PATHS: dict[str, Any] = {
    "/api/v1/tokens": {
        "post": {
            "operationId": "createToken",
            "summary": "Sign in: exchange an email and password for a bearer token.",
            "description": "Failed attempts are limited per email and client address; over "
            "the limit the answer is 429 with Retry-After, even for the right password. "
            "Tokens made are limited per account and hour (FLASHCARDS_TOKENS_PER_HOUR, "
            "shared with the web's tokens page); over that, 429 with Retry-After too.",
            "security": [],
            "requestBody": json_request(ref("TokenRequest")),
            "responses": {
                "201": {"description": "A new token.", "content": json_content(ref("Token"))},
                **problems(401, 429, *BODY_PROBLEMS),
            },
        }
    },
    "/api/v1/tokens/current": {
        "delete": {
            "operationId": "revokeCurrentToken",
            "summary": "Sign out: revoke the token sent with this request.",
            "responses": {"204": {"description": "Revoked."}, **problems(401)},
        }
    },
}
