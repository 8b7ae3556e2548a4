"""Accounts: users, password hashes and API tokens (browser sessions are in `web_sessions`).
Plain Python over a session; no Flask."""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from werkzeug.security import check_password_hash, generate_password_hash

from ..errors import FlashcardsError, InvalidInput, NotAuthenticated, NotFound
from ..hot_sql import tokens
from ..hot_sql.rawsql import Executor, executor
from ..srs.days import Clock
from ..srs.settings import scheduler_defaults, validate_settings
from ..storage.models import AnkiDevice, ApiToken, SchedulerSettings, User
from . import web_sessions
from .names import fold, hidden_character
from .token_hashes import token_hash

MIN_PASSWORD_LENGTH = 8
# scrypt's cost does not grow with the password, but nobody needs a megabyte-long one.
MAX_PASSWORD_LENGTH = 1024
MAX_EMAIL_LENGTH = 320
# Deliberately loose: the only real check of an address is mail reaching it.
EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s.]+$")
# Memory-hard: 2**15 * 8 * 128 bytes = 32 MiB per hash (werkzeug's default scrypt setting).
PASSWORD_METHOD = "scrypt:32768:8:1"


class WrongPassword(FlashcardsError):
    """A wrong current password given to change a setting that needs it: the caller, though
    signed in, failed to prove who they are."""


class SamePassword(InvalidInput):
    """A new password equal to the one it replaces: after a leak, "changing" it to itself
    would leave the leaked one working."""

    def __init__(self) -> None:
        super().__init__("new_password must differ from the current password", field="new_password")


class EmailTaken(FlashcardsError):
    def __init__(self) -> None:
        super().__init__(
            "this email cannot be used for a new account; if it is yours, sign in",
            field="email",
        )


def hash_password(password: str) -> str:
    return generate_password_hash(password, method=PASSWORD_METHOD)


def verify_password(password_hash: str, password: str) -> bool:
    return check_password_hash(password_hash, password)


@lru_cache(maxsize=1)
def _dummy_hash() -> str:
    return hash_password(secrets.token_urlsafe(16))


def normalise_email(email: object) -> str:
    """The one spelling an address is stored and looked up by: NFKC with case folded, so
    that fullwidth or differently cased forms are the same address; one with an invisible
    or direction-changing character (a lookalike of another) is refused."""
    if not isinstance(email, str):
        raise InvalidInput("email must be a string", field="email")
    if hidden_character(email) is not None:
        raise InvalidInput(
            "email may not contain invisible or text-direction characters", field="email"
        )
    address = fold(email.strip()).strip()
    if len(address) > MAX_EMAIL_LENGTH or not EMAIL_RE.match(address):
        raise InvalidInput("email must be an address like name@example.com", field="email")
    return address


def check_password_strength(password: object, *, field: str = "password") -> str:
    if not isinstance(password, str):
        raise InvalidInput(f"{field} must be a string", field=field)
    if len(password) < MIN_PASSWORD_LENGTH:
        raise InvalidInput(
            f"{field} must have at least {MIN_PASSWORD_LENGTH} characters", field=field
        )
    if len(password) > MAX_PASSWORD_LENGTH:
        raise InvalidInput(
            f"{field} may have at most {MAX_PASSWORD_LENGTH} characters", field=field
        )
    return password


def create_user(
    session: Session,
    email: str,
    password: str,
    *,
    now: datetime,
    display_name: str = "",
    locale: str = "en",
    timezone: str = "UTC",
    is_admin: bool = False,
) -> User:
    """Add a user and their default scheduler settings; EmailTaken if the email is taken.
    Every value is checked before the email is looked up, and the password hashed either
    way: a refusal for a value tells nothing of the email, and a taken one takes as
    long as an account made."""
    address = normalise_email(email)
    check_password_strength(password)
    profile = validate_settings(
        {"display_name": display_name, "locale": locale, "timezone": timezone},
        allowed={"display_name", "locale", "timezone"},
    )
    # Before the first statement: on SQLite a write session holds the write lock from it on.
    password_hash = hash_password(password)
    if session.scalar(select(User.id).where(User.email == address)) is not None:
        raise EmailTaken()
    user = User(
        email=address,
        password_hash=password_hash,
        display_name=profile["display_name"],
        locale=profile["locale"],
        timezone=profile["timezone"],
        is_admin=is_admin,
        created_at=now,
    )
    session.add(user)
    try:
        session.flush()
    except IntegrityError:
        # Another transaction took the address between our check and our insert.
        raise EmailTaken() from None
    session.add(SchedulerSettings(user_id=user.id, **scheduler_defaults()))
    session.flush()
    return user


def authenticate(session: Session, email: str, password: str) -> User | None:
    """The user with this email and password, else None; as slow for unknown emails."""
    try:
        address = normalise_email(email)
    except InvalidInput:
        address = None
    user = None
    if address is not None:
        user = session.scalar(select(User).where(User.email == address))
    if user is None:
        # Spend the same hashing time, so response times do not reveal which emails exist.
        verify_password(_dummy_hash(), password)
        return None
    return user if verify_password(user.password_hash, password) else None


