"""Bearer-token authentication for the API: one indexed query per request, cached on `g`
(none of its own for an answer, whose read starts from the token: `bearer_token_hash`)."""

from __future__ import annotations

from typing import TypeVar

from flask import g, request

from .. import accounts
from ..errors import Unauthorized
from ..request_db import direct

T = TypeVar("T")


def bearer_token() -> str:
    """The token of `Authorization: Bearer <token>`; Unauthorized when there is none."""
    authorization = request.headers.get("Authorization", "")
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise Unauthorized("send an API token as 'Authorization: Bearer <token>'")
    return token


def current_caller() -> accounts.Caller:
    """The caller, with their clock and whether team pacing applies (see `accounts.Caller`)."""
    caller: accounts.Caller | None = g.get("api_caller")
    if caller is None:
        caller = g.api_caller = _valid(accounts.caller_for_token(direct(), bearer_token()))
        g.api_user_id = caller.user_id
    return caller


def current_user_id() -> int:
    """The id of the user whose token came with the request; Unauthorized otherwise."""
    user_id: int | None = g.get("api_user_id")
    if user_id is None:
        user_id = g.api_user_id = _valid(accounts.user_id_for_token(direct(), bearer_token()))
    return user_id


def bearer_token_hash() -> accounts.TokenHash:
    """The token's hash, for a handler whose own read finds its owner (`study.prepare_answer`)."""
    return _valid(accounts.lookup_hash(bearer_token()))


def _valid(found: T | None) -> T:
    if found is None:
        raise accounts.InvalidToken()
    return found
