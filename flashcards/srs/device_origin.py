"""Answers and card actions a person made in Anki and a sync brought here, told from those
made on the web or through the API by their ids, which are derived from what the device
sent: the same answer sent twice has the same review id (and is applied once), and undo
here takes back only what was done here, as Anki's undo on each device takes back only
that device's. No Flask."""

from __future__ import annotations

import uuid
from datetime import datetime

# Never to change: the review ids of the answers already taken are derived from it.
DEVICE_ANSWERS = uuid.UUID("6b2f0b0e-5d1c-4b8a-9c57-2a4a9a0f1e11")
DEVICE_ACTIONS = uuid.UUID("0e7f6d7a-2c4b-4f0e-9a51-3b8d6c1e5f24")


def answer_review_id(user_id: int, revlog_id: int) -> str:
    """The review id of a device's answer, its revlog id being its time in ms."""
    return str(uuid.uuid5(DEVICE_ANSWERS, f"{user_id}:{revlog_id}"))


def action_id(user_id: int, card_id: int, when: datetime) -> str:
    """The id of the action a sync takes for a device's changes to one card at `when`."""
    return str(uuid.uuid5(DEVICE_ACTIONS, f"{user_id}:{card_id}:{_ms(when)}"))


def is_device_answer(user_id: int, review_id: str, reviewed_at: datetime) -> bool:
    return review_id == answer_review_id(user_id, _ms(reviewed_at))


def is_device_action(user_id: int, card_id: int, action: str, acted_at: datetime) -> bool:
    return action == action_id(user_id, card_id, acted_at)


def _ms(when: datetime) -> int:
    return round(when.timestamp() * 1000)
