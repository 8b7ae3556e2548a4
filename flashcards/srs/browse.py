"""The card browser's search: every live card a person studies or may edit, filtered, sorted
and paged. Shared by the web page and the API (a card's history: `card_history`).

A page is one SQL statement (its total comes with it as a window count), so its cost does
not grow with the rows shown; the filters are EXISTS and IN subqueries the indexes on
`(user_id, card_id)` and `(card_id, user_id, reviewed_at)` answer. No Flask; never commits.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import date, datetime, timedelta
from typing import Any, Literal

from sqlalchemy import (
    ColumnElement,
    Select,
    SQLColumnExpression,
    Text,
    and_,
    case,
    cast,
    exists,
    func,
    null,
    or_,
    select,
)
from sqlalchemy.orm import Session, aliased

from ..decks.access import visible_decks
from ..decks.card_pages import clean_query, text_matches
from ..errors import InvalidInput
from ..people.accounts import user_clock
from ..storage.models import (
    Card,
    CardMark,
    CardText,
    Deck,
    ReviewLog,
    ReviewState,
    Subscription,
    TeamMember,
)
from ..teams.roles import LEADS
from .days import Clock, day_start, study_date
from .marks import LEECH_TAG
from .state_rows import NEW_STATE
from .subscriptions import with_subdecks

PAGE_SIZE = 50
MAX_PAGE = 100_000
MAX_TEXT = 100  # characters of a deck slug or a tag asked for
EARLIEST, LATEST = date(1970, 1, 1), date(9000, 1, 1)
# fsrs.State's numbers; "new" is no state row at all, or a forgotten card's (NEW_STATE).
STATES = {"new": 0, "learning": 1, "review": 2, "relearning": 3}
SORTS = ("due", "interval", "difficulty", "stability", "lapses", "reviews")
StateName = Literal["new", "learning", "review", "relearning"]
SortName = Literal["due", "interval", "difficulty", "stability", "lapses", "reviews"]
Order = Literal["asc", "desc"]


@dataclass(frozen=True)
class Search:
    """What the person asked for; None: any. Dates are study days in the person's clock."""

    text: str = ""
    deck: str | None = None  # a deck's slug: its cards and its subdecks' (`_deck_ids`)
    state: StateName | None = None
    due_from: date | None = None
    due_to: date | None = None
    flag: int | None = None  # 0: no flag
    tag: str | None = None
    suspended: bool | None = None
    leech: bool | None = None
    reviewed_today: bool | None = None
    sort: SortName = "due"
    order: Order = "asc"
    page: int = 1


_DEFAULT = Search()


@dataclass(frozen=True)
class BrowsedCard:
    id: int
    deck_slug: str
    key: str
    question: str
    locale: str  # the question's
    state: StateName
    due: datetime | None
    # A card in review is due on a study day, as Anki shows it: that day, and the interval
    # in whole study days from its last review (at least 1). A learning card's due is a
    # time, and its interval the time from its last review to then.
    due_day: date | None
    interval_days: float | None
    stability: float | None
    difficulty: float | None
    reviews: int
    lapses: int
    suspended: bool
    buried_until: date | None
    flag: int
    leech: bool
    tags: list[str]  # the card's own, the person's, and "leech", as Anki shows them


@dataclass(frozen=True)
class BrowsePage:
    cards: list[BrowsedCard]
    total: int
    page: int  # within 1..pages
    pages: int
    search: Search


_BOOLEANS = {"true": True, "1": True, "false": False, "0": False}


def parse_search(values: Mapping[str, str]) -> Search:
    """A search from a query string (the page's links and filter form): InvalidInput naming
    the first value that is not one of the field's. Empty values are "any"."""
    given = {name: value.strip() for name, value in values.items() if value.strip()}
    fields: dict[str, Any] = {"text": clean_query(given.get("q"))}
    for name in ("deck", "tag"):
        if name in given:
            fields[name] = given[name][:MAX_TEXT]
    choices: dict[str, Sequence[str]] = {
        "state": tuple(STATES),
        "sort": SORTS,
        "order": ("asc", "desc"),
    }
    for name, allowed in choices.items():
        if name in given:
            if given[name] not in allowed:
                raise InvalidInput(f"{name} is one of {', '.join(allowed)}", field=name)
            fields[name] = given[name]
    for name in ("due_from", "due_to"):
        if name in given:
            try:
                fields[name] = date.fromisoformat(given[name])
            except ValueError:
                raise InvalidInput(f"{name} is a date (YYYY-MM-DD)", field=name) from None
    for name in ("suspended", "leech", "reviewed_today"):
        if name in given:
            if given[name] not in _BOOLEANS:
                raise InvalidInput(f"{name} is true or false", field=name)
            fields[name] = _BOOLEANS[given[name]]
    for name, low, high in (("flag", 0, 7), ("page", 1, MAX_PAGE)):
        if name in given:
            raw = given[name]
            if not (raw.isascii() and raw.isdigit() and low <= int(raw) <= high):
                raise InvalidInput(f"{name} is a whole number from {low} to {high}", field=name)
            fields[name] = int(raw)
    return Search(**fields)


