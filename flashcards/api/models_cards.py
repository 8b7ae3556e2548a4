"""Bodies of the card resource (`api/cards.py`): a card as the caller sees it, and the
changes the caller may make to their own state of it."""

from __future__ import annotations

from datetime import date
from typing import Annotated, ClassVar, Literal

from pydantic import Field

from ..srs.answer_effects import MAX_LEECH_THRESHOLD
from ..srs.card_actions import FLAGS, MAX_DUE_DAYS
from .models import WHOLE, Body, Reply
from .models_study import CardStateBody

DUE_PATTERN = r"^\d{1,5}(-\d{1,5})?$"


class CardText(Reply):
    front: str
    back: str
    explanation: str


class CardDetail(CardText):
    id: int
    deck: str
    key: str
    locale: str
    retired: bool
    translations: dict[str, CardText]


class CardView(Reply):
    card: CardDetail
    state: CardStateBody | None = Field(description="null: the card is new to the caller.")
    suspended: bool = Field(description="Suspended by the caller: never shown until unsuspended.")
    buried_until: date | None = Field(
        description="Buried: not shown before this study day (in the caller's clock)."
    )
    flag: Annotated[int, Field(ge=FLAGS.start, le=FLAGS.stop - 1)] = Field(
        description="Anki's flags: 0 none, 1 red, 2 orange, 3 green, 4 blue, 5 pink, "
        "6 turquoise, 7 purple."
    )
    leech: bool = Field(description="The caller lapsed on it often (Anki's leech rule).")
    tags: list[str] = Field(description="The card's tags, the caller's, and 'leech'.")


class CardPatch(Body):
    """Changes to the caller's own state of a card, made in one transaction (or none) as one
    action, which POST /reviews/undo undoes as it undoes an answer."""

    suspended: bool | None = None
    buried_until: date | None = Field(
        None,
        description="Bury until this study day (after today); null unburies.",
    )
    flag: Annotated[int, Field(ge=FLAGS.start, le=FLAGS.stop - 1), WHOLE] | None = None
    forget: Literal[True] | None = Field(
        None,
        description="true: Anki's Forget, the card new again (after the deck's new cards), "
        "its history kept. Only for a card already studied (else 409).",
    )
    restore_position: bool | None = Field(
        None, description="With forget: back at its own place among the deck's new cards."
    )
    reset_counts: bool | None = Field(
        None, description="With forget: its review and lapse counts back to 0."
    )
    due: (
        Annotated[str, Field(pattern=DUE_PATTERN)]
        | Annotated[int, Field(ge=0, le=MAX_DUE_DAYS), WHOLE]
        | None
    ) = Field(
        None,
        description="Anki's set due date: days from today (0 is today) or a range "
        "'1-7', picked per card. Only for a card already studied (else 409).",
    )
    messages: ClassVar[dict[str, str]] = {
        "suspended": "suspended must be true or false",
        "buried_until": "buried_until must be a date such as 2027-01-02, or null",
        "flag": "flag must be a whole number 0-7",
        "forget": "forget must be true",
        "restore_position": "restore_position must be true or false, with forget",
        "reset_counts": "reset_counts must be true or false, with forget",
        "due": "due must be a number of days or a range such as 1-7",
    }


class StudyOptionsBody(Reply):
    """Anki's burying and leech options, for the caller (Anki's defaults until changed)."""

    bury_new: bool = Field(description="Answering a card buries its new siblings till tomorrow.")
    bury_reviews: bool = Field(description="... and its review siblings due today.")
    bury_interday: bool = Field(description="... and its siblings in learning since another day.")
    leech_threshold: int = Field(description="Lapses that make a leech, and half as many again.")
    leech_suspend: bool = Field(description="A leech is suspended too, not only tagged.")


class StudyOptionsPatch(Body):
    bury_new: bool | None = None
    bury_reviews: bool | None = None
    bury_interday: bool | None = None
    leech_threshold: Annotated[int, Field(ge=1, le=MAX_LEECH_THRESHOLD), WHOLE] | None = None
    leech_suspend: bool | None = None
