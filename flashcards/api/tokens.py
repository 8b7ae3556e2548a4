"""POST /api/v1/tokens (sign in for a bearer token) and DELETE /api/v1/tokens/current."""

from __future__ import annotations

from flask import Response

from ..http.request_db import begin_writing, db, writes
from ..http.request_policies import signed_in, token_key, token_limiter
from ..people import accounts
from ..storage.schema import utcnow
from . import bp
from .auth import bearer_token, current_user_id
from .bodies import parse_body
from .models import reply
from .models_accounts import Token, TokenRequest
from .openapi import Answer, documented


@bp.post("/tokens")
@documented(
    "createToken",
    "Sign in: exchange an email and password for a bearer token.",
    {201: Answer("A new token.", Token)},
    401,
    429,
    description="Failed attempts are limited per email and client address; over the limit the "
    "answer is 429 with Retry-After, even for the right password. Tokens made are limited per "
    "account and hour (FLASHCARDS_TOKENS_PER_HOUR, shared with the web's tokens page); over "
    "that, 429 with Retry-After too.",
    body=TokenRequest,
    public=True,
)
def create_token() -> Response:
    body = parse_body(TokenRequest)
    user = signed_in(body.email, body.password)  # 401, or 429 with Retry-After
    token_limiter().reserve(token_key(user.id))  # every token made counts
    # The sign-in read and the reservation done, the token is this request's write.
    session = begin_writing()
    token = accounts.issue_token(session, user.id, now=utcnow(), name=body.name)
    session.commit()
    return reply(Token(token=token), 201)


@bp.delete("/tokens/current")
@documented(
    "revokeCurrentToken",
    "Sign out: revoke the token sent with this request.",
    {204: Answer("Revoked.")},
)
@writes
def revoke_current_token() -> tuple[str, int]:
    current_user_id()
    session = db()
    accounts.revoke_token(session, bearer_token())
    session.commit()
    return "", 204
