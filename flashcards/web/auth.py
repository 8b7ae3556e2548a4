"""Sign up, sign in and sign out; the signed-in person of a request."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from functools import wraps
from typing import ParamSpec, TypeVar
from urllib.parse import urlsplit

from flask import (
    current_app,
    flash,
    g,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask.typing import ResponseReturnValue
from flask_babel import gettext as _
from werkzeug.wrappers import Response

from ..errors import InvalidInput, WrongCredentials
from ..http.request_db import begin_writing, db, write_transaction, writes
from ..http.request_policies import signed_in, signup_key, signup_limiter
from ..people import accounts, web_sessions
from ..people.ratelimit import RateLimited
from ..srs.settings import timezone_names
from ..storage.models import User
from ..storage.schema import utcnow
from . import bp, csrf
from .error_table import message_for

P = ParamSpec("P")
R = TypeVar("R")
USER_KEY = "uid"
SESSION_KEY = "sid"
# An invitation link opened before signing in (`join`): kept through sign-in and sign-up.
PENDING_JOIN_KEY = "join_token"


def current_user() -> User | None:
    if "web_user" not in g:
        user_id = session.get(USER_KEY)
        session_id = session.get(SESSION_KEY)
        user = None
        if isinstance(user_id, int):
            if isinstance(session_id, str):
                now = utcnow()
                signed_in = web_sessions.user_of(
                    db(),
                    user_id,
                    session_id,
                    now=now,
                    lifetime=current_app.permanent_session_lifetime,
                )
                if signed_in is not None:
                    user = signed_in.user
                    if signed_in.renew:
                        _renew(session_id, now)
            if user is None:
                # Signed out elsewhere (or by a new password), expired, or the account is gone.
                session.clear()
                flash(_("You were signed out. Sign in again to continue."))
        g.web_user = user
    found: User | None = g.web_user
    return found


def as_signed_out() -> None:
    """The rest of this request treats the visitor as signed out, without asking the
    database who they are: for the page that says the database is out of reach."""
    g.web_user = None


def _renew(session_id: str, now: datetime) -> None:
    # A write in a request that may only read: a short one of its own, or part of the
    # view's when it writes. The cookie is signed anew too: its signature has its own limit.
    with write_transaction() as database:
        web_sessions.renew(database, session_id, now=now)
    session.modified = True


def browser_session_id() -> str:
    """The id of the signed-in browser's session (in a `login_required` view)."""
    found = session.get(SESSION_KEY)
    assert isinstance(found, str), "use @login_required"
    return found


def login_required(view: Callable[P, R]) -> Callable[P, R | Response]:
    @wraps(view)
    def wrapped(*args: P.args, **kwargs: P.kwargs) -> R | Response:
        if current_user() is None:
            # After sign-in only a page can be returned to, not a form's POST target.
            return redirect(url_for("web.signin", next=current_page()))
        return view(*args, **kwargs)

    return wrapped


def user_id() -> int:
    user = current_user()
    assert user is not None, "use @login_required"
    return user.id


# Browsers drop tabs and line breaks from a URL ("/\t/evil.example" is "//evil.example"),
# a line break cannot be sent in a header at all, and a backslash is a slash to browsers.
UNSAFE_IN_TARGET = re.compile(r"[\x00-\x1f\x7f-\x9f\\]")


def safe_next(target: str | None) -> str:
    """Only a path on this site: `next=//evil.example`, `https://...` or a path with a
    control character goes to the library."""
    fallback = url_for("web.library")
    if (
        not target
        or not target.startswith("/")
        or target.startswith("//")
        or UNSAFE_IN_TARGET.search(target)
    ):
        return fallback
    parts = urlsplit(target)
    if parts.scheme or parts.netloc:
        return fallback
    return target


def current_page() -> str:
    """Where a link back to "this page" should go: its own path, or for a page that answers a
    form, the page the form was on (Referrer-Policy same-origin sends it), which a GET shows
    again. The path of a POST-only route would answer the GET with 405, or match another."""
    if request.method in ("GET", "HEAD"):
        return request.full_path.rstrip("?")
    referrer = urlsplit(request.referrer or "")
    if referrer.netloc != request.host:
        return url_for("web.library")
    return safe_next(referrer.path + (f"?{referrer.query}" if referrer.query else ""))


def too_many_attempts(exc: RateLimited) -> str:
    """What a person is told when a password was tried too often."""
    minutes = max(1, round(exc.retry_after / 60))
    return str(_("Too many failed attempts. Try again in %(minutes)d min.", minutes=minutes))


