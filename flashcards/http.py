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
from .db import make_engine, transaction, writer
from .kept_connections import KeptConnections
from .models import User
from .ratelimit import Backend, DatabaseBackend, Limiter, RedisBackend
from .rawsql import DirectConnection
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


def authenticate(email: str, password: str) -> User | None:
    """`accounts.authenticate` in a read-only session of its own. A POST's session would take
    SQLite's write lock for the whole deliberately slow password check, holding up every
    answer; and the rate limit counts the failure in the database, which needs that lock."""
    with Session(engine(), expire_on_commit=False) as reader:
        return accounts.authenticate(reader, email, password)


def signin_limiter() -> Limiter:
    """Failed sign-ins, per email and client address; the API and the web page share it."""
    return _app_limiter(
        "signin", int(current_app.config["SIGNIN_ATTEMPTS_PER_15_MIN"]), SIGNIN_WINDOW_SECONDS
    )


def signin_key(email: str) -> str:
    return Limiter.key("signin", email.strip().lower(), request.remote_addr or "")


def change_password_limited(
    session: Session, user_id: int, current: str, new: str, *, revoke_tokens: bool
) -> int:
    """`accounts.change_password`, with each wrong current password counted against the
    account as a failed sign-in is: a stolen cookie or token must not try passwords without
    limit. RateLimited (429) once the account's allowance is used up."""
    limiter = signin_limiter()
    key = Limiter.key("password", str(user_id))
    limiter.check(key)
    try:
        return accounts.change_password(session, user_id, current, new, revoke_tokens=revoke_tokens)
    except accounts.WrongPassword:
        # Counting it in the database takes SQLite's write lock, which this session holds
        # until it ends. (A success is not counted: the failures expire with the window.)
        session.rollback()
        limiter.failed(key)
        raise


def signup_limiter() -> Limiter:
    """Accounts made, per client address, so that a script cannot mass-produce them; the API
    and the web page share it. Only an account made counts, not a rejected attempt."""
    return _app_limiter(
        "signup", int(current_app.config["SIGNUPS_PER_HOUR"]), SIGNUP_WINDOW_SECONDS
    )


def signup_key() -> str:
    return Limiter.key("signup", request.remote_addr or "")


def _app_limiter(name: str, limit: int, window: int) -> Limiter:
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
        limiter = current_app.extensions[key] = Limiter(backend, limit=limit, window=window)
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
