"""Settings (language, timezone, day start, retention, limits), password, language switcher
and API tokens."""

from __future__ import annotations

import re
from typing import Any
from zoneinfo import available_timezones

from babel.dates import get_day_names
from babel.numbers import get_decimal_symbol
from flask import current_app, flash, redirect, render_template, request, url_for
from flask_babel import force_locale, ngettext
from flask_babel import gettext as _
from werkzeug.wrappers import Response

from ..anki_sync import devices as anki_devices
from ..errors import InvalidInput, NotFound
from ..http.request_db import begin_writing, db, writes
from ..http.request_policies import change_password_limited, token_key, token_limiter
from ..people import accounts, apitokens, web_sessions
from ..people.ratelimit import RateLimited
from ..srs.settings import (
    DAY_START_HOURS,
    DESIRED_RETENTIONS,
    MAX_STEP_SECONDS,
    MAX_STEPS,
    MAXIMUM_INTERVALS,
    NEW_PER_DAY,
    REVIEWS_PER_DAY,
    SUPPORTED_LOCALES,
    apply_user_settings,
    steps_from_text,
    steps_text,
    user_settings,
    validate_each,
)
from ..storage.schema import utcnow
from . import bp
from .auth import (
    browser_session_id,
    current_user,
    login_required,
    safe_next,
    start_session,
    too_many_attempts,
    user_id,
)
from .error_table import flash_error
from .fsrs import section as fsrs_section
from .i18n import LANG_COOKIE, locale_code, plain_number, whole_number

ONE_YEAR = 365 * 24 * 3600
# ASCII digits, and few enough for int(): str.isdigit() also takes "²", which int() refuses.
WHOLE_NUMBER = re.compile(r"-?[0-9]{1,12}")
INT_FIELDS = ("day_start_hour", "maximum_interval", "new_per_day", "reviews_per_day")


def field_labels() -> dict[str, str]:
    return {
        "display_name": _("Name"),
        "locale": _("Language"),
        "timezone": _("Time zone"),
        "day_start_hour": _("New day starts at (hour)"),
        "desired_retention": _("Desired retention"),
        "learning_steps": _("Learning steps"),
        "relearning_steps": _("Relearning steps"),
        "maximum_interval": _("Maximum interval (days)"),
        "new_per_day": _("New cards per day"),
        "reviews_per_day": _("Reviews per day"),
        "theme": _("Colours"),
        "load_balancing": _("Load balancing"),
        "easy_days": _("Easy days"),
    }


# What a setting's value must be, by field: the bounds the domain checks (`srs.settings`).
SETTING_RANGES: dict[str, tuple[float, float]] = {
    "day_start_hour": DAY_START_HOURS,
    "desired_retention": DESIRED_RETENTIONS,
    "maximum_interval": MAXIMUM_INTERVALS,
    "new_per_day": NEW_PER_DAY,
    "reviews_per_day": REVIEWS_PER_DAY,
}


def setting_problem(field: str) -> str:
    """What is wrong with a setting's value, saying what it may be where that is a range."""
    label = field_labels().get(field, field)
    if field in SETTING_RANGES:
        low, high = SETTING_RANGES[field]
        if field == "desired_retention":  # a share, as its field takes it ("0,9" in Spanish)
            bounds = plain_number(low), plain_number(high)
        else:
            bounds = whole_number(int(low)), whole_number(int(high))
        return str(
            _(
                "Check “%(field)s”: give a number from %(low)s to %(high)s.",
                field=label, low=bounds[0], high=bounds[1],
            )
        )  # fmt: skip
    if field in ("learning_steps", "relearning_steps"):
        return str(
            _(
                "Check “%(field)s”: give at most %(count)d steps, separated by spaces, such as "
                "1m 10m (a number alone is minutes), each at most %(longest)s.",
                field=label, count=MAX_STEPS, longest=steps_text([MAX_STEP_SECONDS]),
            )
        )  # fmt: skip
    return str(_("Check “%(field)s”: this value is not allowed.", field=label))


def easy_day_labels() -> dict[str, str]:
    return {"normal": _("Normal"), "reduced": _("Reduced"), "minimum": _("Minimum")}


