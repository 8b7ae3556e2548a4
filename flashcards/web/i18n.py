"""Locale and timezone selection for Flask-Babel, and Babel-formatted intervals and dates.

The locale is, in order: the signed-in person's profile (the language switcher writes it),
a visitor's `lang` cookie (the switcher sets it), `Accept-Language`, English.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from pathlib import Path

from babel import Locale
from babel.dates import format_date, format_skeleton, format_time, format_timedelta
from babel.numbers import format_decimal, format_percent
from flask import Flask, request
from flask_babel import Babel, get_locale, get_timezone

from ..settings import SUPPORTED_LOCALES
from .auth import current_user

LANG_COOKIE = "lang"
TRANSLATIONS = Path(__file__).resolve().parents[2] / "translations"


def select_locale() -> str:
    user = current_user()
    if user is not None and user.locale in SUPPORTED_LOCALES:
        return user.locale
    cookie = request.cookies.get(LANG_COOKIE)
    if cookie in SUPPORTED_LOCALES:
        return cookie
    return request.accept_languages.best_match(SUPPORTED_LOCALES) or "en"


def select_timezone() -> str:
    user = current_user()
    return user.timezone if user is not None else "UTC"


def locale_code() -> str:
    return str(get_locale() or "en")


def interval(seconds: float) -> str:
    """A button's interval in the page's language: "10 minutes", "3 días", "3일"."""
    return format_timedelta(timedelta(seconds=max(0, seconds)), locale=locale_code())


def relative(when: datetime, now: datetime) -> str:
    """ "in 3 days" in the page's language."""
    return format_timedelta(when - now, add_direction=True, locale=locale_code())


def when(value: datetime) -> str:
    """A day and time without seconds, in the person's language and timezone ("Tue, Mar 3,
    3:05 AM", "mar, 3 mar, 3:05", "3월 3일 (화) 오전 3:05")."""
    locale = Locale.parse(locale_code())
    tz = get_timezone()
    day = format_skeleton("MMMEd", value, tzinfo=tz, locale=locale)
    clock = format_time(value, "short", tzinfo=tz, locale=locale)
    return str(locale.datetime_formats["medium"]).replace("{1}", day).replace("{0}", clock)


def one_decimal(value: float) -> str:
    return str(format_decimal(value, "0.0", locale=locale_code()))


def date_label(value: date) -> str:
    """A calendar date (a due date, no time of day) in the page's language."""
    return str(format_date(value, "medium", locale=locale_code()))


def percent(value: float) -> str:
    return str(format_percent(value, locale=locale_code()))


def language_name(code: str) -> str:
    """A language's own name ("español", "한국어"), as switchers conventionally show it."""
    name = Locale.parse(code).get_display_name(code) or code
    return name[:1].upper() + name[1:] if code != "ko" else name


def init_app(app: Flask) -> None:
    app.config.setdefault("BABEL_TRANSLATION_DIRECTORIES", str(TRANSLATIONS))
    Babel(app, locale_selector=select_locale, timezone_selector=select_timezone)
    app.jinja_env.globals.update(
        locale_code=locale_code,
        language_name=language_name,
        supported_locales=SUPPORTED_LOCALES,
    )
    app.jinja_env.filters.update(
        interval=interval,
        when=when,
        decimal=one_decimal,
        date_label=date_label,
        percent=percent,
    )
