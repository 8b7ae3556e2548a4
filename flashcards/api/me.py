"""The caller's account: GET/PATCH /api/v1/me, POST /api/v1/me/password, and sign-up."""

from __future__ import annotations

from typing import Any

from flask import Response, current_app, jsonify

from .. import accounts
from ..errors import Forbidden, InvalidInput
from ..names import hidden_characters_class
from ..request_db import db, writes
from ..request_policies import change_password_limited, signup_key, signup_limiter
from ..settings import (
    MAX_STEP_SECONDS,
    MAX_STEPS,
    ME_FIELDS,
    SUPPORTED_LOCALES,
    apply_user_settings,
    timezone_names,
    user_settings,
    validate_settings,
)
from ..storage.schema import utcnow
from . import bp
from .auth import current_user_id
from .errors import json_body, reject_unknown, string_field
from .openapi import BODY_PROBLEMS, json_content, json_request, problems, ref


@bp.get("/me")
def get_me() -> Response:
    return jsonify(user_settings(db(), current_user_id()))


@bp.patch("/me")
@writes
def patch_me() -> Response:
    user_id = current_user_id()
    values = validate_settings(json_body(), allowed=ME_FIELDS)
    session = db()
    apply_user_settings(session, user_id, values)
    body = user_settings(session, user_id)
    session.commit()
    return jsonify(body)


@bp.post("/me/password")
def change_password() -> tuple[str, int]:
    user_id = current_user_id()
    body = json_body()
    reject_unknown(body, {"current_password", "new_password", "revoke_tokens"})
    current = string_field(body, "current_password", max_length=accounts.MAX_PASSWORD_LENGTH)
    new = string_field(body, "new_password", max_length=accounts.MAX_PASSWORD_LENGTH)
    revoke_tokens = body.get("revoke_tokens", False)
    if not isinstance(revoke_tokens, bool):
        raise InvalidInput("revoke_tokens must be true or false", field="revoke_tokens")
    change_password_limited(user_id, current, new, revoke_tokens=revoke_tokens)
    db().commit()
    return "", 204


SIGNUP_FIELDS = {"email", "password", "display_name", "locale", "timezone"}


@bp.post("/users")
@writes
def sign_up() -> tuple[Response, int]:
    if not current_app.config.get("SIGNUP_OPEN", True):
        raise Forbidden("sign-up is closed on this server; ask an administrator for an account")
    body = json_body()
    reject_unknown(body, SIGNUP_FIELDS)
    email = string_field(body, "email", max_length=accounts.MAX_EMAIL_LENGTH)
    password = string_field(body, "password", max_length=accounts.MAX_PASSWORD_LENGTH)
    limiter = signup_limiter()
    key = signup_key()
    # Reserved before anything is looked up: an email found taken counts as an account made
    # does, so nobody can ask without limit which emails have an account.
    limiter.reserve(key)  # 429 with Retry-After
    session = db()
    try:
        # create_user validates these as PATCH /me does, naming the field at fault, before
        # it looks the email up.
        user = accounts.create_user(
            session,
            email,
            password,
            now=utcnow(),
            display_name=body.get("display_name", ""),
            locale=body.get("locale", "en"),
            timezone=body.get("timezone", "UTC"),
        )
    except InvalidInput:
        session.rollback()
        limiter.refund(key)  # refused for its own values: nothing was looked up
        raise
    result = user_settings(session, user.id)
    session.commit()
    response = jsonify(result)
    response.headers["Location"] = "/api/v1/me"
    return response, 201


