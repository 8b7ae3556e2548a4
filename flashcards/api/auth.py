"""Bearer-token authentication for the API: one indexed query per request, cached on `g`."""

from __future__ import annotations

from flask import g, request

from .. import accounts
from ..errors import Unauthorized
from ..http import direct

_INVALID = "the API token is not valid or has been revoked"


def bearer_token() -> str:
    """The token of `Authorization: Bearer <token>`; Unauthorized when there is none."""
    scheme, _, token = request.headers.get("Authorization", "").strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise Unauthorized("send an API token as 'Authorization: Bearer <token>'")
    return token


def current_caller() -> accounts.Caller:
    """The caller, with their clock and whether team pacing applies (see `accounts.Caller`)."""
    cached: accounts.Caller | None = g.get("_api_caller")
    if cached is not None:
        return cached
    caller = accounts.caller_for_token(direct(), bearer_token())
    if caller is None:
        raise Unauthorized(_INVALID)
    g._api_caller = caller
    g._api_user_id = caller.user_id
    return caller


def current_user_id() -> int:
    """The id of the user whose token came with the request; Unauthorized otherwise."""
    cached: int | None = g.get("_api_user_id")
    if cached is not None:
        return cached
    user_id = accounts.user_id_for_token(direct(), bearer_token())
    if user_id is None:
        raise Unauthorized(_INVALID)
    g._api_user_id = user_id
    return user_id