def search_args(search: Search) -> dict[str, str]:
    """The query string of a search, without its defaults: what `parse_search` reads back."""
    out: dict[str, str] = {}
    for name, value in asdict(search).items():
        if value is None or value == "" or value == getattr(_DEFAULT, name):
            continue
        key = "q" if name == "text" else name
        out[key] = str(value).lower() if isinstance(value, bool) else str(value)
    return out


def _scope(user_id: int) -> ColumnElement[bool]:
    """Decks the person studies (subscribed), owns, or leads in a team, and still sees."""
    studied = select(Subscription.deck_id).where(Subscription.user_id == user_id)
    led = select(TeamMember.team_id).where(
        TeamMember.user_id == user_id, TeamMember.role.in_(LEADS)
    )
    return and_(
        visible_decks(user_id),
        or_(
            Deck.id.in_(studied),
            Deck.owner_user_id == user_id,
            Deck.owner_team_id.in_(led),
        ),
    )


def searched_decks(session: Session, user_id: int) -> dict[str, str | None]:
    """The decks whose cards the person can browse, by slug: the language they study each in
    (None for one they do not study), which its title is shown in, as in the library."""
    studied = Subscription.deck_id == Deck.id, Subscription.user_id == user_id
    rows = session.execute(
        select(Deck.slug, Subscription.locale).outerjoin(Subscription, and_(*studied))
        .where(_scope(user_id))
    )  # fmt: skip
    return {row.slug: row.locale for row in rows}


def _deck_ids(session: Session, user_id: int, slug: str) -> list[int]:
    """The deck `slug` with the subdecks the person studies under it, as Anki's "deck:"
    search takes in subdecks (and as studying the deck does)."""
    deck = session.scalar(select(Deck).where(Deck.slug == slug))
    return list(with_subdecks(session, user_id, deck)) if deck is not None else []


def _interval(session: Session) -> ColumnElement[Any]:
    """Days between the last review and the due date, as each database subtracts times."""
    if session.get_bind().dialect.name == "sqlite":
        days = func.julianday(ReviewState.due) - func.julianday(ReviewState.last_review)
    else:
        days = func.extract("epoch", ReviewState.due - ReviewState.last_review) / 86400.0
    return _scheduled(days)


def _scheduled(value: Any) -> ColumnElement[Any]:
    """NULL for a forgotten card, new again: its due date is only when it was forgotten."""
    return case((ReviewState.state == NEW_STATE, null()), else_=value)


_scheduled_due = _scheduled(ReviewState.due)


def _has_tag(tag: str) -> ColumnElement[bool]:
    # Tags are JSON lists on both databases, written by the same serializer: the tag's JSON
    # string, quotes included, matches one whole element (autoescape: "%" is the character).
    needle = json.dumps(tag)
    found = or_(
        cast(Card.tags, Text).contains(needle, autoescape=True),
        cast(CardMark.tags, Text).contains(needle, autoescape=True),
    )
    return or_(found, CardMark.leech.is_(True)) if tag == LEECH_TAG else found


def _joined(query: Select[Any], user_id: int) -> Select[Any]:
    return (
        query.join(Deck, Deck.id == Card.deck_id)
        .outerjoin(ReviewState, (ReviewState.user_id == user_id) & (ReviewState.card_id == Card.id))
        .outerjoin(CardMark, (CardMark.user_id == user_id) & (CardMark.card_id == Card.id))
    )


def _order(search: Search, interval: ColumnElement[Any]) -> list[Any]:
    column: SQLColumnExpression[Any] = {
        "due": _scheduled_due,
        "interval": interval,
        "difficulty": ReviewState.difficulty,
        "stability": ReviewState.stability,
        "lapses": ReviewState.lapses,
        "reviews": ReviewState.reps,
    }[search.sort]
    ordered = column.desc() if search.order == "desc" else column.asc()
    # New cards have none of these: they come last either way, in deck order.
    tie = Card.id.desc() if search.order == "desc" else Card.id.asc()
    return [ordered.nulls_last(), Card.deck_id, Card.position, tie]


