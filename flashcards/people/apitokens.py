"""Listing and revoking a person's API tokens by id (the tokens page); no Flask.

`accounts` issues tokens and revokes one by its secret value; a page only knows row ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from ..storage.models import ApiToken
from ..storage.schema import MAX_ID


@dataclass(frozen=True)
class TokenInfo:
    id: int
    name: str
    created_at: datetime


def list_tokens(session: Session, user_id: int) -> list[TokenInfo]:
    rows = session.execute(
        select(ApiToken.id, ApiToken.name, ApiToken.created_at)
        .where(ApiToken.user_id == user_id)
        .order_by(ApiToken.created_at.desc(), ApiToken.id.desc())
    )
    return [TokenInfo(r.id, r.name, r.created_at) for r in rows]


def revoke_token_id(session: Session, user_id: int, token_id: int) -> bool:
    """Delete one of the user's own tokens; False if they have no token with that id."""
    if not 0 < token_id <= MAX_ID:
        return False  # no such row; PostgreSQL would refuse the out-of-range number (a 500)
    result = session.execute(
        delete(ApiToken).where(ApiToken.id == token_id, ApiToken.user_id == user_id)
    )
    return bool(getattr(result, "rowcount", 0))