def start_session(user: User) -> None:
    # A fresh session at sign-in: nothing a visitor's cookie carried survives (no fixation),
    # but an invitation being accepted: it names a team, not a person, and joining asks first.
    previous = session.get(SESSION_KEY)
    pending_join = session.get(PENDING_JOIN_KEY)
    session.clear()
    database = begin_writing()
    session_id = web_sessions.start(
        database,
        user.id,
        now=utcnow(),
        lifetime=current_app.permanent_session_lifetime,
        replacing=previous if isinstance(previous, str) else None,
    )
    database.commit()  # with whatever the caller wrote before (a new password)
    session[USER_KEY] = user.id
    session[SESSION_KEY] = session_id
    if isinstance(pending_join, str):
        session[PENDING_JOIN_KEY] = pending_join
    csrf.new_token()
    g.web_user = user


@bp.route("/signup", methods=["GET", "POST"])
def signup() -> ResponseReturnValue:
    if not current_app.config.get("SIGNUP_OPEN", True):
        return render_template("signup_closed.html"), 403
    from .i18n import locale_code

    errors: dict[str, str] = {}
    email = request.form.get("email", "")
    if request.method == "POST":
        limiter = signup_limiter()
        key = signup_key()
        try:
            # Before anything is looked up: an email found taken counts as an account made
            # does (see `signup_limiter`).
            limiter.reserve(key)
        except RateLimited as exc:
            minutes = max(1, round(exc.retry_after / 60))
            errors["email"] = _(
                "Too many sign-up attempts from your network. Try again in %(minutes)d min.",
                minutes=minutes,
            )
            page = render_template("signup.html", errors=errors, email=email)
            return page, 429, {"Retry-After": str(max(1, int(exc.retry_after)))}
        password = request.form.get("password", "")
        timezone = request.form.get("timezone", "")
        if timezone not in timezone_names():
            # The browser's guess (if any) is not a zone we know, as Chrome's "Etc/Unknown"
            # is not: UTC until they choose in settings.
            timezone = "UTC"
        # Declared after the reservation, which is the limiter's own transaction.
        session_db = begin_writing()
        try:
            user = accounts.create_user(
                session_db,
                email,
                password,
                now=utcnow(),
                display_name=request.form.get("display_name", ""),
                locale=locale_code(),
                timezone=timezone,
            )
        except accounts.EmailTaken as exc:
            errors["email"] = message_for(exc)
        except InvalidInput as exc:
            session_db.rollback()
            limiter.refund(key)  # refused for its own values: nothing was looked up
            if exc.field == "display_name":
                errors["display_name"] = _("Use at most 100 printable characters for your name.")
            elif exc.field != "password":
                errors["email"] = _("Enter an email address like name@example.com.")
            # The domain stops at the first bad value: the form flags the password too.
            try:
                accounts.check_password_strength(password)
            except InvalidInput:
                errors["password"] = _(
                    "Choose a password of %(min)d to %(max)d characters.",
                    min=accounts.MIN_PASSWORD_LENGTH,
                    max=accounts.MAX_PASSWORD_LENGTH,
                )
        if not errors:
            session_db.commit()
            start_session(user)
            if PENDING_JOIN_KEY in session:
                return redirect(url_for("web.join_page"))
            flash(_("Welcome! Pick a deck to start studying."))
            return redirect(url_for("web.library"))
    status = 422 if errors else 200
    return render_template("signup.html", errors=errors, email=email), status


@bp.route("/signin", methods=["GET", "POST"])
def signin() -> ResponseReturnValue:
    target = safe_next(request.values.get("next"))
    error = None
    email = request.form.get("email", "")
    status = 200
    if request.method == "POST":
        password = request.form.get("password", "")
        try:
            user = signed_in(email, password)
        except RateLimited as exc:
            error = too_many_attempts(exc)
            page = render_template("signin.html", error=error, email=email, next=target)
            return page, 429, {"Retry-After": str(max(1, int(exc.retry_after)))}
        except WrongCredentials as exc:
            error = message_for(exc)
            status = 401
        else:
            if PENDING_JOIN_KEY in session and target == url_for("web.library"):
                target = url_for("web.join_page")  # an invitation opened before signing in
            # The answer is made before anything is written: a session is never started for
            # a page that then fails.
            response = redirect(target)
            start_session(user)
            return response
    return render_template("signin.html", error=error, email=email, next=target), status


@bp.post("/signout")
@writes
def signout() -> Response:
    session_id = session.get(SESSION_KEY)
    if isinstance(session_id, str):
        # Server-side too: a copy of the cookie (a shared computer, a stolen one) ends as well.
        database = db()
        web_sessions.end(database, session_id)
        database.commit()
    session.clear()
    flash(_("You are signed out."))
    return redirect(url_for("web.signin"))
