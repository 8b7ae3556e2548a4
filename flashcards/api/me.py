"""The caller's account: GET/PATCH /api/v1/me, POST /api/v1/me/password, and sign-up."""

from __future__ import annotations

from flask import Response, current_app

from ..errors import InvalidInput, SignupClosed
from ..http.request_db import db, writes
from ..http.request_policies import change_password_limited, signup_key, signup_limiter
from ..people import accounts
from ..srs.settings import ME_FIELDS, apply_user_settings, user_settings, validate_settings
from ..storage.schema import utcnow
from . import bp
from .auth import current_user_id
from .bodies import parse_body
from .models import reply
from .models_accounts import Me, MePatch, PasswordChange, SignUp
from .openapi import Answer, documented

_ME = {200: Answer("The caller's account.", Me)}


@bp.get("/me")
@documented("getMe", "The caller's account and settings.", _ME)
def get_me() -> Response:
    return reply(Me(**user_settings(db(), current_user_id())))


@bp.patch("/me")
@documented("patchMe", "Change any subset of the caller's settings.", _ME, body=MePatch)
@writes
def patch_me() -> Response:
    user_id = current_user_id()
    sent = parse_body(MePatch).model_dump(exclude_unset=True)
    values = validate_settings(sent, allowed=ME_FIELDS)
    session = db()
    apply_user_settings(session, user_id, values)
    body = user_settings(session, user_id)
    session.commit()
    return reply(Me(**body))


@bp.post("/me/password")
@documented(
    "changePassword",
    "Change the caller's password.",
    {
        204: Answer(
            "Changed; every browser session is ended. With revoke_tokens, so are all the "
            "caller's API tokens, this request's included."
        )
    },
    403,
    429,
    description="A wrong current password (403) counts against the account as a failed "
    "sign-in does; past the limit the answer is 429 with Retry-After.",
    body=PasswordChange,
)
def change_password() -> tuple[str, int]:
    user_id = current_user_id()
    body = parse_body(PasswordChange)
    change_password_limited(
        user_id, body.current_password, body.new_password, revoke_tokens=body.revoke_tokens
    )
    db().commit()
    return "", 204


@bp.post("/users")
@documented(
    "signUp",
    "Create an account (when sign-up is open on this server).",
    {201: Answer("The new account.", Me)},
    403,
    409,
    429,
    description="Sign-up attempts from one client address are limited per hour "
    "(FLASHCARDS_SIGNUPS_PER_HOUR): an account made and an email that cannot be used (409) "
    "both count, a body refused for its values (422) does not; over the limit the answer is "
    "429 with Retry-After.",
    body=SignUp,
    public=True,
)
@writes
def sign_up() -> Response:
    if not current_app.config.get("SIGNUP_OPEN", True):
        raise SignupClosed("sign-up is closed on this server; ask an administrator for an account")
    body = parse_body(SignUp)
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
            body.email,
            body.password,
            now=utcnow(),
            display_name=body.display_name,
            locale=body.locale,
            timezone=body.timezone,
        )
    except InvalidInput:
        session.rollback()
        limiter.refund(key)  # refused for its own values: nothing was looked up
        raise
    result = user_settings(session, user.id)
    session.commit()
    response = reply(Me(**result), 201)
    response.headers["Location"] = "/api/v1/me"
    return response
