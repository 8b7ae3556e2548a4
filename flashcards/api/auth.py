"""Bearer-token authentication for the API: one indexed query per request, cached on `g`."""

from __future__ import annotations

from flask import g, request

from .. import accounts
from ..errors import Unauthorized
from ..http import direct


def bearer_token() -> str:
    """The token of `Authorization: Bearer <token>`; Unauthorized when there is none."""
    scheme, _, token = request.headers.get("Authorization", "").strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise Unauthorized("send an API token as 'Authorization: Bearer <token>'")
    return token


def current_user_id() -> int:
    """The id of the user whose token came with the request; Unauthorized otherwise."""
    cached: int | None = g.get("_api_user_id")
    if cached is not None:
        return cached
    user_id = accounts.user_id_for_token(direct(), bearer_token())
    if user_id is None:
        raise Unauthorized("the API token is not valid or has been revoked")
    g._api_user_id = user_id
    return user_id
