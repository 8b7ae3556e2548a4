"""The domain's policies as a request applies them: the account limits (`account_limits`)
with the app's configuration and the client's address, and team pacing before a queue."""

from __future__ import annotations

from datetime import datetime

from flask import current_app, request

from ..people import account_limits, accounts
from ..people.ratelimit import Limiter
from ..storage.models import User
from ..teams import pacing
from .request_db import begin_writing, db, direct, engine, write_transaction


def limiter(name: str) -> Limiter:
    """The app's limiter `name` (see `account_limits.LIMITS`); made on first use."""
    made: dict[str, Limiter] | None = current_app.extensions.get("flashcards.limiters")
    config = current_app.config
    if made is None:
        backend = account_limits.backend(engine(), config.get("REDIS_URL"))
        made = current_app.extensions["flashcards.limiters"] = account_limits.limiters(
            backend, config
        )
    found = made[name]
    # A test (or an operator's shell) may change the allowance after the first use.
    found.limit = account_limits.allowance(name, config)
    return found


def signin_limiter() -> Limiter:
    return limiter("signin")


def signup_limiter() -> Limiter:
    return limiter("signup")


def token_limiter() -> Limiter:
    return limiter("token")


def reserve_fit(user_id: int) -> None:
    """Counts an FSRS fit asked for by this account; RateLimited (429) past the allowance."""
    limiter("fit").reserve(Limiter.key("fit", str(user_id)))


def client_address() -> str:
    return request.remote_addr or ""


def signup_key() -> str:
    return account_limits.signup_key(client_address())


def token_key(user_id: int) -> str:
    return account_limits.token_key(user_id)


def signed_in(email: str, password: str) -> User:
    """`account_limits.signed_in`, read in the request's session before it writes anything."""
    return account_limits.signed_in(db(), signin_limiter(), email, password, client_address())


def change_password_limited(user_id: int, current: str, new: str, *, revoke_tokens: bool) -> int:
    """The current password checked as a read (and counted when wrong, see
    `account_limits.verify_current_password`), then the new one written: the request writes
    from here on, and the caller commits. Returns how many tokens were revoked."""
    account_limits.verify_current_password(db(), signin_limiter(), user_id, current)
    return accounts.set_password(
        begin_writing(), user_id, new, revoke_tokens=revoke_tokens, current_password=current
    )


def pace_before_queue(user_id: int, now: datetime) -> None:
    """Team pacing brought up to date before the queue is shown (`keep_pacing_current`):
    people in no team cost one read on the direct connection."""
    assigned = pacing.assigned(direct(), user_id)
    if assigned:
        pacing.keep_pacing_current(
            db(), user_id, now=now, assigned_decks=assigned, write=write_transaction
        )
