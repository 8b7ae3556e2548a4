"""Validation of a person's settings (UI and FSRS), shared by the API, the web pages and the CLI.

Each field has one validator, so PATCH /me, per-subscription overrides and sign-up reject the
same values with the same message, which always names the field.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Any, cast
from zoneinfo import available_timezones

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..errors import InvalidInput, NotFound
from ..people.names import hidden_character, nfkc
from ..storage.models import SchedulerSettings, User
from .load_balance import EASY_DAY_PERCENTAGES, NORMAL_WEEK, EasyDay, easy_day_name

SUPPORTED_LOCALES = ("en", "es", "ko")
MAX_STEPS = 10
MAX_STEP_SECONDS = 86_400
# Each setting's bounds, written once: the validators below and the API's models use them.
DAY_START_HOURS = (0, 23)
MAXIMUM_INTERVALS = (1, 36500)
NEW_PER_DAY = (0, 9999)
REVIEWS_PER_DAY = (0, 99999)
DESIRED_RETENTIONS = (0.70, 0.99)
MAX_DISPLAY_NAME = 100
# The colour schemes a person may pick; "system" follows the browser's prefers-color-scheme.
THEMES = ("system", "light", "dark")

USER_FIELDS = frozenset({"display_name", "locale", "timezone", "day_start_hour", "theme"})
# The scheduler fields a subscription may override too (the columns of both tables).
SCHEDULER_FIELDS = frozenset(
    {
        "desired_retention",
        "learning_steps",
        "relearning_steps",
        "maximum_interval",
        "new_per_day",
        "reviews_per_day",
    }
)
# The person's own, which no subscription overrides: load balancing and easy days.
BALANCE_FIELDS = frozenset({"load_balancing", "easy_days"})
ME_FIELDS = USER_FIELDS | SCHEDULER_FIELDS | BALANCE_FIELDS

# Equal to the column defaults of SchedulerSettings; used when a user has no row yet.
_SCHEDULER_DEFAULTS: dict[str, Any] = {
    "desired_retention": 0.9,
    "learning_steps": [60, 600],
    "relearning_steps": [600],
    "maximum_interval": 36500,
    "new_per_day": 20,
    "reviews_per_day": 200,
}


def scheduler_defaults() -> dict[str, Any]:
    """A fresh copy: the step lists must not be shared between rows."""
    return {k: list(v) if isinstance(v, list) else v for k, v in _SCHEDULER_DEFAULTS.items()}


def json_int(value: object) -> int | None:
    """The integer a JSON value stands for, else None.

    bool is an int subclass, but `true` for a daily limit is a client bug, not 1. A float with
    no fraction (60.0) is an integer in JSON Schema, which our OpenAPI document promises.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _int(name: str, value: object, low: int, high: int) -> int:
    number = json_int(value)
    if number is None:
        raise InvalidInput(f"{name} must be an integer from {low} to {high}", field=name)
    if not low <= number <= high:
        raise InvalidInput(f"{name} must be from {low} to {high}, not {number}", field=name)
    return number


def _day_start_hour(value: object) -> int:
    return _int("day_start_hour", value, *DAY_START_HOURS)


def _maximum_interval(value: object) -> int:
    return _int("maximum_interval", value, *MAXIMUM_INTERVALS)


def _new_per_day(value: object) -> int:
    return _int("new_per_day", value, *NEW_PER_DAY)


def _reviews_per_day(value: object) -> int:
    return _int("reviews_per_day", value, *REVIEWS_PER_DAY)


def _desired_retention(value: object) -> float:
    name = "desired_retention"
    low, high = DESIRED_RETENTIONS
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInput(f"{name} must be a number from {low:.2f} to {high:.2f}", field=name)
    number = float(value)
    if math.isnan(number) or not low <= number <= high:
        raise InvalidInput(f"{name} must be from {low:.2f} to {high:.2f}, not {value}", field=name)
    return number


