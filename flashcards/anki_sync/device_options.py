"""The person's settings as a device changed its default options group (Anki's id 1, which a
sync fills from them): daily limits, learning and relearning steps, the longest interval and
the desired retention become their settings here, as the settings page would take them. No
Flask.

A value the settings page would refuse (a step of a second, a limit past ours) leaves that
setting as it is; ours then goes back to the device. FSRS parameters are not taken: the
service fits its own (`fsrs`), and a device's are sent the person's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy.orm import Session

from ..anki import schema
from ..srs.settings import SCHEDULER_FIELDS, apply_user_settings, validate_each
from . import snapshot


def take_changes(
    session: Session, user_id: int, dconf: Iterable[Mapping[str, Any]], sent: set[int]
) -> list[tuple[int, int]]:
    """A normal sync's options groups: the default group's settings taken unless ours changed
    since the device's last sync (`sent`: then ours goes again, as it does when a value is
    refused). The objects to record as the device holds them (`snapshot.record_some`)."""
    key = (snapshot.DECK_CONFIG, schema.DECK_CONFIG_ID)
    if schema.DECK_CONFIG_ID in sent:
        snapshot.forget(session, user_id, [key])
        return []
    took, refused = take_defaults(session, user_id, dconf)
    if refused:
        snapshot.forget(session, user_id, [key])
        return []
    return [key] if took else []


def take_defaults(
    session: Session, user_id: int, dconf: Iterable[Mapping[str, Any]]
) -> tuple[bool, bool]:
    """Take the default group's settings, if `dconf` has it: whether any setting was taken,
    and whether any was refused."""
    found = next((c for c in dconf if c.get("id") == schema.DECK_CONFIG_ID), None)
    if found is None:
        return False, False
    clean, refused = validate_each(_settings(found), allowed=SCHEDULER_FIELDS)
    if clean:
        apply_user_settings(session, user_id, clean)
    return bool(clean), bool(refused)


def _settings(group: Mapping[str, Any]) -> dict[str, object]:
    """The group's values under our settings' names; a part missing or of the wrong shape is
    left out (and so left as it is)."""
    new, rev, lapse = (_part(group, name) for name in ("new", "rev", "lapse"))
    values: dict[str, object] = {
        "new_per_day": new.get("perDay"),
        "reviews_per_day": rev.get("perDay"),
        "maximum_interval": rev.get("maxIvl"),
        "learning_steps": _seconds(new.get("delays")),
        "relearning_steps": _seconds(lapse.get("delays")),
        "desired_retention": group.get("desiredRetention"),
    }
    return {name: value for name, value in values.items() if value is not None}


def _part(group: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = group.get(name)
    return value if isinstance(value, dict) else {}


def _seconds(minutes: object) -> list[int] | None:
    """Anki's steps are minutes (floats); ours are whole seconds."""
    if not isinstance(minutes, list) or not all(
        isinstance(m, int | float) and not isinstance(m, bool) for m in minutes
    ):
        return None
    return [round(m * 60) for m in minutes]
