"""Bodies of the study endpoints (`api/study.py`): decks, subscriptions, next card, answers."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Annotated, ClassVar, Literal

from fsrs import Rating
from pydantic import AfterValidator, Field, PlainValidator, WithJsonSchema

from ..errors import InvalidInput
from ..srs import study
from ..srs.scheduling import CardState
from ..storage.schema import MAX_ID
from .models import WHOLE, Body, Reply, Timestamp

MAX_DURATION_MS = 24 * 3600 * 1000
_UUID = {"type": "string", "format": "uuid"}


def _rating(value: object) -> Rating:
    try:
        return study.parse_rating(value)
    except InvalidInput as exc:
        raise ValueError(exc.detail) from None


def _in_utc(value: datetime) -> datetime:
    try:
        if value.tzinfo is not None:
            return value.astimezone(UTC)
    except OverflowError:  # "0001-01-01T00:00+14:00" has no UTC value
        pass
    raise ValueError("reviewed_at must be an ISO 8601 time with a UTC offset")


RatingValue = Annotated[
    Rating,
    PlainValidator(_rating),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "integer", "minimum": 1, "maximum": 4},
                {"type": "string", "enum": ["again", "hard", "good", "easy"]},
            ],
            "description": "1 again, 2 hard, 3 good, 4 easy (names in any case).",
        }
    ),
]


class SubscriptionRequest(Body):
    locale: str | None = Field(
        None,
        description="One of the deck's locales. Left out: an existing subscription keeps its "
        "locale; a new one takes the caller's UI locale if the deck has it, else the deck's "
        "default.",
    )
    messages: ClassVar[dict[str, str]] = {"locale": "locale must be a string such as 'es'"}


class ReviewRequest(Body):
    card_id: Annotated[int, Field(ge=1, le=MAX_ID), WHOLE]
    rating: RatingValue
    review_id: uuid.UUID = Field(
        description="Chosen by the client; sending the same answer again applies nothing "
        "twice (200). The same id for another card or rating is a 409."
    )
    duration_ms: Annotated[int, Field(ge=0, le=MAX_DURATION_MS), WHOLE] | None = None
    reviewed_at: Annotated[datetime, AfterValidator(_in_utc)] | None = Field(
        None,
        description="For answers given offline, with a UTC offset: not in the future, not "
        "before the card's last review. Default: now.",
    )
    messages: ClassVar[dict[str, str]] = {
        "review_id": "review_id must be a UUID chosen by the client",
        "reviewed_at": "reviewed_at must be an ISO 8601 time with a UTC offset",
    }


class UndoRequest(Body):
    review_id: uuid.UUID | None = Field(
        None,
        description="Undo this answer (or this action on a card: suspend, bury, flag...), and "
        "only while it is the latest of today: a retried request then undoes nothing more (404 "
        "once it is undone, 409 once a later answer came). Without it, the latest answer or "
        "action is undone.",
    )
    messages: ClassVar[dict[str, str]] = ReviewRequest.messages


class CardStateBody(Reply):
    """The caller's FSRS memory state of one card."""

    state: Literal["learning", "review", "relearning"]
    step: Annotated[int, Field(ge=0)] | None
    stability: float | None
    difficulty: float | None
    due: Timestamp
    last_review: Timestamp | None
    reps: Annotated[int, Field(ge=0)]
    lapses: Annotated[int, Field(ge=0)]

    @classmethod
    def of(cls, state: CardState) -> CardStateBody:
        return cls(
            state=state.state.name.lower(),  # type: ignore[arg-type]
            step=state.step,
            stability=state.stability,
            difficulty=state.difficulty,
            due=state.due,
            last_review=state.last_review,
            reps=state.reps,
            lapses=state.lapses,
        )


class DeckSubscription(Reply):
    locale: str


class DeckSummary(Reply):
    slug: str
    title: str
    description: str
    locales: list[str]
    default_locale: str
    card_count: Annotated[int, Field(ge=0)]
    subscription: DeckSubscription | None = Field(description="The caller's subscription.")


class DeckList(Reply):
    decks: list[DeckSummary]


class Subscription(Reply):
    deck: str
    locale: str


class NextCardText(Reply):
    id: int
    deck: str
    key: str
    locale: str
    front: str
    back: str
    explanation: str
    kind: Literal["new", "learning", "review"]


Seconds = Annotated[int, Field(ge=0, description="Seconds from now.")]
Count = Annotated[int, Field(ge=0)]


class Intervals(Reply):
    """When the card comes back for each rating: exactly what is stored if sent now."""

    again: Seconds
    hard: Seconds
    good: Seconds
    easy: Seconds


class Counts(Reply):
    new: Count
    learning: Count
    review: Count


class NextCard(Reply):
    card: NextCardText
    intervals: Intervals
    counts: Counts


class ReviewResult(Reply):
    review_id: Annotated[str, WithJsonSchema(_UUID)]
    card_id: int
    state: CardStateBody


class UndoResult(Reply):
    review_id: Annotated[str, WithJsonSchema(_UUID)]
    card_id: int
    state: CardStateBody | None = Field(description="null: the card is new again.")
