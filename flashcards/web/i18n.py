"""Locale and timezone selection for Flask-Babel, and Babel-formatted intervals and dates.

The locale is, in order: the signed-in person's profile (the language switcher writes it),
a visitor's `lang` cookie (the switcher sets it), `Accept-Language`, English.
"""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

from babel import Locale
from babel.dates import format_date, format_skeleton, format_time, format_timedelta
from babel.lists import format_list
from babel.numbers import format_decimal, format_percent
from babel.units import format_unit
from flask import Flask, request
from flask_babel import Babel, get_locale, get_timezone

from ..decks.locales import display_name
from ..srs.settings import SUPPORTED_LOCALES
from .auth import current_page, current_user

LANG_COOKIE = "lang"
# An installed package carries its compiled catalogs (setup.py); a checkout has them
# beside their .po files.
TRANSLATIONS = Path(__file__).resolve().parents[1] / "translations"
if not TRANSLATIONS.is_dir():
    TRANSLATIONS = TRANSLATIONS.parents[1] / "translations"


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


# Anki's units for an interval: whole minutes and days, hours, months and years to a tenth.
# Babel's format_timedelta would round 8 or 10 days to "1 week", hiding the interval the
# button stores; the largest unit that fits keeps it exact enough to compare buttons.
_INTERVAL_UNITS = (
    (365 * 86400, "duration-year", 1),
    (30 * 86400, "duration-month", 1),
    (86400, "duration-day", 0),
    (3600, "duration-hour", 1),
    (60, "duration-minute", 0),
    (1, "duration-second", 0),
)


def interval(seconds: float) -> str:
    """A button's interval in the page's language: "10 minutes", "8 días", "1.5개월"."""
    # Whole seconds: an interval from days (a minute is 0.000694... of one) comes back a hair
    # short, and 59.99 seconds would read "60 seconds" where the button said "1 minute".
    seconds = max(0.0, round(seconds))
    for size, unit, decimals in _INTERVAL_UNITS:
        if seconds >= size or size == 1:
            value = round(seconds / size, decimals)
            return str(
                format_unit(value, unit, length="long", format="#,##0.#", locale=locale_code())
            )
    raise AssertionError("unreachable")


def relative(when: datetime, now: datetime) -> str:
    """ "in 3 days" in the page's language."""
    return format_timedelta(when - now, add_direction=True, locale=locale_code())


def when(value: datetime) -> str:
    """A day and time without seconds, in the person's language and timezone ("Tue, Mar 3,
    3:05 AM", "mar, 3 mar, 3:05", "3월 3일 (화) 오전 3:05")."""
    locale = Locale.parse(locale_code())
    tz = get_timezone()
    # With the year when it is not this one ("Sun, May 9, 2027").
    this_year = value.astimezone(tz).year == datetime.now(tz).year
    day = format_skeleton("MMMEd" if this_year else "yMMMEd", value, tzinfo=tz, locale=locale)
    clock = format_time(value, "short", tzinfo=tz, locale=locale)
    return str(locale.datetime_formats["medium"]).replace("{1}", day).replace("{0}", clock)


def whole_number(value: int) -> str:
    """A count as the page's language writes it ("12.000" in Spanish)."""
    return str(format_decimal(value, locale=locale_code()))


def word_list(items: list[str]) -> str:
    """Items joined as the page's language joins a list ("A, B y C", "A, B 및 C")."""
    return str(format_list(items, locale=locale_code()))


def plain_number(value: float) -> str:
    """A number with the page's decimal mark and no group separators, for a form to read
    back: "1,5" and "36500" in Spanish ("36.500" would read back as a decimal)."""
    return str(format_decimal(value, locale=locale_code(), group_separator=False))


def one_decimal(value: float) -> str:
    return str(format_decimal(value, "0.0", locale=locale_code()))


def date_label(value: date) -> str:
    """A calendar date (a due date, no time of day) in the page's language."""
    return str(format_date(value, "medium", locale=locale_code()))


def percent(value: float) -> str:
    return str(format_percent(value, locale=locale_code()))


def difficulty(value: float) -> str:
    """FSRS's difficulty (1 to 10) as Anki shows it, a share of the scale: 1 is 0 %, 10 is
    100 %."""
    return percent((value - 1) / 9)


def language_name(code: str) -> str:
    """A language's own name ("español", "한국어"), as switchers conventionally show it."""
    name = display_name(code, code)
    return name[:1].upper() + name[1:] if code != "ko" else name


def language_in_sentence(code: str) -> str:
    """A language named in the page's language ("inglés" on a Spanish page), for a sentence;
    its own name would read "se añade en English"."""
    return display_name(code, locale_code())


def lang_tag(code: str) -> str:
    """A deck language ("pt_BR", as Babel names locales) as HTML's lang wants it ("pt-BR")."""
    return code.replace("_", "-")


def init_app(app: Flask) -> None:
    app.config.setdefault("BABEL_TRANSLATION_DIRECTORIES", str(TRANSLATIONS))
    Babel(app, locale_selector=select_locale, timezone_selector=select_timezone)
    app.jinja_env.globals.update(
        locale_code=locale_code,
        language_name=language_name,
        language_in_sentence=language_in_sentence,
        supported_locales=SUPPORTED_LOCALES,
        current_page=current_page,
    )
    app.jinja_env.filters.update(
        interval=interval,
        when=when,
        decimal=one_decimal,
        plain_number=plain_number,
        whole=whole_number,
        date_label=date_label,
        percent=percent,
        difficulty=difficulty,
        lang_tag=lang_tag,
    )