def verify_current_password(session: Session, user_id: int, current_password: object) -> None:
    """WrongPassword unless `current_password` is the user's password."""
    user = session.get(User, user_id)
    if user is None:
        raise NotFound("no such user")
    if not isinstance(current_password, str) or not verify_password(
        user.password_hash, current_password
    ):
        raise WrongPassword("the current password is not correct", field="current_password")


def change_password(
    session: Session,
    user_id: int,
    current_password: str,
    new_password: str,
    *,
    revoke_tokens: bool = False,
) -> int:
    """Change the password, ending every web session; with `revoke_tokens`, the user's API
    tokens go too (after a leak, a token made with the old password would outlive it).
    Returns how many tokens were revoked."""
    verify_current_password(session, user_id, current_password)
    return set_password(
        session,
        user_id,
        new_password,
        revoke_tokens=revoke_tokens,
        current_password=current_password,
    )


def set_password(
    session: Session,
    user_id: int,
    new_password: str,
    *,
    revoke_tokens: bool = False,
    current_password: str | None = None,
) -> int:
    """Replace the password, as `change_password` does, without asking for the current one
    (an administrator's reset, or a caller that has verified it: `current_password`).
    SamePassword when the new one is the one it replaces."""
    user = session.get(User, user_id)
    if user is None:
        raise NotFound("no such user")
    field = "password" if current_password is None else "new_password"
    check_password_strength(new_password, field=field)
    same = (
        verify_password(user.password_hash, new_password)
        if current_password is None
        else new_password == current_password
    )
    if same:
        raise SamePassword()
    return _replace_password(session, user, new_password, revoke_tokens)


def _replace_password(session: Session, user: User, new_password: str, revoke_tokens: bool) -> int:
    user.password_hash = hash_password(new_password)
    web_sessions.end_all(session, user.id)
    revoked = 0
    if revoke_tokens:
        result = session.execute(delete(ApiToken).where(ApiToken.user_id == user.id))
        revoked = int(getattr(result, "rowcount", 0))
        # Anki devices hold keys made with the old password too: they must sign in again.
        session.execute(delete(AnkiDevice).where(AnkiDevice.user_id == user.id))
    session.flush()
    return revoked


def issue_token(session: Session, user_id: int, *, now: datetime, name: str = "") -> str:
    """A new bearer token for the user; only its SHA-256 is stored, so show it once."""
    if not isinstance(name, str) or len(name) > 100:
        raise InvalidInput("name must be a string of at most 100 characters", field="name")
    token = secrets.token_urlsafe(32)
    session.add(ApiToken(user_id=user_id, token_hash=token_hash(token), name=name, created_at=now))
    session.flush()
    return token


# token_urlsafe(32) gives 43 characters; anything far longer is not one of ours.
_MAX_TOKEN_LENGTH = 256


class InvalidToken(NotAuthenticated):
    def __init__(self) -> None:
        super().__init__("the API token is not valid or has been revoked")


def _lookup_hash(token: str) -> str | None:
    """The hash to look a presented token up by; None when it cannot be one of ours."""
    if not token or len(token) > _MAX_TOKEN_LENGTH:
        return None
    return token_hash(token)


@dataclass(frozen=True)
class TokenOwner:
    """Whoever owns the API token stored with this hash: a caller the edge names by their
    token, for a domain read that finds them along with what it reads anyway (an answer:
    `srs.study.answer`, which raises InvalidToken when nobody does)."""

    token_hash: str


def token_owner(token: str) -> TokenOwner | None:
    """The presented token's owner, to be found by a later read; None when it cannot be one
    of ours."""
    hashed = _lookup_hash(token)
    return None if hashed is None else TokenOwner(hashed)


def user_id_for_token(db: Session | Executor, token: str) -> int | None:
    hashed = _lookup_hash(token)
    if hashed is None:
        return None
    return tokens.user_id_for_hash(executor(db), hashed)


def user_clock(session: Session, user_id: int) -> Clock:
    """What the user's study day depends on: their timezone and day-start hour."""
    row = session.execute(
        select(User.timezone, User.day_start_hour).where(User.id == user_id)
    ).one()
    return Clock(row.timezone, row.day_start_hour)


@dataclass(frozen=True)
class Caller:
    """The owner of a token, with what showing them their queue needs first."""

    user_id: int
    clock: Clock
    paced: bool  # a team assigned them decks: their new-card pace follows its due dates


def caller_for_token(db: Session | Executor, token: str) -> Caller | None:
    hashed = _lookup_hash(token)
    if hashed is None:
        return None
    row = tokens.caller_for_hash(executor(db), hashed)
    if row is None:
        return None
    return Caller(int(row.user_id), Clock(row.timezone, row.day_start_hour), bool(row.paced))


def revoke_token(session: Session, token: str) -> bool:
    """Delete the token; True if it existed."""
    result = session.execute(delete(ApiToken).where(ApiToken.token_hash == token_hash(token)))
    return bool(getattr(result, "rowcount", 0))


def user_by_email(session: Session, email: str) -> User:
    address = normalise_email(email)
    user = session.scalar(select(User).where(User.email == address))
    if user is None:
        raise NotFound(f"no user with email {address}", field="email")
    return user
