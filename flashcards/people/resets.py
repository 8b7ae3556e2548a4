"""One-time password reset links. Plain Python over a session; no Flask.

A link is `<base>/reset#<token>`: the token is random (`secrets`), only its SHA-256 is
stored, and it is in the fragment, which browsers never send, so no access log or Referer
holds it (as for invitation links). A link works once, for `LIFETIME`, and only while the
password is the one it was made under: a new password set by any path (settings, the CLI,
another link) kills every link made before, as the row's `password_stamp` no longer matches.
Using one sets the new password as `accounts.set_password` does: every browser session
ends, and the API tokens too when asked.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import datetime, timedelta

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from ..errors import NotFound, NotPermitted
from ..storage.models import PasswordReset, User
from ..teams.roles import OWNER, membership
from . import accounts
from .token_hashes import token_hash

LIFETIME = timedelta(hours=1)
TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{20,100}$")  # what token_urlsafe(32) makes
PATH = "/reset"


class ResetLinkNotUsable(NotFound):
    """A reset link that is unknown, used, expired, or made before the password changed."""

    def __init__(self) -> None:
        super().__init__("this password reset link is unknown, used or expired", field="token")


class AdminResetByOwner(NotPermitted):
    """A team owner asking for a reset link for an administrator of the instance: their
    account is not a team's to hand over."""

    def __init__(self) -> None:
        super().__init__("a team owner cannot make a reset link for an administrator")


def password_stamp(password_hash: str) -> str:
    return hashlib.sha256(password_hash.encode()).hexdigest()


def link(base_url: str, token: str) -> str:
    """The link to hand out: `base_url` is where people open the service."""
    return f"{base_url.rstrip('/')}{PATH}#{token}"


def token_from(pasted: str) -> str:
    """The token of a pasted link (`…/reset#token`) or of a bare token."""
    return pasted.strip().rpartition("#")[2].strip()


def issue(session: Session, user_id: int, *, now: datetime) -> str:
    """A new reset link's token for the user (shown or mailed once; only its hash is kept).
    Links past their hour, anyone's, are dropped here, so the table keeps only live ones."""
    user = session.get(User, user_id)
    if user is None:
        raise NotFound("no such user")
    session.execute(delete(PasswordReset).where(PasswordReset.expires_at <= now))
    token = secrets.token_urlsafe(32)
    session.add(
        PasswordReset(
            id_hash=token_hash(token),
            user_id=user.id,
            password_stamp=password_stamp(user.password_hash),
            created_at=now,
            expires_at=now + LIFETIME,
        )
    )
    session.flush()
    return token


def issue_for_member(
    session: Session, team_id: int, owner_id: int, member_id: int, *, now: datetime
) -> tuple[User, str]:
    """A reset link for a member of a team `owner_id` owns, with the member it is for.

    NotFound unless `owner_id` owns the team and `member_id` is in it: someone else (a
    manager included) learns nothing of the team or the person. An administrator's account
    is refused (AdminResetByOwner)."""
    try:
        membership(session, team_id, owner_id, OWNER)
        membership(session, team_id, member_id)
    except NotPermitted:
        raise NotFound(f"no member {member_id} in team {team_id}") from None
    member = session.get(User, member_id)
    if member is None:
        raise NotFound(f"no member {member_id} in team {team_id}")
    if member.is_admin and member.id != owner_id:
        raise AdminResetByOwner()
    return member, issue(session, member.id, now=now)


def _live(session: Session, token: str, now: datetime) -> tuple[PasswordReset, User]:
    if not TOKEN_RE.match(token):
        raise ResetLinkNotUsable()
    found = session.execute(
        select(PasswordReset, User)
        .join(User, User.id == PasswordReset.user_id)
        .where(PasswordReset.id_hash == token_hash(token))
    ).first()
    if found is None:
        raise ResetLinkNotUsable()
    reset, user = found
    if reset.expires_at <= now or reset.password_stamp != password_stamp(user.password_hash):
        raise ResetLinkNotUsable()
    return reset, user


def user_for(session: Session, token: str, *, now: datetime) -> User:
    """The person a live link is for; ResetLinkNotUsable otherwise. Only reads."""
    return _live(session, token, now)[1]


def use(
    session: Session, token: str, new_password: str, *, now: datetime, revoke_tokens: bool
) -> tuple[User, int]:
    """Set the password through a live link, which dies with every other link of the person
    (their stamps no longer match; their rows go too). Every browser session ends, and the
    API tokens with `revoke_tokens`. Returns the person and how many tokens were revoked.
    ResetLinkNotUsable, SamePassword or InvalidInput (the password's length) otherwise; the
    caller commits, and nothing is written when one of these is raised and it rolls back."""
    reset, user = _live(session, token, now)
    # The row claimed by deleting it: of two requests using one link at once, the second
    # deletes nothing (it waited for the first's lock, on either database) and is refused.
    claimed = session.execute(delete(PasswordReset).where(PasswordReset.id_hash == reset.id_hash))
    if not getattr(claimed, "rowcount", 0):
        raise ResetLinkNotUsable()
    revoked = accounts.set_password(session, user.id, new_password, revoke_tokens=revoke_tokens)
    session.execute(delete(PasswordReset).where(PasswordReset.user_id == user.id))
    session.flush()
    return user, revoked
