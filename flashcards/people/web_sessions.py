"""Browser sessions: a random id in the cookie, only its hash stored, renewed at most daily.
Plain Python over a session; no Flask."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from ..storage.models import User, WebSession
from .token_hashes import token_hash

# A session in use is renewed (its last use stored) at most this often: one write a day.
RENEW_SESSION_AFTER = timedelta(days=1)


@dataclass(frozen=True)
class SignedIn:
    user: User
    renew: bool  # last renewed more than RENEW_SESSION_AFTER ago: `renew` it


def start(
    session: Session,
    user_id: int,
    *,
    now: datetime,
    lifetime: timedelta,
    replacing: str | None = None,
) -> str:
    """Open a browser session for the user: the random id for the cookie.

    `replacing`: the id this browser held until now, which ends (another person signing in
    on a shared computer must not leave the first one's session usable). Sessions unused for
    `lifetime` (the cookie's own limit), anyone's, are dropped here, so the table keeps only
    sessions that can still be used.
    """
    session.execute(delete(WebSession).where(WebSession.seen_at < now - lifetime))
    if replacing is not None:
        end(session, replacing)
    session_id = secrets.token_urlsafe(32)
    session.add(
        WebSession(id_hash=token_hash(session_id), user_id=user_id, created_at=now, seen_at=now)
    )
    session.flush()
    return session_id


def user_of(
    session: Session, user_id: int, session_id: str, *, now: datetime, lifetime: timedelta
) -> SignedIn | None:
    """The user of a browser session still open, or None (signed out, unused for `lifetime`,
    or the account deleted)."""
    row = session.execute(
        select(User, WebSession.seen_at)
        .join(WebSession, WebSession.user_id == User.id)
        .where(
            User.id == user_id,
            WebSession.id_hash == token_hash(session_id),
            WebSession.seen_at >= now - lifetime,
        )
    ).first()
    if row is None:
        return None
    return SignedIn(row.User, row.seen_at < now - RENEW_SESSION_AFTER)


def renew(session: Session, session_id: str, *, now: datetime) -> None:
    session.execute(
        update(WebSession).where(WebSession.id_hash == token_hash(session_id)).values(seen_at=now)
    )


def end(session: Session, session_id: str) -> None:
    session.execute(delete(WebSession).where(WebSession.id_hash == token_hash(session_id)))


def count_others(
    session: Session, user_id: int, session_id: str, *, now: datetime, lifetime: timedelta
) -> int:
    """How many other browsers the user is signed in on."""
    return int(
        session.scalar(
            select(func.count())
            .select_from(WebSession)
            .where(
                WebSession.user_id == user_id,
                WebSession.id_hash != token_hash(session_id),
                WebSession.seen_at >= now - lifetime,
            )
        )
        or 0
    )


def end_others(session: Session, user_id: int, session_id: str) -> None:
    """Sign the user out of every browser but this one (a phone lost, a shared computer)."""
    session.execute(
        delete(WebSession).where(
            WebSession.user_id == user_id, WebSession.id_hash != token_hash(session_id)
        )
    )


def end_all(session: Session, user_id: int) -> None:
    # A new password ends every browser session, a stolen cookie's included; the web view
    # that changed it opens a new one for its own browser.
    session.execute(delete(WebSession).where(WebSession.user_id == user_id))