_STEPS = {
    "type": "array",
    "maxItems": MAX_STEPS,
    "items": {"type": "integer", "minimum": 1, "maximum": MAX_STEP_SECONDS},
    "description": "Step lengths in seconds.",
}
_SETTINGS_PROPERTIES: dict[str, Any] = {
    "display_name": {
        "type": "string",
        "maxLength": 100,
        "pattern": f"^[^\\u0000-\\u001f\\u007f-\\u009f{hidden_characters_class()}]*$",
        "description": "No control characters, and no invisible or text-direction ones "
        "(Unicode format characters such as U+200B or U+202E); stored in NFKC form, with "
        "surrounding spaces removed.",
    },
    "locale": {"type": "string", "enum": list(SUPPORTED_LOCALES)},
    "timezone": {
        "type": "string",
        "description": "IANA name, e.g. America/Los_Angeles.",
        "enum": sorted(timezone_names()),
    },
    "day_start_hour": {"type": "integer", "minimum": 0, "maximum": 23},
    "desired_retention": {"type": "number", "minimum": 0.7, "maximum": 0.99},
    "learning_steps": _STEPS,
    "relearning_steps": _STEPS,
    "maximum_interval": {"type": "integer", "minimum": 1, "maximum": 36500},
    "new_per_day": {"type": "integer", "minimum": 0, "maximum": 9999},
    "reviews_per_day": {"type": "integer", "minimum": 0, "maximum": 99999},
}

SCHEMAS: dict[str, Any] = {
    "Me": {
        "type": "object",
        "required": ["id", "email", *_SETTINGS_PROPERTIES],
        "properties": {
            "id": {"type": "integer"},
            "email": {"type": "string"},
            **_SETTINGS_PROPERTIES,
        },
    },
    "MePatch": {
        "type": "object",
        "additionalProperties": False,
        "properties": _SETTINGS_PROPERTIES,
    },
    "PasswordChange": {
        "type": "object",
        "required": ["current_password", "new_password"],
        "additionalProperties": False,
        "properties": {
            "current_password": {"type": "string", "maxLength": 1024},
            "new_password": {"type": "string", "minLength": 8, "maxLength": 1024},
            "revoke_tokens": {
                "type": "boolean",
                "default": False,
                "description": "Also revoke every API token of the caller, the one sending "
                "this request included (after a leaked password).",
            },
        },
    },
    "SignUp": {
        "type": "object",
        "required": ["email", "password"],
        "additionalProperties": False,
        "properties": {
            "email": {"type": "string", "format": "email", "maxLength": 320},
            "password": {"type": "string", "minLength": 8, "maxLength": 1024},
            "display_name": _SETTINGS_PROPERTIES["display_name"],
            "locale": _SETTINGS_PROPERTIES["locale"],
            "timezone": _SETTINGS_PROPERTIES["timezone"],
        },
    },
}

_ME_RESPONSE = {"description": "The caller's account.", "content": json_content(ref("Me"))}

PATHS: dict[str, Any] = {
    "/api/v1/me": {
        "get": {
            "operationId": "getMe",
            "summary": "The caller's account and settings.",
            "responses": {"200": _ME_RESPONSE, **problems(401)},
        },
        "patch": {
            "operationId": "patchMe",
            "summary": "Change any subset of the caller's settings.",
            "requestBody": json_request(ref("MePatch")),
            "responses": {"200": _ME_RESPONSE, **problems(401, *BODY_PROBLEMS)},
        },
    },
    "/api/v1/me/password": {
        "post": {
            "operationId": "changePassword",
            "summary": "Change the caller's password.",
            "description": "A wrong current password (403) counts against the account as a "
            "failed sign-in does; past the limit the answer is 429 with Retry-After.",
            "requestBody": json_request(ref("PasswordChange")),
            "responses": {
                "204": {
                    "description": "Changed; every browser session is ended. With "
                    "revoke_tokens, so are all the caller's API tokens, this request's included."
                },
                **problems(401, 403, 429, *BODY_PROBLEMS),
            },
        }
    },
    "/api/v1/users": {
        "post": {
            "operationId": "signUp",
            "summary": "Create an account (when sign-up is open on this server).",
            "description": "Sign-up attempts from one client address are limited per hour "
            "(FLASHCARDS_SIGNUPS_PER_HOUR): an account made and an email that cannot be "
            "used (409) both count, a body refused for its values (422) does not; over the "
            "limit the answer is 429 with Retry-After.",
            "security": [],
            "requestBody": json_request(ref("SignUp")),
            "responses": {
                "201": {"description": "The new account.", "content": json_content(ref("Me"))},
                **problems(403, 409, 429, *BODY_PROBLEMS),
            },
        }
    },
}