def _steps(name: str, value: object) -> list[int]:
    if not isinstance(value, list):
        raise InvalidInput(f"{name} must be a list of seconds", field=name)
    if len(value) > MAX_STEPS:
        raise InvalidInput(f"{name} may have at most {MAX_STEPS} steps", field=name)
    steps = []
    for item in value:
        step = json_int(item)
        if step is None:
            raise InvalidInput(f"{name} must be a list of whole seconds", field=name)
        if not 1 <= step <= MAX_STEP_SECONDS:
            raise InvalidInput(
                f"each of {name} must be from 1 to {MAX_STEP_SECONDS} seconds, not {step}",
                field=name,
            )
        steps.append(step)
    return steps


# Steps as Anki's deck options write them: "1m 10m", "30s", "1h", "1d"; a number alone is
# minutes. The unit letters are Anki's in every language.
STEP_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400}
STEP_TEXT = re.compile(r"([0-9]{1,12}(?:\.[0-9]{1,6})?)([smhd]?)", re.IGNORECASE)


def steps_from_text(words: list[str]) -> list[int] | None:
    """Steps typed as Anki takes them (each word "10", "10m", "1.5m", "1h"...; "." the
    decimal mark), in whole seconds; None if a word is none of those."""
    steps = []
    for word in words:
        found = STEP_TEXT.fullmatch(word)
        if found is None:
            return None
        steps.append(round(float(found[1]) * STEP_UNITS[found[2].lower() or "m"]))
    return steps


def steps_text(steps: Iterable[int]) -> str:
    """Steps as Anki writes them, each in its largest whole unit: "1m 10m", "1h 1d", "90s"."""
    return " ".join(
        next(f"{s // STEP_UNITS[u]}{u}" for u in ("d", "h", "m", "s") if s % STEP_UNITS[u] == 0)
        for s in steps
    )


def _learning_steps(value: object) -> list[int]:
    return _steps("learning_steps", value)


def _relearning_steps(value: object) -> list[int]:
    return _steps("relearning_steps", value)


def _locale(value: object) -> str:
    if not isinstance(value, str) or value not in SUPPORTED_LOCALES:
        raise InvalidInput(f"locale must be one of {', '.join(SUPPORTED_LOCALES)}", field="locale")
    return value


def _theme(value: object) -> str:
    if not isinstance(value, str) or value not in THEMES:
        raise InvalidInput(f"theme must be one of {', '.join(THEMES)}", field="theme")
    return value


# Not zones: "localtime" is whatever the server's clock is set to, "Factory" a placeholder.
_NOT_ZONES = frozenset({"localtime", "Factory", "posixrules"})


@lru_cache(maxsize=1)
def timezone_names() -> frozenset[str]:
    """The IANA names this system knows; the OpenAPI document lists the same ones."""
    return frozenset(available_timezones()) - _NOT_ZONES


def _timezone(value: object) -> str:
    if not isinstance(value, str) or value not in timezone_names():
        raise InvalidInput(
            f"timezone must be an IANA time zone name such as Europe/Madrid, not {value!r}",
            field="timezone",
        )
    return value


# C0 and C1 control characters: they break the pages and the CSV exports a name appears in.
CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _display_name(value: object) -> str:
    if not isinstance(value, str):
        raise InvalidInput("display_name must be a string", field="display_name")
    # NFKC: a fullwidth or otherwise compatibility-spelled name is the ordinary one.
    name = nfkc(value).strip()
    if len(name) > MAX_DISPLAY_NAME:
        raise InvalidInput(
            f"display_name may be at most {MAX_DISPLAY_NAME} characters", field="display_name"
        )
    if CONTROL_CHARS.search(name):
        raise InvalidInput("display_name may not contain control characters", field="display_name")
    if hidden_character(name) is not None:
        # Invisible or direction-changing: a name that renders as another person's.
        raise InvalidInput(
            "display_name may not contain invisible or text-direction characters",
            field="display_name",
        )
    return name


def _load_balancing(value: object) -> bool:
    if not isinstance(value, bool):
        raise InvalidInput("load_balancing must be true or false", field="load_balancing")
    return value


def _easy_days(value: object) -> list[str]:
    names = ", ".join(EASY_DAY_PERCENTAGES)
    if (
        not isinstance(value, list)
        or len(value) != 7
        or any(not isinstance(v, str) or v not in EASY_DAY_PERCENTAGES for v in value)
    ):
        raise InvalidInput(
            f"easy_days must be a list of 7 days, Monday first, each one of {names}",
            field="easy_days",
        )
    return list(value)