def _parse_balance(form: Any) -> dict[str, object]:
    """The load balancing checkbox and the seven easy-day selects (Monday first); nothing
    from a form without them (an unchecked box is not sent, so the selects tell)."""
    if "easy_days_0" not in form:
        return {}
    return {
        "load_balancing": form.get("load_balancing") == "1",
        "easy_days": [form.get(f"easy_days_{day}", "") for day in range(7)],
    }


def theme_names() -> dict[str, str]:
    return {"system": _("As on this device"), "light": _("Light"), "dark": _("Dark")}


def _parse_form(form: Any) -> dict[str, object]:
    """Form strings to the types validate_settings checks; unreadable ones stay strings.
    A field the form does not send keeps its saved value, as the API's partial update does."""
    values: dict[str, object] = {}
    for name in ("display_name", "locale", "timezone", "theme"):
        if name in form:
            values[name] = form[name].strip()
    for name in INT_FIELDS:
        if name in form:
            raw = form[name].strip()
            values[name] = int(raw) if WHOLE_NUMBER.fullmatch(raw) else raw
    if "desired_retention" in form:
        try:
            values["desired_retention"] = float(form["desired_retention"].replace(",", "."))
        except ValueError:
            values["desired_retention"] = form["desired_retention"]
    for name in ("learning_steps", "relearning_steps"):
        if name in form:
            raw = _decimal_points(form[name]).split()
            steps = steps_from_text(raw)
            values[name] = raw if steps is None else steps
    values.update(_parse_balance(form))
    return values


def _decimal_points(steps: str) -> str:
    """Steps as typed, with "." as the decimal mark: where a comma is the decimal mark, one
    between digits is one (Spanish "1,5 10"); any other comma separates steps, like a space
    ("1m, 10m")."""
    if get_decimal_symbol(locale_code()) == ",":
        steps = re.sub(r"(?<=[0-9]),(?=[0-9])", ".", steps)
    return steps.replace(",", " ")


@bp.route("/settings", methods=["GET", "POST"])
@login_required
def settings() -> str | Response | tuple[str, int]:
    uid = user_id()
    session = db()
    current = user_settings(session, uid)
    form: dict[str, object] = {
        **current,
        "learning_steps": steps_text(current["learning_steps"]),
        "relearning_steps": steps_text(current["relearning_steps"]),
    }
    errors: dict[str, str] = {}
    if request.method == "POST":
        values = _parse_form(request.form)
        form = {**form, **{k: request.form[k] for k in field_labels() if k in request.form}}
        form.update(_parse_balance(request.form))
        # Every field at once: each bad one is flagged beside it, and all typed values stay.
        clean, problems = validate_each(values, allowed=values.keys())
        for field in problems:
            errors[field] = setting_problem(field)
        if not errors:
            session = begin_writing()
            apply_user_settings(session, uid, clean)
            session.commit()
            # Said in the language just chosen: the request's own was picked before the change.
            with force_locale(str(clean.get("locale") or locale_code())):
                flash(_("Settings saved."))
            return redirect(url_for("web.settings"))
    return render_template(
        "settings.html",
        form=form,
        errors=errors,
        labels=field_labels(),
        themes=theme_names(),
        timezones=sorted(available_timezones()),
        other_sessions=web_sessions.count_others(
            session,
            uid,
            browser_session_id(),
            now=utcnow(),
            lifetime=current_app.permanent_session_lifetime,
        ),
        fsrs=fsrs_section(session, uid),
        weekdays=list(get_day_names("wide", locale=locale_code()).values()),
        easy_day_labels=easy_day_labels(),
    ), (422 if errors else 200)


