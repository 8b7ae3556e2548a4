"""Bodies of the account endpoints: tokens (`tokens.py`), the caller and sign-up (`me.py`)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import ConfigDict, Field

from ..people import accounts
from ..people.names import hidden_characters_class
from ..srs.settings import (
    DAY_START_HOURS,
    DESIRED_RETENTIONS,
    MAX_DISPLAY_NAME,
    MAX_STEP_SECONDS,
    MAX_STEPS,
    MAXIMUM_INTERVALS,
    NEW_PER_DAY,
    REVIEWS_PER_DAY,
    SUPPORTED_LOCALES,
    THEMES,
    timezone_names,
)
from .models import WHOLE, Body, Reply

MAX_TOKEN_NAME = 100

_EMAIL = Field(max_length=accounts.MAX_EMAIL_LENGTH, json_schema_extra={"format": "email"})
# Checked and normalised (NFKC, trimmed) by `settings`, so only described here.
_DISPLAY_NAME: dict[str, Any] = {
    "type": "string",
    "maxLength": MAX_DISPLAY_NAME,
    "pattern": f"^[^\\u0000-\\u001f\\u007f-\\u009f{hidden_characters_class()}]*$",
    "description": "No control characters, and no invisible or text-direction ones (Unicode "
    "format characters such as U+200B or U+202E); stored in NFKC form, with surrounding "
    "spaces removed.",
}
_LOCALE: dict[str, Any] = {"enum": list(SUPPORTED_LOCALES)}
_THEME: dict[str, Any] = {
    "description": "Colour scheme of the web pages; system follows the browser.",
    "enum": list(THEMES),
}
_TIMEZONE: dict[str, Any] = {
    "description": "IANA name, e.g. America/Los_Angeles.",
    "enum": sorted(timezone_names()),
}


def _within(bounds: tuple[float, float]) -> Any:
    low, high = bounds
    return Field(ge=low, le=high)


EasyDays = Annotated[
    list[Literal["normal", "reduced", "minimum"]],
    Field(
        min_length=7,
        max_length=7,
        description="Each weekday's review load, Monday first: normal, reduced or minimum "
        "(Anki's easy days). The load balancer keeps reviews off minimum days where it can.",
    ),
]

Steps = Annotated[
    list[Annotated[int, Field(ge=1, le=MAX_STEP_SECONDS), WHOLE]],
    Field(max_length=MAX_STEPS, description="Step lengths in seconds."),
]


def _present_or_absent(schema: dict[str, Any]) -> None:
    # A field left out keeps its stored value, and null is refused (by `settings`): the
    # document shows neither a default nor null.
    for name, field in schema.get("properties", {}).items():
        field.pop("default", None)
        kinds = [kind for kind in field.pop("anyOf", []) if kind != {"type": "null"}]
        if kinds:
            schema["properties"][name] = {**kinds[0], **field}


class TokenRequest(Body):
    email: str = _EMAIL
    password: str = Field(max_length=accounts.MAX_PASSWORD_LENGTH)
    name: str = Field("", max_length=MAX_TOKEN_NAME, description="A label, e.g. 'phone'.")


class Token(Reply):
    token: str = Field(description="Send as 'Authorization: Bearer <token>'.")


class PasswordChange(Body):
    current_password: str = Field(max_length=accounts.MAX_PASSWORD_LENGTH)
    new_password: str = Field(
        max_length=accounts.MAX_PASSWORD_LENGTH,
        json_schema_extra={"minLength": accounts.MIN_PASSWORD_LENGTH},
    )
    revoke_tokens: bool = Field(
        False,
        description="Also revoke every API token of the caller, the one sending this request "
        "included (after a leaked password).",
    )
    messages: ClassVar[dict[str, str]] = {"revoke_tokens": "revoke_tokens must be true or false"}


class SignUp(Body):
    email: str = _EMAIL
    password: str = Field(
        max_length=accounts.MAX_PASSWORD_LENGTH,
        json_schema_extra={"minLength": accounts.MIN_PASSWORD_LENGTH},
    )
    display_name: str = Field("", json_schema_extra=_DISPLAY_NAME)
    locale: str = Field("en", json_schema_extra=_LOCALE)
    timezone: str = Field("UTC", json_schema_extra=_TIMEZONE)


class MePatch(Body):
    """Any subset of the caller's settings; `settings` checks and normalises each value."""

    model_config = ConfigDict(json_schema_extra=_present_or_absent)

    display_name: str | None = Field(None, json_schema_extra=_DISPLAY_NAME)
    locale: str | None = Field(None, json_schema_extra=_LOCALE)
    timezone: str | None = Field(None, json_schema_extra=_TIMEZONE)
    day_start_hour: Annotated[int, _within(DAY_START_HOURS), WHOLE] | None = None
    desired_retention: Annotated[float, _within(DESIRED_RETENTIONS)] | None = None
    learning_steps: Steps | None = None
    relearning_steps: Steps | None = None
    maximum_interval: Annotated[int, _within(MAXIMUM_INTERVALS), WHOLE] | None = None
    new_per_day: Annotated[int, _within(NEW_PER_DAY), WHOLE] | None = None
    reviews_per_day: Annotated[int, _within(REVIEWS_PER_DAY), WHOLE] | None = None
    theme: str | None = Field(None, json_schema_extra=_THEME)
    load_balancing: bool | None = Field(
        None,
        description="Spread review intervals over the days of their fuzz range with fewer "
        "cards due (on by default).",
    )
    easy_days: EasyDays | None = None


class Me(Reply):
    id: int
    email: str
    display_name: str
    locale: str
    timezone: str
    day_start_hour: int
    desired_retention: float
    learning_steps: list[int]
    relearning_steps: list[int]
    maximum_interval: int
    new_per_day: int
    reviews_per_day: int
    theme: str = Field(json_schema_extra=_THEME)
    load_balancing: bool
    easy_days: EasyDays


class Health(Reply):
    status: Literal["ok"]