def easy_days_names(percentages: object) -> list[str]:
    """The stored percentages as the names the API and the settings page use."""
    week = percentages if isinstance(percentages, list) and len(percentages) == 7 else NORMAL_WEEK
    return [easy_day_name(float(p)) for p in week]


VALIDATORS: dict[str, Callable[[object], object]] = {
    "display_name": _display_name,
    "locale": _locale,
    "timezone": _timezone,
    "day_start_hour": _day_start_hour,
    "desired_retention": _desired_retention,
    "learning_steps": _learning_steps,
    "relearning_steps": _relearning_steps,
    "maximum_interval": _maximum_interval,
    "new_per_day": _new_per_day,
    "reviews_per_day": _reviews_per_day,
    "theme": _theme,
    "load_balancing": _load_balancing,
    "easy_days": _easy_days,
}


def validate_settings(
    values: Mapping[str, object], *, allowed: Iterable[str], nullable: bool = False
) -> dict[str, object]:
    """Checked, normalised copies of `values`; raise InvalidInput naming the first bad field.

    `nullable=True` lets a field be None, which for per-subscription overrides means "use the
    user's own setting".
    """
    allowed = frozenset(allowed)
    unknown = sorted(set(values) - allowed)
    if unknown:
        raise InvalidInput(
            f"unknown field {unknown[0]!r}; allowed: {', '.join(sorted(allowed))}",
            field=unknown[0],
        )
    clean: dict[str, object] = {}
    for name, value in values.items():
        if value is None and nullable:
            clean[name] = None
            continue
        clean[name] = VALIDATORS[name](value)
    return clean


def validate_each(
    values: Mapping[str, object], *, allowed: Iterable[str], nullable: bool = False
) -> tuple[dict[str, object], dict[str, InvalidInput]]:
    """Every field checked, as `validate_settings` checks one: the clean values of the good
    ones, and the error of each bad one by field, so that a form flags all of them at once."""
    clean: dict[str, object] = {}
    errors: dict[str, InvalidInput] = {}
    for name, value in values.items():
        try:
            clean.update(validate_settings({name: value}, allowed=allowed, nullable=nullable))
        except InvalidInput as exc:
            errors[exc.field or name] = exc
    return clean, errors


def user_settings(session: Session, user_id: int) -> dict[str, Any]:
    """The body of GET /me: identity, UI settings and scheduler settings, in one query."""
    row = session.execute(
        select(
            User.id,
            User.email,
            User.display_name,
            User.locale,
            User.timezone,
            User.day_start_hour,
            User.theme,
            SchedulerSettings.desired_retention,
            SchedulerSettings.learning_steps,
            SchedulerSettings.relearning_steps,
            SchedulerSettings.maximum_interval,
            SchedulerSettings.new_per_day,
            SchedulerSettings.reviews_per_day,
            SchedulerSettings.load_balancing,
            SchedulerSettings.easy_days,
        )
        .outerjoin(SchedulerSettings, SchedulerSettings.user_id == User.id)
        .where(User.id == user_id)
    ).one_or_none()
    if row is None:
        raise NotFound("no such user")
    body = dict(row._mapping)
    for name, default in scheduler_defaults().items():
        if body[name] is None:
            body[name] = default
    body["load_balancing"] = body["load_balancing"] is not False  # no row yet: on
    body["easy_days"] = easy_days_names(body["easy_days"])
    return body


def apply_user_settings(session: Session, user_id: int, values: Mapping[str, object]) -> None:
    """Write already validated settings to the user and their scheduler settings."""
    user = session.get(User, user_id)
    if user is None:
        raise NotFound("no such user")
    for name in USER_FIELDS & values.keys():
        setattr(user, name, values[name])
    scheduler = values.keys() & (SCHEDULER_FIELDS | BALANCE_FIELDS)
    if scheduler:
        row = session.get(SchedulerSettings, user_id)
        if row is None:
            row = SchedulerSettings(user_id=user_id, **scheduler_defaults())
            session.add(row)
        for name in scheduler:
            value = values[name]
            if name == "easy_days":
                value = [EASY_DAY_PERCENTAGES[day] for day in cast(list[EasyDay], value)]
            setattr(row, name, value)
    session.flush()
