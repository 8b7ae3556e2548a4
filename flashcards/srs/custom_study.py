"""Custom study, as Anki's: one session per person, kept in `custom_study_sessions`.

Modes: study ahead (review cards due within the next N days), review cards forgotten in the
last N days, preview a deck's new cards without scheduling them, and study the cards with a
tag or with a flag. A session keeps what it was started with and when; which card comes next
is worked out from the review states at each request (no server memory): a card answered
since the session started is done with. Answers in a session are ordinary answers
(`study.answer`), so they count as real ones; preview answers nothing, it only moves on.

"Increase today's new / review card limit" (extra_new, extra_review) starts no session, as in
Anki: it adds cards on top of the deck's limits for today (`extend_limits`), which the daily
queue shows (`queue`); asked again the same day, the numbers add up.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any, Literal, cast

from fsrs import State
from sqlalchemy import case, delete, exists, func, select, update
from sqlalchemy.orm import Session, aliased

from ..decks.access import visible_decks
from ..errors import InvalidInput, NoCardsMatch, NotFound, NotSubscribed
from ..storage.models import (
    Card,
    CardMark,
    CustomStudySession,
    Deck,
    ReviewLog,
    ReviewState,
    SchedulerSettings,
    Subscription,
)
from .cards import seen_card
from .days import Clock, day_bounds, study_date
from .queue import NextCard
from .settings import json_int
from .state_rows import NEW_STATE, config_from
from .subscriptions import find_visible_deck

Mode = Literal["ahead", "forgotten", "extra_new", "extra_review", "preview", "tag", "flag"]
MODES: tuple[Mode, ...] = (
    "ahead", "forgotten", "extra_new", "extra_review", "preview", "tag", "flag",
)  # fmt: skip
# What each mode is given: days (ahead, forgotten), a number of cards, a deck, a tag, a flag.
NEEDS_DAYS = frozenset({"ahead", "forgotten"})
NEEDS_DECK = frozenset({"extra_new", "extra_review", "preview"})
EXTENDS_LIMITS = frozenset({"extra_new", "extra_review"})
DAYS = (1, 365)
AMOUNTS = (1, 9999)
MAX_TAG = 100
FLAGS = (1, 7)  # Anki's seven colours (0 is no flag)
DEFAULT_AMOUNT = 100  # cards of a session when no number is given (all but extended limits)


class NoCustomStudy(NotFound):
    """The person has no custom study session."""


@dataclass(frozen=True)
class CustomStudy:
    mode: Mode
    deck_slug: str | None
    days: int | None
    amount: int
    tag: str | None
    started_at: datetime
    done: int
    flag: int | None = None  # cards answered (or previewed) in the session so far


@dataclass(frozen=True)
class ExtendedLimits:
    """A deck's cards on top of its daily limits, today."""

    deck_id: int
    deck_slug: str
    on: date  # the study day they count for
    extra_new: int
    extra_reviews: int


def _number(name: str, value: object, low: int, high: int) -> int:
    number = json_int(value)
    if number is None or not low <= number <= high:
        raise InvalidInput(f"{name} must be a whole number from {low} to {high}", field=name)
    return number


def start(
    session: Session,
    user_id: int,
    *,
    mode: object,
    deck: str | None = None,
    days: object = None,
    amount: object = None,
    tag: object = None,
    flag: object = None,
    now: datetime,
    clock: Clock,
) -> CustomStudy | ExtendedLimits:
    """Start a session (ending the one before), or extend a deck's limits today (extra_new,
    extra_review: no session); InvalidInput names the field at fault."""
    if mode not in MODES:
        raise InvalidInput(f"mode must be one of {', '.join(MODES)}", field="mode")
    deck_id = None
    if deck is not None or mode in NEEDS_DECK:
        if not deck:
            raise InvalidInput(f"mode {mode} needs a deck", field="deck")
        found = find_visible_deck(session, user_id, deck)
        if session.get(Subscription, (user_id, found.id)) is None:
            raise NotSubscribed("subscribe to this deck before studying it", field="deck")
        deck_id = found.id
    clean_days = _number("days", days, *DAYS) if mode in NEEDS_DAYS else None
    clean_amount = DEFAULT_AMOUNT if amount is None else _number("amount", amount, *AMOUNTS)
    if mode in EXTENDS_LIMITS and amount is None:
        raise InvalidInput(f"mode {mode} needs an amount of cards", field="amount")
    clean_tag = None
    if mode == "tag":
        if not isinstance(tag, str) or not tag.strip() or len(tag.strip()) > MAX_TAG:
            raise InvalidInput(f"tag must be a tag of 1 to {MAX_TAG} characters", field="tag")
        clean_tag = tag.strip()
    clean_flag = _number("flag", flag, *FLAGS) if mode == "flag" else None
    if mode in EXTENDS_LIMITS and deck_id is not None:
        extra = (clean_amount, 0) if mode == "extra_new" else (0, clean_amount)
        return extend_limits(session, user_id, deck_id, *extra, today=study_date(now, *clock))
    session.execute(delete(CustomStudySession).where(CustomStudySession.user_id == user_id))
    session.add(
        CustomStudySession(
            user_id=user_id, mode=mode, deck_id=deck_id, days=clean_days,
            amount=clean_amount, tag=clean_tag, flag=clean_flag, started_at=now, previewed=0,
        )
    )  # fmt: skip
    session.flush()
    # As Anki does, a session with nothing to show is not started (the one before stays).
    if _next_card_id(session, user_id, _row(session, user_id), now, clock)[0] is None:
        raise NoCardsMatch(f"no card matches custom study by {mode}: nothing to study")
    return current(session, user_id)


