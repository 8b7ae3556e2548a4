"""Flask glue shared by the JSON API and the HTML views: the request's database session."""

from __future__ import annotations

import json
import weakref
from datetime import datetime
from typing import Any, cast

from flask import Flask, Request, current_app, g, request
from flask.ctx import AppContext
from flask.globals import app_ctx
from flask.json.provider import DefaultJSONProvider
from sqlalchemy import Engine, event
from sqlalchemy.orm import Session
from werkzeug.datastructures import MultiDict
from werkzeug.exceptions import BadRequest

from . import accounts
from .errors import InvalidInput, Unauthorized
from .kept_connections import KeptConnections
from .models import User
from .ratelimit import Backend, DatabaseBackend, Limiter, RedisBackend
from .rawsql import DirectConnection
from .storage.engine import make_engine, transaction, writer
from .teams import assignments

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_COMPACT = {"separators": (",", ":")}


class JSONProvider(DefaultJSONProvider):
    """Flask's JSON responses, from an encoder built once: `json.dumps` given options (as
    Flask gives it) builds a new encoder on every call, a share of the API's busiest requests."""

    def __init__(self, app: Flask) -> None:
        super().__init__(app)
        self._compact = json.JSONEncoder(
            default=self.default,
            ensure_ascii=self.ensure_ascii,
            sort_keys=self.sort_keys,
            separators=_COMPACT["separators"],
        )

    def dumps(self, obj: Any, **kwargs: Any) -> str:
        if kwargs == _COMPACT:
            return self._compact.encode(obj)
        return super().dumps(obj, **kwargs)


def init_app(app: Flask) -> None:
    app.json = JSONProvider(app)
    engine = make_engine(
        app.config["DATABASE_URL"], sqlite_synchronous=app.config["SQLITE_SYNCHRONOUS"]
    )
    app.extensions["flashcards.engine"] = engine
    app.extensions["flashcards.writer"] = writer(engine)
    kept = app.extensions["flashcards.direct"] = KeptConnections(engine)
    # Kept connections are checked out of the pool: close them when the pool goes, or the app.
    event.listen(engine, "engine_disposed", lambda _engine: kept.close_all())
    weakref.finalize(app, kept.close_all)
    app.teardown_appcontext(_close_session)
    app.before_request(_refuse_nul_in_query)


def _refuse_nul_in_query() -> None:
    req = current_request()
    if req.query_string:  # most requests have none: then no arguments to parse
        _refuse_nul(req.args)


def refuse_nul_in_form() -> None:
    """The web's forms, checked once the upload limit is set (reading the form reads the body)."""
    if request.method in WRITE_METHODS:
        _refuse_nul(request.form)


def _refuse_nul(values: MultiDict[str, str]) -> None:
    """A NUL character in a query or form value is a 400: no text column takes it
    (PostgreSQL refuses it), and a lookup with it would otherwise fail as a 500."""
    for name, value in values.items(multi=True):
        if "\x00" in name or "\x00" in value:
            raise BadRequest("a query or form value has a NUL character, which is not text")


def engine() -> Engine:
    e: Engine = current_app.extensions["flashcards.engine"]
    return e


def writing_engine() -> Engine:
    """The engine whose transactions take SQLite's write lock at BEGIN."""
    e: Engine = current_app.extensions["flashcards.writer"]
    return e


def db() -> Session:
    """The request's session, opened on first use; the view commits, teardown closes."""
    session: Session | None = g.get("_db_session")
    if session is None:
        bind = writing_engine() if request.method in WRITE_METHODS else engine()
        session = Session(bind, expire_on_commit=False)
        g._db_session = session
    return session


def app_context() -> AppContext:
    """The app context itself, for `g` and the app without their proxies.

    Each use of a `g`, `current_app` or `request` proxy first fails an attribute lookup,
    whose error message CPython formats, then looks the object up, and the hot paths use
    them a dozen times a request. Hooks and hot paths take the objects once with these
    functions; the rest of the code uses the proxies.
    """
    return cast(AppContext, cast(Any, app_ctx)._get_current_object())


def current_request() -> Request:
    """The request itself (see `app_context`)."""
    return cast(Request, cast(Any, request)._get_current_object())


def direct() -> DirectConnection:
    """The thread's DBAPI connection for the hot paths (see `rawsql`), kept between requests.

    Outside its `write()` blocks it holds no transaction, so it can sit beside `db()`.
    """
    ctx = app_context()
    connection: DirectConnection | None = ctx.g.get("_db_direct")
    if connection is None:
        kept: KeptConnections = ctx.app.extensions["flashcards.direct"]
        connection = ctx.g._db_direct = kept.acquire()
    return connection


def _close_session(_exc: BaseException | None) -> None:
    ctx = app_context()
    session: Session | None = ctx.g.pop("_db_session", None)
    if session is not None:
        session.close()
    connection: DirectConnection | None = ctx.g.pop("_db_direct", None)
    if connection is not None:
        ctx.app.extensions["flashcards.direct"].release(connection)


SIGNIN_WINDOW_SECONDS = 15 * 60
SIGNUP_WINDOW_SECONDS = 60 * 60
TOKEN_WINDOW_SECONDS = 60 * 60


