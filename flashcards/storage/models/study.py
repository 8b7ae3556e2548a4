"""A person's study: scheduler settings, subscriptions, review states and log, marks, custom
study."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    SmallInteger,
    String,
    text,
    true,
)
from sqlalchemy.orm import Mapped, mapped_column

from ..schema import Base, utcnow

EVERY_DAY_NORMAL = "[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]"


class SchedulerSettings(Base):
    """A user's FSRS settings; a subscription may override some of them for one deck."""

    __tablename__ = "scheduler_settings"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    desired_retention: Mapped[float] = mapped_column(Float, default=0.9)
    # Steps in seconds, as JSON lists.
    learning_steps: Mapped[list[int]] = mapped_column(JSON, default=lambda: [60, 600])
    relearning_steps: Mapped[list[int]] = mapped_column(JSON, default=lambda: [600])
    maximum_interval: Mapped[int] = mapped_column(Integer, default=36500)
    new_per_day: Mapped[int] = mapped_column(Integer, default=20)
    reviews_per_day: Mapped[int] = mapped_column(Integer, default=200)
    # None means py-fsrs's defaults (which equal Anki's FSRS-6 defaults).
    parameters: Mapped[list[float] | None] = mapped_column(JSON, default=None)
    # Load balancing of review intervals (srs.load_balance), on unless turned off. Defaults
    # from the database only: a row written without them (as before they existed) gets them.
    load_balancing: Mapped[bool] = mapped_column(Boolean, server_default=true(), deferred=True)
    # Easy days: Anki's percentages per weekday, Monday first (1 Normal, 0.5 Reduced, 0 Minimum).
    easy_days: Mapped[list[float]] = mapped_column(
        JSON, server_default=text(f"'{EVERY_DAY_NORMAL}'"), deferred=True
    )
    # Deferred, and not read back on insert: accounts must still be made and read on a schema
    # migrated back to before these columns (tests/test_migrations.py does so).
    __mapper_args__ = {"eager_defaults": False}  # noqa: RUF012 (SQLAlchemy's, per class)


class Subscription(Base):
    """A user studies a deck in one locale; NULL overrides fall back to SchedulerSettings."""

    __tablename__ = "subscriptions"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    deck_id: Mapped[int] = mapped_column(
        ForeignKey("decks.id", ondelete="CASCADE"), primary_key=True
    )
    locale: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    desired_retention: Mapped[float | None] = mapped_column(Float, default=None)
    learning_steps: Mapped[list[int] | None] = mapped_column(JSON, default=None)
    relearning_steps: Mapped[list[int] | None] = mapped_column(JSON, default=None)
    maximum_interval: Mapped[int | None] = mapped_column(Integer, default=None)
    new_per_day: Mapped[int | None] = mapped_column(Integer, default=None)
    reviews_per_day: Mapped[int | None] = mapped_column(Integer, default=None)
    # A team's pace for an assigned deck with a due date (see teams.assignments), kept apart
    # from the person's own override above: the day's allowance is the larger of the two.
    paced_new_per_day: Mapped[int | None] = mapped_column(Integer, default=None)
    # Custom study's "increase today's limit" (Anki's extended limits): cards on top of the
    # day's new and review limits, for the study day `extended_on` only.
    extended_on: Mapped[date | None] = mapped_column(default=None)
    extra_new: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    extra_reviews: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class ReviewState(Base):
    """FSRS state of one card for one user. No row means the card is still new to them."""

    __tablename__ = "review_states"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    card_id: Mapped[int] = mapped_column(
        ForeignKey("cards.id", ondelete="CASCADE"), primary_key=True
    )
    # Copied from the card so that a deck's due queue is one index range scan.
    deck_id: Mapped[int] = mapped_column(ForeignKey("decks.id", ondelete="CASCADE"))
    # fsrs.State: 1 learning, 2 review, 3 relearn; 0: new again, forgotten (Anki's "Forget"),
    # its history kept.
    state: Mapped[int] = mapped_column(SmallInteger)
    step: Mapped[int | None] = mapped_column(SmallInteger)
    stability: Mapped[float | None] = mapped_column(Float)
    difficulty: Mapped[float | None] = mapped_column(Float)
    due: Mapped[datetime] = mapped_column()
    last_review: Mapped[datetime | None] = mapped_column()
    reps: Mapped[int] = mapped_column(Integer, default=0)
    lapses: Mapped[int] = mapped_column(Integer, default=0)
    introduced_at: Mapped[datetime] = mapped_column()
    # Bumped by every write; an update that finds another version lost a race and retries.
    version: Mapped[int] = mapped_column(Integer, default=1)
    # A forgotten card's place among its deck's new cards (as `Card.position`): its own, or
    # after every card new when it was forgotten; NULL for every other state. The answer
    # that starts the card over clears it (and saves it for its undo in a CardAction row).
    # Deferred and without a default: states are still read and written on a schema
    # migrated back to before it.
    new_position: Mapped[int | None] = mapped_column(Integer, deferred=True)

    __table_args__ = (
        Index("ix_review_states_user_due", "user_id", "due"),
        # A deck's forgotten cards, in their order: few, and found without a scan of the
        # deck's states. On new_position alone, which an answer's UPDATE never assigns:
        # SQLite rewrites an index whose columns or condition an UPDATE assigns.
        Index(
            "ix_review_states_forgotten",
            "user_id",
            "deck_id",
            "new_position",
            sqlite_where=text("new_position IS NOT NULL"),
            postgresql_where=text("new_position IS NOT NULL"),
        ),
        # Covering for the queue's per-deck counts, which read each due card's state.
        Index("ix_review_states_user_deck_due_state", "user_id", "deck_id", "due", "state"),
        Index("ix_review_states_user_introduced", "user_id", "introduced_at"),
    )