@bp.post("/settings/password")
@login_required
def change_password() -> Response:
    try:
        revoked = change_password_limited(
            user_id(),
            request.form.get("current_password", ""),
            request.form.get("new_password", ""),
            revoke_tokens=request.form.get("revoke_tokens") == "1",
        )
    except RateLimited as exc:
        flash(too_many_attempts(exc), "error")
        return redirect(url_for("web.settings"))
    except (accounts.SamePassword, accounts.WrongPassword) as exc:
        flash_error(exc)
        return redirect(url_for("web.settings"))
    except InvalidInput:  # the new password's length, the one value of this form left
        flash(
            _(
                "Choose a password of %(min)d to %(max)d characters.",
                min=accounts.MIN_PASSWORD_LENGTH,
                max=accounts.MAX_PASSWORD_LENGTH,
            ),
            "error",
        )
        return redirect(url_for("web.settings"))
    user = current_user()
    assert user is not None
    # The new password ended every session; this browser gets a new one, in the same commit.
    start_session(user)
    if revoked:
        flash(
            ngettext(
                "Password changed. %(num)d API token was revoked.",
                "Password changed. %(num)d API tokens were revoked.",
                revoked,
            )
        )
    else:
        flash(_("Password changed."))
    return redirect(url_for("web.settings"))


@bp.post("/settings/sessions")
@writes
@login_required
def sign_out_elsewhere() -> Response:
    session = db()
    web_sessions.end_others(session, user_id(), browser_session_id())
    session.commit()
    flash(_("You are signed out on every other browser."))
    return redirect(url_for("web.settings"))


@bp.post("/language")
@writes
def language() -> Response:
    """The language switcher: the profile for a signed-in person, a cookie for a visitor."""
    locale = request.form.get("locale", "")
    target = safe_next(request.form.get("next"))
    response = redirect(target)  # before the change is saved: never saved for a failed page
    if locale not in SUPPORTED_LOCALES:
        return response
    user = current_user()
    if user is not None:
        session = db()
        apply_user_settings(session, user.id, {"locale": locale})
        session.commit()
    response.set_cookie(
        LANG_COOKIE,
        locale,
        max_age=ONE_YEAR,
        samesite="Lax",
        httponly=True,
        secure=bool(current_app.config.get("SESSION_COOKIE_SECURE")) or request.is_secure,
    )
    return response


@bp.get("/tokens")
@login_required
def tokens() -> str:
    uid = user_id()
    return render_template(
        "tokens.html",
        tokens=apitokens.list_tokens(db(), uid),
        new_token=None,
        devices=anki_devices.list_devices(db(), uid),
    )


@bp.post("/tokens")
@login_required
def create_token() -> str | tuple[str, int] | tuple[str, int, dict[str, str]]:
    uid = user_id()
    session = db()
    name = request.form.get("name", "").strip()[:100]
    try:
        # Shared with the API's sign-in: a stolen cookie must not mint tokens without limit.
        token_limiter().reserve(token_key(uid))
    except RateLimited as exc:
        minutes = max(1, round(exc.retry_after / 60))
        error = _(
            "Too many API tokens were made for your account. Try again in %(minutes)d min.",
            minutes=minutes,
        )
        page = render_template(
            "tokens.html",
            tokens=apitokens.list_tokens(session, uid),
            new_token=None,
            error=error,
            devices=anki_devices.list_devices(session, uid),
        )
        return page, 429, {"Retry-After": str(exc.retry_after)}
    # Declared after the reservation, which is the limiter's own transaction.
    session = begin_writing()
    token = accounts.issue_token(session, uid, now=utcnow(), name=name)
    session.commit()
    # Shown once, in this response only: only its hash is stored.
    return render_template(
        "tokens.html",
        tokens=apitokens.list_tokens(session, uid),
        new_token=token,
        devices=anki_devices.list_devices(session, uid),
    ), 201


@bp.post("/tokens/<int:token_id>/revoke")
@writes
@login_required
def revoke_token(token_id: int) -> Response:
    session = db()
    if not apitokens.revoke_token_id(session, user_id(), token_id):
        raise NotFound(f"no token {token_id}")
    session.commit()
    flash(_("Token revoked."))
    return redirect(url_for("web.tokens"))


@bp.post("/tokens/devices/<int:device_id>/revoke")
@writes
@login_required
def revoke_anki_device(device_id: int) -> Response:
    session = db()
    if not anki_devices.revoke_device(session, user_id(), device_id):
        raise NotFound(f"no Anki device {device_id}")
    session.commit()
    flash(_("The device is signed out: it syncs again once signed in again."))
    return redirect(url_for("web.tokens"))
