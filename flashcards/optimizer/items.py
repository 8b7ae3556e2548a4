"""FSRS training items from a person's review log, built as Anki's optimizer builds them.

Per card, the answers since the card was last new, each with the days elapsed since the one
before it counted in the person's study days (a review at 23:00 and one at 05:00 the next
morning are a day apart when the day starts at 4:00). Every answer from the second on is the
target of one item whose history is the answers before it. Same-day answers stay in the
histories, where they shape short-term memory, but are never a target: recall within the day
is not what the forgetting curve predicts. A card whose log does not start from new (progress
imported without its history) gives no item, since its first logged state is unknown.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from ..srs.days import Clock, study_date
from ..srs.state_rows import NEW_STATE

# A log's `state_before` when the card was new: never studied (NULL), or forgotten.
NEW_BEFORE = (None, NEW_STATE)


@dataclass(frozen=True)
class LoggedAnswer:
    """The part of a review-log row the items need."""

    card_id: int
    reviewed_at: datetime
    rating: int  # 1 again .. 4 easy
    was_new: bool  # the card had no state before this answer, or was forgotten (NEW_BEFORE)


@dataclass(frozen=True)
class TrainingItem:
    """One answer to predict, with the card's history up to and including it."""

    card_id: int
    answered_at: datetime  # of the answer it predicts, the last of `reviews`
    reviews: tuple[tuple[int, int], ...]  # (rating, days since the previous answer)


def training_items(answers: Iterable[LoggedAnswer], clock: Clock) -> list[TrainingItem]:
    """Every training item of the answers, in the order they were answered."""
    by_card: dict[int, list[LoggedAnswer]] = defaultdict(list)
    for answer in answers:
        by_card[answer.card_id].append(answer)
    items: list[TrainingItem] = []
    for card_answers in by_card.values():
        items.extend(_card_items(sorted(card_answers, key=lambda a: a.reviewed_at), clock))
    items.sort(key=lambda item: (item.answered_at, item.card_id))
    return items


def _card_items(answers: list[LoggedAnswer], clock: Clock) -> list[TrainingItem]:
    # From the last time the card was new: a card reset to new starts a fresh memory.
    starts = [index for index, answer in enumerate(answers) if answer.was_new]
    if not starts:
        return []
    answers = answers[starts[-1] :]
    days = [study_date(answer.reviewed_at, *clock) for answer in answers]
    reviews: list[tuple[int, int]] = [(answers[0].rating, 0)]
    items: list[TrainingItem] = []
    for index in range(1, len(answers)):
        elapsed = (days[index] - days[index - 1]).days
        reviews.append((answers[index].rating, elapsed))
        if elapsed > 0:
            items.append(
                TrainingItem(answers[index].card_id, answers[index].reviewed_at, tuple(reviews))
            )
    return items


def cards_of(items: Iterable[TrainingItem]) -> int:
    return len({item.card_id for item in items})