class ReviewLog(Base):
    """One answer, with the state before and after: enough to undo, replay and export."""

    __tablename__ = "review_logs"

    id: Mapped[int] = mapped_column(primary_key=True)
    review_id: Mapped[str] = mapped_column(String(36), unique=True)  # client-supplied UUID
    # An answer always writes its card's state, so a log always has one (see __table_args__).
    user_id: Mapped[int] = mapped_column()
    card_id: Mapped[int] = mapped_column()
    # Copied from the card, like the state's; right because cards never change decks.
    deck_id: Mapped[int] = mapped_column()
    rating: Mapped[int] = mapped_column(SmallInteger)
    reviewed_at: Mapped[datetime] = mapped_column()
    duration_ms: Mapped[int | None] = mapped_column(Integer)
    # Before: NULL state means the card was new.
    state_before: Mapped[int | None] = mapped_column(SmallInteger)
    step_before: Mapped[int | None] = mapped_column(SmallInteger)
    stability_before: Mapped[float | None] = mapped_column(Float)
    difficulty_before: Mapped[float | None] = mapped_column(Float)
    due_before: Mapped[datetime | None] = mapped_column()
    last_review_before: Mapped[datetime | None] = mapped_column()
    reps_before: Mapped[int] = mapped_column(Integer, default=0)
    lapses_before: Mapped[int] = mapped_column(Integer, default=0)
    introduced_at_before: Mapped[datetime | None] = mapped_column()
    # After.
    state: Mapped[int] = mapped_column(SmallInteger)
    step: Mapped[int | None] = mapped_column(SmallInteger)
    stability: Mapped[float] = mapped_column(Float)
    difficulty: Mapped[float] = mapped_column(Float)
    due: Mapped[datetime] = mapped_column()
    reps: Mapped[int] = mapped_column(Integer)
    lapses: Mapped[int] = mapped_column(Integer)

    __table_args__ = (
        # One reference, to the state the answer wrote in the same transaction, instead of
        # three to users, cards and decks: its check finds that row already locked by us,
        # where three checks lock three more rows. Deleting a user, deck or card still reaches
        # the logs, through the state.
        ForeignKeyConstraint(
            ["user_id", "card_id"],
            ["review_states.user_id", "review_states.card_id"],
            ondelete="CASCADE",
        ),
        CheckConstraint("rating BETWEEN 1 AND 4", name="rating"),
        Index("ix_review_logs_user_reviewed", "user_id", "reviewed_at"),
        Index("ix_review_logs_card_user", "card_id", "user_id", "reviewed_at"),
        # Anki sync: a person's newest answer, and the answers they gave after one (a
        # download patches the cards answered since the file it keeps) without reading all.
        Index("ix_review_logs_user_id", "user_id", "id"),
        # The queue's count of a deck's review answers today (against the daily review
        # limit), read from this index alone: a range over those answers only, never over
        # the day's learning and new answers nor a visit to each log row. Partial, so that
        # an answer to a learning or new card writes nothing more.
        Index(
            "ix_review_logs_review_answers",
            "user_id",
            "deck_id",
            "reviewed_at",
            # Redundant but needed: without it SQLite reads each row to test the condition.
            "state_before",
            sqlite_where=text("state_before = 2"),
            postgresql_where=text("state_before = 2"),
        ),
    )