def authenticate(email: str, password: str) -> User | None:
    """`accounts.authenticate` in a read-only session of its own. A POST's session would take
    SQLite's write lock for the whole deliberately slow password check, holding up every
    answer; and the rate limit counts the attempt in the database, which needs that lock."""
    with Session(engine(), expire_on_commit=False) as reader:
        return accounts.authenticate(reader, email, password)


def signin_limiter() -> Limiter:
    """Failed sign-ins, per email and client address; the API and the web page share it."""
    return _app_limiter(
        "signin", int(current_app.config["SIGNIN_ATTEMPTS_PER_15_MIN"]), SIGNIN_WINDOW_SECONDS
    )


def signin_key(email: str) -> str:
    # The email as accounts look it up, so that lookalike spellings of one address (case,
    # compatibility forms) share its allowance; one that can be no address keeps its own.
    try:
        address = accounts.normalise_email(email)
    except InvalidInput:
        address = email
    return Limiter.key("signin", address, request.remote_addr or "")


def signed_in(email: str, password: str) -> User:
    """The user with this email and password, the attempt counted against the email and
    client address before the slow password check: however many arrive at once, no more than
    the allowance are checked. A success forgives the key's failures. Unauthorized (401) for
    a wrong email or password, RateLimited (429) with no place left, even for the right one."""
    limiter = signin_limiter()
    key = signin_key(email)
    limiter.reserve(key)
    user = authenticate(email, password)
    if user is None:
        raise Unauthorized("wrong email or password")
    limiter.reset(key)
    return user


def change_password_limited(
    session: Session, user_id: int, current: str, new: str, *, revoke_tokens: bool
) -> int:
    """`accounts.change_password`, with each wrong current password counted against the
    account as a failed sign-in is: a stolen cookie or token must not try passwords without
    limit. RateLimited (429) once the account's allowance is used up.

    The place is reserved before the current password is checked, which happens in a
    read-only session (see `authenticate`); a right one gives its place back before the
    request's own session writes anything (on SQLite that session holds the write lock the
    count needs until it ends)."""
    limiter = signin_limiter()
    key = Limiter.key("password", str(user_id))
    # Ends the read that found the signed-in person (a web request's): on SQLite it holds the
    # write lock, which counting the attempt in the database needs.
    session.commit()
    limiter.reserve(key)
    try:
        with Session(engine(), expire_on_commit=False) as reader:
            accounts.verify_current_password(reader, user_id, current)
    except accounts.WrongPassword:
        raise  # counted
    except BaseException:
        limiter.refund(key)
        raise
    limiter.refund(key)  # the failures before it expire with their window
    return accounts.set_password(
        session, user_id, new, revoke_tokens=revoke_tokens, current_password=current
    )


def signup_limiter() -> Limiter:
    """Sign-up attempts per client address, so that a script can neither mass-produce
    accounts nor ask without limit which emails have one: an account made and an email found
    taken both count; only a form refused for its own values (nothing looked up) does not.
    The API and the web page share it."""
    return _app_limiter(
        "signup", int(current_app.config["SIGNUPS_PER_HOUR"]), SIGNUP_WINDOW_SECONDS
    )


def signup_key() -> str:
    return Limiter.key("signup", request.remote_addr or "")


def token_limiter() -> Limiter:
    """API tokens made per account (the API's sign-in and the tokens page): a stolen
    password or cookie must not mint tokens without limit."""
    return _app_limiter(
        "token",
        int(current_app.config["TOKENS_PER_HOUR"]),
        TOKEN_WINDOW_SECONDS,
        detail="too many API tokens were made for this account; try again later",
    )


def token_key(user_id: int) -> str:
    return Limiter.key("token", str(user_id))


def _app_limiter(
    name: str, limit: int, window: int, detail: str = "too many failed attempts; try again later"
) -> Limiter:
    # Made on first use; counted in Redis when configured, else in the database: either way
    # shared by every worker and instance.
    key = f"flashcards.{name}_limiter"
    limiter: Limiter | None = current_app.extensions.get(key)
    if limiter is None:
        redis_url = current_app.config.get("REDIS_URL")
        backend: Backend = (
            RedisBackend.from_url(redis_url)
            if redis_url
            else DatabaseBackend(engine(), writing_engine())
        )
        limiter = current_app.extensions[key] = Limiter(
            backend, limit=limit, window=window, detail=detail
        )
    # A test (or an operator's shell) may change the allowance after the first use.
    limiter.limit = limit
    return limiter


def refresh_pacing(user_id: int, now: datetime) -> None:
    """Bring team pacing (the paced new-card allowance) up to date before showing the queue.

    It changes at most once a study day, so the common case writes nothing, and people in no
    team cost one read on the direct connection. A read-only request must not upgrade its
    transaction to a write on SQLite (a stale snapshot fails at once instead of waiting), so
    a change is written in a write transaction of its own.
    """
    assigned = assignments.assigned(direct(), user_id)
    if not assigned:
        return
    session = db()
    if not assignments.refresh_pacing(session, user_id, now=now, assigned_decks=assigned):
        return
    if request.method in WRITE_METHODS:
        return  # flushed into the request's own write transaction
    session.rollback()
    with transaction(engine()) as writing:
        assignments.refresh_pacing(writing, user_id, now=now)
