"""The limits that guard accounts (failed sign-ins, sign-ups, API tokens made) and the
checks they guard. No Flask: the web, the API and the CLI supply the configuration and the
client's address.

Each check only reads: the slow password check runs before any write transaction starts.
A reservation is the limiter's own short unit of work (see `ratelimit`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.orm import Session

from ..errors import InvalidInput, WrongCredentials
from ..storage.engine import writer
from ..storage.models import User
from . import accounts
from .ratelimit import Backend, DatabaseBackend, Limiter, RedisBackend

SIGNIN_WINDOW_SECONDS = 15 * 60
SIGNUP_WINDOW_SECONDS = 60 * 60
TOKEN_WINDOW_SECONDS = 60 * 60
FIT_WINDOW_SECONDS = 60 * 60
TOO_MANY_FAILURES = "too many failed attempts; try again later"
TOO_MANY_TOKENS = "too many API tokens were made for this account; try again later"
TOO_MANY_FITS = "too many FSRS fits were asked for this account; try again later"
RESET_WINDOW_SECONDS = 60 * 60
TOO_MANY_RESETS = "too many password reset links were asked for; try again later"
TOO_MANY_INVITE_MAILS = "too many invitations were mailed from this account; try again later"


def backend(engine: Engine, redis_url: str | None) -> Backend:
    """Counted in Redis when configured, else in the database: either way shared by every
    worker and instance."""
    if redis_url:
        return RedisBackend.from_url(redis_url)
    return DatabaseBackend(engine, writer(engine))


# Each limiter by name: the setting that holds its allowance, its window in seconds and
# what a refusal says. "signin": failed sign-ins per email and client address (the API and
# the web page share it; a wrong current password counts per account in it too). "signup":
# sign-up attempts per client address, so that a script can neither mass-produce accounts
# nor ask without limit which emails have one (an account made and an email found taken
# both count; only a form refused for its own values does not). "token": API tokens made
# per account, so that a stolen password or cookie cannot mint them without limit. "fit":
# FSRS parameter fits asked for per account: each costs up to a second of a worker's CPU.
LIMITS = {
    "signin": ("SIGNIN_ATTEMPTS_PER_15_MIN", SIGNIN_WINDOW_SECONDS, TOO_MANY_FAILURES),
    "signup": ("SIGNUPS_PER_HOUR", SIGNUP_WINDOW_SECONDS, TOO_MANY_FAILURES),
    "token": ("TOKENS_PER_HOUR", TOKEN_WINDOW_SECONDS, TOO_MANY_TOKENS),
    "fit": ("FITS_PER_HOUR", FIT_WINDOW_SECONDS, TOO_MANY_FITS),
    # Password reset links asked for, per email address (whether or not it has an account,
    # so that a refusal tells nothing) and per client address: nobody's mailbox is flooded,
    # and no client asks about address after address. Invitation mails, per lead account,
    # one place per address mailed.
    "reset": ("RESET_MAILS_PER_HOUR", RESET_WINDOW_SECONDS, TOO_MANY_RESETS),
    "reset_client": ("RESET_REQUESTS_PER_HOUR", RESET_WINDOW_SECONDS, TOO_MANY_RESETS),
    "invite_mail": ("INVITE_MAILS_PER_HOUR", RESET_WINDOW_SECONDS, TOO_MANY_INVITE_MAILS),
}


def allowance(name: str, config: Mapping[str, Any]) -> int:
    """The attempts limiter `name` allows per window, as `config` (the app's settings) says."""
    return int(config[LIMITS[name][0]])


def limiters(backend: Backend, config: Mapping[str, Any]) -> dict[str, Limiter]:
    """Every limiter of `LIMITS` by name, counting in `backend`."""
    return {
        name: Limiter(backend, limit=allowance(name, config), window=window, detail=detail)
        for name, (_setting, window, detail) in LIMITS.items()
    }


def signin_key(email: str, client_address: str) -> str:
    # The email as accounts look it up, so that lookalike spellings of one address (case,
    # compatibility forms) share its allowance; one that can be no address keeps its own.
    try:
        address = accounts.normalise_email(email)
    except InvalidInput:
        address = email
    return Limiter.key("signin", address, client_address)


def signup_key(client_address: str) -> str:
    return Limiter.key("signup", client_address)


def token_key(user_id: int) -> str:
    return Limiter.key("token", str(user_id))


def reset_key(address: str) -> str:
    """`address` as `accounts.normalise_email` gives it."""
    return Limiter.key("reset", address)


def reset_client_key(client_address: str) -> str:
    return Limiter.key("reset-client", client_address)


def invite_mail_key(user_id: int) -> str:
    return Limiter.key("invite-mail", str(user_id))


def password_key(user_id: int) -> str:
    return Limiter.key("password", str(user_id))


def signed_in(
    reader: Session, limiter: Limiter, email: str, password: str, client_address: str
) -> User:
    """The user with this email and password, read in `reader`, the attempt counted against
    the email and client address before the slow password check: however many arrive at
    once, no more than the allowance are checked. A success forgives the key's failures.
    WrongCredentials (401) for a wrong email or password, RateLimited (429) with no place left,
    even for the right one."""
    key = signin_key(email, client_address)
    limiter.reserve(key)
    user = accounts.authenticate(reader, email, password)
    if user is None:
        raise WrongCredentials("wrong email or password")
    limiter.reset(key)
    return user


def verify_current_password(
    reader: Session, limiter: Limiter, user_id: int, current_password: str
) -> None:
    """WrongPassword unless it is the user's password, each wrong one counted against the
    account as a failed sign-in is: a stolen cookie or token must not try passwords without
    limit. RateLimited (429) once the account's allowance is used up. The place is reserved
    before the check; a right password gives it back (the failures before it expire with
    their window)."""
    key = password_key(user_id)
    limiter.reserve(key)
    try:
        accounts.verify_current_password(reader, user_id, current_password)
    except accounts.WrongPassword:
        raise  # counted
    except BaseException:
        limiter.refund(key)
        raise
    limiter.refund(key)