# --- Teams: groups that study together (flashcards/teams/) ---


class CustomStudySession(Base):
    """A person's custom study session (one at a time, as Anki's one custom study deck): what
    it shows is worked out from these fields and the review states at each request."""

    __tablename__ = "custom_study_sessions"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    # "ahead", "forgotten", "preview", "tag" or "flag" (extra new or review cards make no
    # session: they raise a subscription's limits for the day, `Subscription.extra_new`).
    mode: Mapped[str] = mapped_column(String(20))
    deck_id: Mapped[int | None] = mapped_column(
        ForeignKey("decks.id", ondelete="CASCADE"), index=True
    )
    days: Mapped[int | None] = mapped_column(Integer)
    amount: Mapped[int | None] = mapped_column(Integer)
    tag: Mapped[str | None] = mapped_column(String(100))
    # The flag (1 to 7) a "flag" session studies the cards of.
    flag: Mapped[int | None] = mapped_column(SmallInteger, default=None)
    # Cards answered since are done for the session; the preview counts its cards shown.
    started_at: Mapped[datetime] = mapped_column()
    previewed: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class StudyOptions(Base):
    """Anki's deck options of the same names, for one person, with Anki's defaults (also
    what no row means): answering a card buries its siblings of each kind only when asked;
    a leech is tagged, and suspended only when asked."""

    __tablename__ = "study_options"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    bury_new: Mapped[bool] = mapped_column(Boolean, default=False)
    bury_reviews: Mapped[bool] = mapped_column(Boolean, default=False)
    bury_interday: Mapped[bool] = mapped_column(Boolean, default=False)
    leech_threshold: Mapped[int] = mapped_column(Integer, default=8)
    leech_suspend: Mapped[bool] = mapped_column(Boolean, default=False)

    __table_args__ = (CheckConstraint("leech_threshold >= 1", name="leech_threshold"),)


# --- A person's marks on cards, and their undo (flashcards/srs/card_actions.py) ---


class CardMark(Base):
    """What a person set on a card beside its FSRS state: suspended, buried until a study day,
    a flag (Anki's seven colours), leech, their own tags. No row: nothing set. Apart from
    ReviewState because a card still new to them (no state) can be marked too, and because
    an answer, the hot write, seldom touches any of it."""

    __tablename__ = "card_marks"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    card_id: Mapped[int] = mapped_column(
        ForeignKey("cards.id", ondelete="CASCADE"), primary_key=True
    )
    # Copied from the card, as the state's: the queue counts a deck's hidden cards by it.
    deck_id: Mapped[int] = mapped_column(ForeignKey("decks.id", ondelete="CASCADE"))
    suspended: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))
    # The study day (in the person's clock) on which a buried card shows again.
    buried_until: Mapped[date | None] = mapped_column(default=None)
    flag: Mapped[int] = mapped_column(SmallInteger, default=0, server_default=text("0"))
    leech: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))
    tags: Mapped[list[str]] = mapped_column(JSON, default=list, server_default=text("'[]'"))

    __table_args__ = (
        CheckConstraint("flag BETWEEN 0 AND 7", name="flag"),
        Index("ix_card_marks_user_deck", "user_id", "deck_id"),
    )


class CardAction(Base):
    """One action on a card (suspend, bury, flag, set due, forget...), with what it changed:
    enough to undo it, as a review log row is for an answer. Rows with a `review_id` came
    with that answer (siblings buried, a leech marked) and are undone with it."""

    __tablename__ = "card_actions"

    id: Mapped[int] = mapped_column(primary_key=True)
    # Named like an answer's review id, so that one undo names either. One action on a
    # selection of cards is one row per card under one id, undone together.
    action_id: Mapped[str] = mapped_column(String(36), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    card_id: Mapped[int] = mapped_column(ForeignKey("cards.id", ondelete="CASCADE"))
    action: Mapped[str] = mapped_column(String(16))
    acted_at: Mapped[datetime] = mapped_column()
    review_id: Mapped[str | None] = mapped_column(String(36), default=None, index=True)
    # The mark row and the state row before the action; None: there was none.
    marks_before: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    state_before: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    # A move's: the card's deck, key, position and texts before it (`decks.card_moves`).
    card_before: Mapped[dict[str, Any] | None] = mapped_column(JSON, deferred=True)

    __table_args__ = (Index("ix_card_actions_user_acted", "user_id", "acted_at"),)