def extend_limits(
    session: Session, user_id: int, deck_id: int, new: int, reviews: int, *, today: date
) -> ExtendedLimits:
    """Add `new` and `reviews` cards on top of the deck's limits for the study day `today`
    (Anki's extended limits: added to what was asked earlier that day, void the next), up to
    AMOUNTS[1] extra cards of each kind a day."""
    same_day = Subscription.extended_on == today
    top = AMOUNTS[1]

    def added(column: Any, more: int) -> Any:
        # A day's extra stays within what one request may ask, so that repeated requests
        # cannot push the column past its integer range.
        total = case((same_day, column), else_=0) + more
        return case((total > top, top), else_=total)

    session.execute(
        update(Subscription)
        .where(Subscription.user_id == user_id, Subscription.deck_id == deck_id)
        .values(
            # One statement, from the row's own values: two requests at once both count.
            extra_new=added(Subscription.extra_new, new),
            extra_reviews=added(Subscription.extra_reviews, reviews),
            extended_on=today,
        )
    )
    row = session.execute(
        select(Deck.slug, Subscription.extra_new, Subscription.extra_reviews)
        .join(Deck, Deck.id == Subscription.deck_id)
        .where(Subscription.user_id == user_id, Subscription.deck_id == deck_id)
    ).one()
    return ExtendedLimits(deck_id, row.slug, today, row.extra_new, row.extra_reviews)


def _row(session: Session, user_id: int) -> CustomStudySession:
    row = session.get(CustomStudySession, user_id)
    if row is None:
        raise NoCustomStudy("you have no custom study session")
    return row


def current(session: Session, user_id: int) -> CustomStudy:
    row = _row(session, user_id)
    slug = (
        None
        if row.deck_id is None
        else session.scalar(select(Deck.slug).where(Deck.id == row.deck_id))
    )
    return CustomStudy(
        mode=cast(Mode, row.mode),  # one of MODES, as `start` wrote it
        deck_slug=slug,
        days=row.days,
        amount=row.amount or DEFAULT_AMOUNT,
        tag=row.tag,
        flag=row.flag,
        started_at=row.started_at,
        done=row.previewed if row.mode == "preview" else _answered(session, user_id, row),
    )


def end(session: Session, user_id: int) -> None:
    _row(session, user_id)
    session.execute(delete(CustomStudySession).where(CustomStudySession.user_id == user_id))


def _answered(session: Session, user_id: int, row: CustomStudySession) -> int:
    """Cards answered since the session started (in its deck, when it has one)."""
    query = select(func.count(func.distinct(ReviewLog.card_id))).where(
        ReviewLog.user_id == user_id, ReviewLog.reviewed_at >= row.started_at
    )
    if row.deck_id is not None:
        query = query.where(ReviewLog.deck_id == row.deck_id)
    return session.scalar(query) or 0


def _studied(user_id: int, row: CustomStudySession, today: date) -> Any:
    """Cards of decks the person studies (the session's deck, when it has one), as Anki
    fills a filtered deck: none they suspended or buried for today."""
    mark = aliased(CardMark)  # the flag mode's query joins CardMark itself
    hidden = exists().where(
        mark.card_id == Card.id,
        mark.user_id == user_id,
        mark.suspended | (mark.buried_until > today),
    )
    condition = (
        exists().where(Subscription.user_id == user_id, Subscription.deck_id == Card.deck_id)
        & visible_decks(user_id)
        & ~hidden
    )
    if row.deck_id is not None:
        condition = condition & (Card.deck_id == row.deck_id)
    return condition