def _matching(
    session: Session, user_id: int, search: Search, now: datetime, clock: Clock
) -> Select[Any]:
    """The ids of the cards that match, in order, each with the count of all of them."""
    ids: list[Any] = [Card.id, func.count().over().label("total")]
    query = _joined(select(*ids).select_from(Card), user_id).where(
        Card.retired_at.is_(None), _scope(user_id)
    )
    text = clean_query(search.text)
    if text:
        query = query.where(Card.id.in_(select(CardText.card_id).where(text_matches(text))))
    if search.deck is not None:
        query = query.where(Card.deck_id.in_(_deck_ids(session, user_id, search.deck)))
    if search.state == "new":
        query = query.where(or_(ReviewState.card_id.is_(None), ReviewState.state == NEW_STATE))
    elif search.state is not None:
        query = query.where(ReviewState.state == STATES[search.state])
    # Dates beyond any card's due date are cut to the range's ends, where a time zone's
    # offset cannot carry them past the year 1 or 9999.
    if search.due_from is not None:
        first = min(max(search.due_from, EARLIEST), LATEST)
        query = query.where(_scheduled_due >= day_start(first, *clock))
    if search.due_to is not None:
        last = min(max(search.due_to, EARLIEST), LATEST)
        query = query.where(_scheduled_due < day_start(last + timedelta(days=1), *clock))
    if search.flag is not None:
        query = query.where(func.coalesce(CardMark.flag, 0) == search.flag)
    if search.tag:
        query = query.where(_has_tag(search.tag))
    if search.suspended is not None:
        query = query.where(func.coalesce(CardMark.suspended, False).is_(search.suspended))
    if search.leech is not None:
        query = query.where(func.coalesce(CardMark.leech, False).is_(search.leech))
    if search.reviewed_today is not None:
        today = day_start(study_date(now, *clock), *clock)
        answered = exists().where(
            ReviewLog.card_id == Card.id,
            ReviewLog.user_id == user_id,
            ReviewLog.reviewed_at >= today,
        )
        query = query.where(answered if search.reviewed_today else ~answered)
    return query.order_by(*_order(search, _interval(session)))


def _page(session: Session, user_id: int, search: Search, matching: Select[Any], page: int) -> Any:
    """One statement: the page's ids first (sorted, counted, cut to the page), then only
    those 50 rows joined to their texts, subscriptions and marks."""
    chosen = matching.limit(PAGE_SIZE).offset((page - 1) * PAGE_SIZE).subquery("chosen")
    own = aliased(CardText)
    default = aliased(CardText)
    interval = _interval(session)
    shown: list[Any] = [
        Card.id,
        Card.key,
        Card.tags.label("card_tags"),
        Deck.slug,
        Deck.default_locale,
        own.locale.label("own_locale"),
        own.question.label("own_question"),
        default.question.label("default_question"),
        ReviewState.state,
        _scheduled_due.label("due"),
        ReviewState.last_review,
        interval.label("interval_days"),
        ReviewState.stability,
        ReviewState.difficulty,
        ReviewState.reps,
        ReviewState.lapses,
        CardMark.suspended,
        CardMark.buried_until,
        CardMark.flag,
        CardMark.leech,
        CardMark.tags.label("own_tags"),
        chosen.c.total,
    ]
    query = (
        _joined(select(*shown).select_from(chosen).join(Card, Card.id == chosen.c.id), user_id)
        .outerjoin(
            Subscription, (Subscription.user_id == user_id) & (Subscription.deck_id == Deck.id)
        )
        .outerjoin(own, (own.card_id == Card.id) & (own.locale == Subscription.locale))
        .outerjoin(default, (default.card_id == Card.id) & (default.locale == Deck.default_locale))
        .order_by(*_order(search, interval))
    )
    return session.execute(query).all()


def _card(row: Any, clock: Clock) -> BrowsedCard:
    own_tags = tuple(row.own_tags or ())
    tags = dict.fromkeys([*(row.card_tags or ()), *own_tags, *([LEECH_TAG] if row.leech else [])])
    names = {number: name for name, number in STATES.items()}
    interval_days = None if row.interval_days is None else float(row.interval_days)
    due_day = None
    if row.state == STATES["review"] and row.due is not None and row.last_review is not None:
        due_day = study_date(row.due, *clock)
        interval_days = max(1, (due_day - study_date(row.last_review, *clock)).days)
    return BrowsedCard(
        id=row.id,
        deck_slug=row.slug,
        key=row.key,
        question=(row.own_question if row.own_locale else row.default_question) or "",
        locale=row.own_locale or row.default_locale,
        state=names[row.state] if row.state is not None else "new",  # type: ignore[arg-type]
        due=row.due,
        due_day=due_day,
        interval_days=interval_days,
        stability=row.stability,
        difficulty=row.difficulty,
        reviews=row.reps or 0,
        lapses=row.lapses or 0,
        suspended=bool(row.suspended),
        buried_until=row.buried_until,
        flag=row.flag or 0,
        leech=bool(row.leech),
        tags=list(tags),
    )


def browse(session: Session, user_id: int, search: Search, *, now: datetime) -> BrowsePage:
    """Page `search.page` of the cards matching `search` (clamped to the pages there are)."""
    clock = user_clock(session, user_id)
    matching = _matching(session, user_id, search, now, clock)
    page = min(max(1, search.page), MAX_PAGE)
    rows = _page(session, user_id, search, matching, page)
    if not rows and page > 1:
        # Past the last page (a bookmark, a bulk action that emptied it): show the last one.
        total = session.scalar(select(func.count()).select_from(matching.subquery())) or 0
        page = max(1, -(-total // PAGE_SIZE))
        rows = _page(session, user_id, search, matching, page)
    total = rows[0].total if rows else 0
    pages = max(1, -(-total // PAGE_SIZE))
    return BrowsePage([_card(r, clock) for r in rows], total, page, pages, search)
