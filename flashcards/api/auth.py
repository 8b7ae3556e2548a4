"""Bearer-token authentication for the API: the caller is identified here, at the edge, with
one indexed query per request (cached on `g`), before any domain function runs; or, for an
answer, named as the token's owner, whom the answer's own read finds (`token_owner`)."""

from __future__ import annotations

from typing import TypeVar

from flask import g, request

from ..errors import MissingToken
from ..http.request_db import direct
from ..people import accounts

T = TypeVar("T")


def bearer_token() -> str:
    """The token of `Authorization: Bearer <token>`; MissingToken when there is none."""
    authorization = request.headers.get("Authorization", "")
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise MissingToken("send an API token as 'Authorization: Bearer <token>'")
    return token


def current_caller() -> accounts.Caller:
    """The caller, with their clock and whether team pacing applies (see `accounts.Caller`)."""
    caller: accounts.Caller | None = g.get("api_caller")
    if caller is None:
        caller = g.api_caller = _valid(accounts.caller_for_token(direct(), bearer_token()))
        g.api_user_id = caller.user_id
    return caller


def current_user_id() -> int:
    """The id of the user whose token came with the request; NotAuthenticated otherwise."""
    user_id: int | None = g.get("api_user_id")
    if user_id is None:
        user_id = g.api_user_id = _valid(accounts.user_id_for_token(direct(), bearer_token()))
    return user_id


def token_owner() -> int | accounts.TokenOwner:
    """The caller as their token's owner, for a domain read that finds them along with what it
    reads anyway (an answer); their id when this request already knows it. MissingToken or
    InvalidToken when the token cannot be one of ours."""
    user_id: int | None = g.get("api_user_id")
    if user_id is not None:
        return user_id
    return _valid(accounts.token_owner(bearer_token()))


def _valid(found: T | None) -> T:
    if found is None:
        raise accounts.InvalidToken()
    return found
