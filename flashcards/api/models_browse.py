"""Bodies of the card browser's API (`api/browse.py`): its search (a query string), a page of
cards, a card's history, and an action on a selection of cards."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, ClassVar, Literal

from pydantic import ConfigDict, Field

from ..srs import browse
from ..srs.card_actions import FLAGS, MAX_DUE_DAYS, MAX_SELECTION, MAX_TAG
from ..storage.schema import MAX_ID
from .models import WHOLE, Body, Reply, Timestamp
from .models_cards import DUE_PATTERN

Flag = Annotated[int, Field(ge=FLAGS.start, le=FLAGS.stop - 1)]


class CardSearch(Body):
    """GET /cards's query string. Its values are text, so read as a query string's are:
    `true`/`false`, `3`, `2027-01-02`; an unknown name is refused."""

    model_config = ConfigDict(extra="forbid", strict=False, frozen=True)

    q: str = Field("", max_length=200, description="Text in any of the card's languages.")
    deck: str | None = Field(
        None,
        max_length=100,
        description="A deck's slug: its cards, and those of the subdecks the caller studies "
        "under it.",
    )
    state: browse.StateName | None = None
    due_from: date | None = Field(None, description="Due on or after this study day.")
    due_to: date | None = Field(None, description="Due on or before this study day.")
    flag: Flag | None = Field(None, description="0: no flag; 1-7 Anki's colours.")
    tag: str | None = Field(None, max_length=MAX_TAG, description="The card's, yours, or leech.")
    suspended: bool | None = None
    leech: bool | None = None
    reviewed_today: bool | None = Field(None, description="Answered since today's start.")
    sort: browse.SortName = "due"
    order: Literal["asc", "desc"] = "asc"
    page: Annotated[int, Field(ge=1, le=browse.MAX_PAGE)] = 1

    def search(self) -> browse.Search:
        values = self.model_dump()
        return browse.Search(text=values.pop("q"), **values)


class BrowsedCardBody(Reply):
    id: int
    deck: str
    key: str
    question: str = Field(description="In the language the caller studies the deck in.")
    locale: str
    state: Literal["new", "learning", "review", "relearning"]
    due: Timestamp | None
    due_day: date | None = Field(
        description="A card in review: the study day it is due on, in the caller's clock."
    )
    interval_days: float | None = Field(
        description="A card in review: whole study days from its last review to its due day "
        "(at least 1), as Anki counts an interval; a learning card: due minus the last review."
    )
    stability: float | None
    difficulty: float | None
    reviews: int
    lapses: int
    suspended: bool
    buried_until: date | None
    flag: int
    leech: bool
    tags: list[str]

    @classmethod
    def of(cls, card: browse.BrowsedCard) -> BrowsedCardBody:
        values: dict[str, Any] = dict(card.__dict__)
        values["deck"] = values.pop("deck_slug")
        return cls(**values)


class CardPageBody(Reply):
    cards: list[BrowsedCardBody]
    total: int = Field(description="Cards matching the search, on every page.")
    page: int = Field(description="The page shown, within 1..pages (a later one shows the last).")
    pages: int
    page_size: int


class HistoryAnswer(Reply):
    reviewed_at: Timestamp
    rating: int = Field(description="1 again, 2 hard, 3 good, 4 easy.")
    state: Literal["new", "learning", "review", "relearning"] = Field(description="After it.")
    interval_days: float = Field(description="From the answer to the due date it set.")
    stability: float
    difficulty: float


class CardHistoryBody(Reply):
    card_id: int
    deck: str
    question: str
    locale: str
    answers: list[HistoryAnswer] = Field(description="Oldest first.")


class CardActionsBody(Body):
    """One action on a selection of the caller's cards, in one transaction, undone as a whole
    by POST /reviews/undo."""

    card_ids: Annotated[
        list[Annotated[int, Field(ge=1, le=MAX_ID), WHOLE]],
        Field(min_length=1, max_length=MAX_SELECTION),
    ]
    action: Literal[
        "suspend", "unsuspend", "bury", "unbury", "flag", "add_tag", "remove_tag", "forget", "due",
        "move",
    ]  # fmt: skip
    flag: Annotated[int, Field(ge=FLAGS.start, le=FLAGS.stop - 1), WHOLE] | None = Field(
        None, description="For flag: 0 (none) to 7."
    )
    tag: Annotated[str, Field(min_length=1, max_length=MAX_TAG)] | None = Field(
        None, description="For add_tag and remove_tag: one of the caller's own tags."
    )
    due: (
        Annotated[str, Field(pattern=DUE_PATTERN)]
        | Annotated[int, Field(ge=0, le=MAX_DUE_DAYS), WHOLE]
        | None
    ) = Field(None, description="For due: days from today (0 is today) or a range '1-7'.")
    restore_position: bool = Field(
        False,
        description="For forget (Anki's option): each card back at its own place among its "
        "deck's new cards, rather than after them.",
    )
    reset_counts: bool = Field(
        False, description="For forget (Anki's option): review and lapse counts back to 0."
    )
    deck: Annotated[str, Field(min_length=1, max_length=100)] | None = Field(
        None,
        description="For move: the slug of one of the caller's own decks, where the cards "
        "(all of the caller's own decks too) go with their progress and history.",
    )
    messages: ClassVar[dict[str, str]] = {
        "card_ids": f"card_ids must be 1 to {MAX_SELECTION} card ids",
        "flag": "flag must be a whole number 0-7",
        "due": "due must be a number of days or a range such as 1-7",
        "deck": "deck must be the slug of one of your own decks",
    }


class CardActionsReply(Reply):
    action_id: str = Field(description="What POST /reviews/undo names to undo it.")
    card_ids: list[int]
