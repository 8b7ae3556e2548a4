"""Bodies of the custom study endpoints (`api/custom_study.py`)."""

from __future__ import annotations

from datetime import date
from typing import Annotated, ClassVar

from pydantic import Field

from ..srs.custom_study import AMOUNTS, DAYS, FLAGS, MAX_TAG, MODES
from ..srs.custom_study import Mode as ModeName
from ..storage.schema import MAX_ID
from .models import WHOLE, Body, Reply, Timestamp
from .models_study import Intervals, NextCardText


class CustomStudyRequest(Body):
    mode: ModeName = Field(
        description="ahead: review cards due in the next `days`; forgotten: cards answered "
        "Again in the last `days`; extra_new / extra_review: `amount` more new or review cards "
        "of `deck` today, on top of its limits (no session: the deck's daily queue shows them); "
        "preview: `amount` new cards of `deck`, not scheduled; tag: cards "
        "with `tag`; flag: cards with `flag` (1 to 7, Anki's red to purple)."
    )
    deck: str | None = Field(
        None, max_length=100, description="A deck the caller studies (a slug); needed by "
        "extra_new, extra_review and preview, a filter for the other modes."
    )  # fmt: skip
    days: Annotated[int, Field(ge=DAYS[0], le=DAYS[1]), WHOLE] | None = None
    amount: Annotated[int, Field(ge=AMOUNTS[0], le=AMOUNTS[1]), WHOLE] | None = Field(
        None,
        description="How many cards; needed by extra_new and extra_review, 100 when left out "
        "for the other modes.",
    )
    tag: str | None = Field(None, min_length=1, max_length=MAX_TAG)
    flag: Annotated[int, Field(ge=FLAGS[0], le=FLAGS[1]), WHOLE] | None = None
    messages: ClassVar[dict[str, str]] = {
        "mode": "mode must be one of " + ", ".join(MODES),
        "days": f"days must be a whole number from {DAYS[0]} to {DAYS[1]}",
        "amount": f"amount must be a whole number from {AMOUNTS[0]} to {AMOUNTS[1]}",
        "flag": f"flag must be a whole number from {FLAGS[0]} to {FLAGS[1]}",
    }


class CustomStudySession(Reply):
    mode: ModeName
    deck: str | None
    days: int | None
    amount: int
    tag: str | None
    flag: int | None = Field(description="The flag a flag session studies.")
    started_at: Timestamp
    done: int = Field(description="Cards answered (or previewed) in the session so far.")


class ExtendedLimits(Reply):
    deck: str
    day: date = Field(description="The study day the extra cards count for (today).")
    extra_new: int = Field(description="New cards on top of the deck's daily limit today.")
    extra_reviews: int = Field(description="Review cards on top of the deck's daily limit today.")
    new: int = Field(description="New cards the deck has left to show today, extra ones included.")
    review: int = Field(description="Review cards the deck has left today, extra ones included.")


class CustomStudyNext(Reply):
    card: NextCardText
    intervals: Intervals | None = Field(
        description="As for the next card of the day; null in a preview, which schedules nothing."
    )
    session: CustomStudySession


class PreviewedCard(Body):
    card_id: Annotated[int, Field(ge=1, le=MAX_ID), WHOLE]