def _next_card_id(
    session: Session, user_id: int, row: CustomStudySession, now: datetime, clock: Clock
) -> tuple[int | None, str]:
    """The next card of the session and its kind ("new", "learning", "review")."""
    day_start, day_end = day_bounds(now, *clock)
    studied = _studied(user_id, row, study_date(now, *clock))
    own_state = (ReviewState.card_id == Card.id) & (ReviewState.user_id == user_id)
    if row.mode == "preview":
        # A forgotten card is new again (its state row kept for its history).
        introduced = exists().where(own_state, ReviewState.state != NEW_STATE)
        new = (
            select(Card.id)
            .join(Deck, Deck.id == Card.deck_id)
            .where(studied, ~introduced, Card.retired_at.is_(None))
            .order_by(Card.deck_id, Card.position)
            .offset(row.previewed)
        )
        return session.scalar(new.limit(1)), "new"
    untouched = ReviewState.last_review < row.started_at  # not answered in this session
    if row.mode == "tag":
        # Any card carrying the tag, new or not; tags are a JSON list, matched in Python,
        # where every database reads them alike.
        tagged = (
            select(Card.id, ReviewState.state, Card.tags)
            .join(Deck, Deck.id == Card.deck_id)
            .outerjoin(ReviewState, own_state)
            .where(
                studied,
                Card.retired_at.is_(None) | ReviewState.state.is_not(None),
                ReviewState.last_review.is_(None) | untouched,
            )
            .order_by(Card.deck_id, Card.position)
        )
        wanted = (row.tag or "").casefold()
        for card_id, state, tags in session.execute(tagged):
            if any(isinstance(t, str) and t.casefold() == wanted for t in tags or ()):
                return card_id, _kind(state)
        return None, "new"
    if row.mode == "flag":
        # Any live card the person flagged so, new or not.
        flagged = (
            select(Card.id, ReviewState.state)
            .join(Deck, Deck.id == Card.deck_id)
            .join(CardMark, (CardMark.card_id == Card.id) & (CardMark.user_id == user_id))
            .outerjoin(ReviewState, own_state)
            .where(
                studied,
                CardMark.flag == row.flag,
                Card.retired_at.is_(None),
                ReviewState.last_review.is_(None) | untouched,
            )
            .order_by(Card.deck_id, Card.position)
        )
        found_flagged = session.execute(flagged.limit(1)).first()
        if found_flagged is None:
            return None, "new"
        return found_flagged[0], _kind(found_flagged[1])
    query = (
        select(Card.id, ReviewState.state)
        .join(Deck, Deck.id == Card.deck_id)
        .join(ReviewState, own_state)
        .where(studied, untouched)
    )
    if row.mode == "forgotten":
        since = day_start - timedelta(days=(row.days or 1) - 1)
        forgotten = exists().where(
            ReviewLog.user_id == user_id, ReviewLog.card_id == Card.id,
            ReviewLog.rating == 1, ReviewLog.reviewed_at >= since,
        )  # fmt: skip
        query = query.where(forgotten).order_by(Card.deck_id, Card.position)
    else:
        # Ahead: due within the next days.
        until = day_end + timedelta(days=row.days or 0)
        query = query.where(
            ReviewState.state == int(State.Review), ReviewState.due < until
        ).order_by(ReviewState.due, Card.id)
    found = session.execute(query.limit(1)).first()
    if found is None:
        return None, "new"
    return found[0], _kind(found[1])


def _kind(state: int | None) -> str:
    if state is None or state == NEW_STATE:
        return "new"
    return "review" if state == int(State.Review) else "learning"


def next_card(
    session: Session, user_id: int, *, now: datetime, clock: Clock
) -> tuple[NextCard | None, CustomStudy]:
    """The session's next card (None: the session is through), and the session."""
    row = _row(session, user_id)
    study = current(session, user_id)
    if study.done >= study.amount:
        return None, study
    card_id, kind = _next_card_id(session, user_id, row, now, clock)
    if card_id is None:
        return None, study
    seen = seen_card(session, user_id, card_id)
    deck_id = session.scalar(select(Card.deck_id).where(Card.id == card_id))
    settings = session.get(SchedulerSettings, user_id)
    sub = session.get(Subscription, (user_id, deck_id))
    text = seen.shown
    card = NextCard(
        card_id=card_id, deck_id=deck_id or 0, deck_slug=seen.deck_slug, key=seen.key,
        locale=seen.locale, question=text.front, answer=text.back,
        explanation=text.explanation, kind=kind, state=seen.state,
        config=config_from(settings, sub),
    )  # fmt: skip
    return card, study


def previewed(session: Session, user_id: int, card_id: int, *, now: datetime, clock: Clock) -> None:
    """Move a preview on past `card_id`, when it is the card shown (a resend moves nothing)."""
    row = _row(session, user_id)
    if row.mode != "preview":
        raise InvalidInput("only a preview session moves on without answering", field="mode")
    shown, _kind = _next_card_id(session, user_id, row, now, clock)
    if shown == card_id:
        row.previewed += 1
        session.flush()
