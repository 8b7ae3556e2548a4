"""The schema, as typed SQLAlchemy 2 models. Alembic migrations are generated from these."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    LargeBinary,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
    text,
    true,
)
from sqlalchemy.orm import Mapped, mapped_column

from .schema import Base, utcnow

EVERY_DAY_NORMAL = "[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]"


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    # Stored lower-cased, so a plain unique constraint makes it unique case-insensitively.
    email: Mapped[str] = mapped_column(String(320), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    display_name: Mapped[str] = mapped_column(String(100), default="")
    locale: Mapped[str] = mapped_column(String(16), default="en")
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")
    day_start_hour: Mapped[int] = mapped_column(SmallInteger, default=4)
    # "system" follows the browser's prefers-color-scheme; "light" and "dark" override it.
    # Left to the server default, and not read back after an insert (eager_defaults below),
    # so that an INSERT names no column newer than the rest (tests build users on old schemas).
    theme: Mapped[str] = mapped_column(String(8), server_default="system")
    is_admin: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    __table_args__ = (
        CheckConstraint("day_start_hour BETWEEN 0 AND 23", name="day_start_hour"),
        CheckConstraint("theme IN ('system', 'light', 'dark')", name="theme"),
    )
    __mapper_args__ = {"eager_defaults": False}  # noqa: RUF012 (typed Any by SQLAlchemy)


class ApiToken(Base):
    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    # SHA-256 of the token: a leaked database does not leak usable tokens.
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(100), default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class WebSession(Base):
    """A signed-in browser session. The cookie carries a random id and only its SHA-256 is
    stored: deleting the row (signing out) ends the session, a copy of the cookie included."""

    __tablename__ = "web_sessions"

    id_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # Renewed at most daily while the session is used; a session unused for its lifetime ends.
    seen_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)


class RateLimitCount(Base):
    """Failures of one rate-limit key (a hash: sign-ins per email and address, sign-ups per
    address) in its window. In the database, so that every worker and instance counts
    together without Redis; expired rows are pruned as new failures come."""

    __tablename__ = "rate_limits"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    failures: Mapped[int] = mapped_column(Integer)
    window_ends: Mapped[datetime] = mapped_column(index=True)


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


class Deck(Base):
    __tablename__ = "decks"

    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(100), unique=True)
    default_locale: Mapped[str] = mapped_column(String(16))
    # No owner: a shipped deck, visible to everyone. Teams own decks through `owner_team_id`.
    owner_user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    owner_team_id: Mapped[int | None] = mapped_column(
        ForeignKey("teams.id", ondelete="CASCADE"), index=True, default=None
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class DeckText(Base):
    __tablename__ = "deck_texts"

    deck_id: Mapped[int] = mapped_column(
        ForeignKey("decks.id", ondelete="CASCADE"), primary_key=True
    )
    locale: Mapped[str] = mapped_column(String(16), primary_key=True)
    title: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")


class Card(Base):
    __tablename__ = "cards"

    id: Mapped[int] = mapped_column(primary_key=True)
    deck_id: Mapped[int] = mapped_column(ForeignKey("decks.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(100))
    position: Mapped[int] = mapped_column(Integer)
    # Labels kept from an imported Anki note (Anki's tags), exported again as its tags.
    tags: Mapped[list[str]] = mapped_column(JSON, default=list, server_default=text("'[]'"))
    # A card removed from its deck file is retired: never introduced again, history kept.
    retired_at: Mapped[datetime | None] = mapped_column(default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    # Cards of one deck with the same note key came from one note (the deletions of an Anki
    # Cloze note): siblings, which an answer to one of them may bury. None: a card alone.
    note_key: Mapped[str | None] = mapped_column(String(100), default=None)

    __table_args__ = (
        UniqueConstraint("deck_id", "key"),
        # Live cards first: the queue counts a deck's live cards and finds its next new one
        # by a range of this index alone.
        Index("ix_cards_deck_retired_position", "deck_id", "retired_at", "position"),
        Index("ix_cards_deck_note", "deck_id", "note_key"),
    )


class CardText(Base):
    """One language's version of a card; review state belongs to the card, not to this."""

    __tablename__ = "card_texts"

    card_id: Mapped[int] = mapped_column(
        ForeignKey("cards.id", ondelete="CASCADE"), primary_key=True
    )
    locale: Mapped[str] = mapped_column(String(16), primary_key=True)
    question: Mapped[str] = mapped_column(Text)
    answer: Mapped[str] = mapped_column(Text)
    explanation: Mapped[str] = mapped_column(Text, default="")
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    # The guid of the Anki note this text was imported from: exported again under it, so that
    # Anki recognises its own note instead of adding a second copy.
    anki_guid: Mapped[str | None] = mapped_column(String(64))


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
    state: Mapped[int] = mapped_column(SmallInteger)  # fsrs.State: 1 learning, 2 review, 3 relearn
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

    __table_args__ = (
        Index("ix_review_states_user_due", "user_id", "due"),
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


class Team(Base):
    __tablename__ = "teams"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class TeamMember(Base):
    """A user's membership; every team has exactly one row with role 'owner'."""

    __tablename__ = "team_members"

    team_id: Mapped[int] = mapped_column(
        ForeignKey("teams.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    role: Mapped[str] = mapped_column(String(16))
    joined_at: Mapped[datetime] = mapped_column(default=utcnow)

    __table_args__ = (
        CheckConstraint("role IN ('owner', 'manager', 'member')", name="role"),
        # At most one owner per team, enforced by the database as well as by teams/.
        Index(
            "ix_team_members_one_owner",
            "team_id",
            unique=True,
            sqlite_where=text("role = 'owner'"),
            postgresql_where=text("role = 'owner'"),
        ),
    )


class TeamInvitation(Base):
    """A join link; only the SHA-256 of its token is stored."""

    __tablename__ = "team_invitations"

    id: Mapped[int] = mapped_column(primary_key=True)
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_by: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime] = mapped_column()
    max_uses: Mapped[int | None] = mapped_column(Integer, default=None)
    uses: Mapped[int] = mapped_column(Integer, default=0)
    revoked_at: Mapped[datetime | None] = mapped_column(default=None)
    # The lead's own name for the link ("March cohort"), so that links can be told apart.
    label: Mapped[str] = mapped_column(String(100), default="", server_default="")


class TeamRemoval(Base):
    """Someone a lead removed from a team. No invitation link lets them back in (not the one
    they joined with, nor one shared with a whole group) until a lead allows it."""

    __tablename__ = "team_removals"

    team_id: Mapped[int] = mapped_column(
        ForeignKey("teams.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    removed_at: Mapped[datetime] = mapped_column(default=utcnow)


class TeamAssignment(Base):
    """A deck a team studies, with an optional due date (a calendar day in each member's zone)."""

    __tablename__ = "team_assignments"

    team_id: Mapped[int] = mapped_column(
        ForeignKey("teams.id", ondelete="CASCADE"), primary_key=True
    )
    deck_id: Mapped[int] = mapped_column(
        ForeignKey("decks.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    due_date: Mapped[date | None] = mapped_column(default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


# --- Personal FSRS parameters (flashcards/optimizer/) ---


class FsrsParameterSet(Base):
    """One fit of a person's FSRS parameters, adopted or not, with the scores that decided it.

    Every score is measured on the same held-out answers: this set's, the set in force when
    it was fitted (`previous_*`) and py-fsrs's defaults'. The parameters in force stay in
    `SchedulerSettings.parameters`, which the scheduler reads; the latest adopted set not
    reverted is the one they came from.
    """

    __tablename__ = "fsrs_parameter_sets"

    id: Mapped[int] = mapped_column(primary_key=True)
    # Whose answers it was fitted to: a person's, or (NULL here) a team deck's members' on it.
    user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    parameters: Mapped[list[float]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column()
    answers: Mapped[int] = mapped_column(Integer)  # training items: answers on a later day
    cards: Mapped[int] = mapped_column(Integer)
    log_loss: Mapped[float] = mapped_column(Float)
    rmse_bins: Mapped[float] = mapped_column(Float)
    previous_log_loss: Mapped[float] = mapped_column(Float)
    previous_rmse_bins: Mapped[float] = mapped_column(Float)
    default_log_loss: Mapped[float] = mapped_column(Float)
    default_rmse_bins: Mapped[float] = mapped_column(Float)
    adopted: Mapped[bool] = mapped_column(Boolean)
    reverted_at: Mapped[datetime | None] = mapped_column(default=None)
    # The newest review-log row there was when the history was read: rows after it are the
    # answers new since this fit, whatever their `reviewed_at` (imported answers are dated in
    # the past). None: recorded without it (before 0016, or by a path that does not set it).
    history_end_log_id: Mapped[int | None] = mapped_column(Integer, default=None)
    # A team deck's set (optimizer.team): fitted to all its members' answers on it.
    deck_id: Mapped[int | None] = mapped_column(
        ForeignKey("decks.id", ondelete="CASCADE"), index=True, default=None
    )

    __table_args__ = (CheckConstraint("(user_id IS NULL) <> (deck_id IS NULL)", name="one_owner"),)


class DeckFsrsParameters(Base):
    """A team deck's FSRS parameters in force, fitted to its members' answers on it (see
    optimizer.team): its cards are scheduled with them for a member without personal ones.
    No row: no team fit adopted (and never one for other decks)."""

    __tablename__ = "deck_fsrs_parameters"

    deck_id: Mapped[int] = mapped_column(
        ForeignKey("decks.id", ondelete="CASCADE"), primary_key=True
    )
    parameters: Mapped[list[float]] = mapped_column(JSON)


# --- Password reset links (flashcards/people/resets.py) ---


class PasswordReset(Base):
    """A one-time password reset link. Only the SHA-256 of its token is stored; the row is
    deleted when the link is used, and a link made before the password last changed is dead
    (`password_stamp`, a hash of the password hash it was made under, no longer matches)."""

    __tablename__ = "password_resets"

    id_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    password_stamp: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column()
    expires_at: Mapped[datetime] = mapped_column(index=True)


# --- Anki sync (flashcards/anki_sync/) ---


class AnkiDevice(Base):
    """An Anki client signed in to sync (`hostKey`): only the SHA-256 of its host key is
    stored. Deleting the row (the tokens page, or a new password with "sign out everywhere")
    ends the device's syncing."""

    __tablename__ = "anki_devices"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    # What the client says it is ("anki,26.09.3 (abcdef),lin"), to tell devices apart.
    client_version: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_sync_at: Mapped[datetime | None] = mapped_column(default=None)


class AnkiCollection(Base):
    """What Anki's sync calls a person's collection's stamps. `scm` (milliseconds) is the
    collection's schema time: a device holding another one must make a full sync first."""

    __tablename__ = "anki_collections"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    scm: Mapped[int] = mapped_column(BigInteger)
    usn: Mapped[int] = mapped_column(Integer, default=0)
    # The `mod` devices were last given, and a fingerprint of what the collection held then:
    # while the fingerprint stays, a device with that `mod` has nothing to fetch.
    mod: Mapped[int] = mapped_column(BigInteger, default=0)
    fingerprint: Mapped[str] = mapped_column(String(64), default="")
    # For each usn a device may hold (its `minUsn`), the newest review-log row it has: the
    # answers written after it are the ones to send.
    log_marks: Mapped[dict[str, int]] = mapped_column(JSON, default=dict)


class AnkiSyncSession(Base):
    """A device's sync under way, between its requests: in the database, so that its
    requests may reach different instances. One per device; a new sync replaces it, and a
    request naming another session id (`session_key`, the client's `s`) is refused."""

    __tablename__ = "anki_sync_sessions"

    device_id: Mapped[int] = mapped_column(
        ForeignKey("anki_devices.id", ondelete="CASCADE"), primary_key=True
    )
    session_key: Mapped[str] = mapped_column(String(200))
    started_at: Mapped[datetime] = mapped_column()
    updated_at: Mapped[datetime] = mapped_column()
    # What the protocol's next step needs (its cursor, the client's minimum usn...).
    state: Mapped[dict[str, object]] = mapped_column(JSON, default=dict)


class AnkiSyncObject(Base):
    """What devices last got of one object of a person's collection (a card, note, deck,
    options group or note type, by its Anki id): a digest of its content and the usn at
    which it changed. A sync compares the collection built from our data with these to find
    what changed since a device's `minUsn`; a NULL digest is a deletion (Anki's grave)."""

    __tablename__ = "anki_sync_objects"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    kind: Mapped[int] = mapped_column(SmallInteger, primary_key=True)
    oid: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    usn: Mapped[int] = mapped_column(Integer)
    digest: Mapped[str | None] = mapped_column(String(40))


class AnkiCollectionFile(Base):
    """The last collection file a device downloaded, zstd-compressed, with what it was built
    from: while the person's collection and usn stay the same, the next device gets these
    bytes instead of a new build (as Anki's own server sends its stored file)."""

    __tablename__ = "anki_collection_files"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    fingerprint: Mapped[str] = mapped_column(String(64))
    usn: Mapped[int] = mapped_column(Integer)
    size: Mapped[int] = mapped_column(Integer)  # uncompressed bytes
    data: Mapped[bytes] = mapped_column(LargeBinary)


class CustomStudySession(Base):
    """A person's custom study session (one at a time, as Anki's one custom study deck): what
    it shows is worked out from these fields and the review states at each request."""

    __tablename__ = "custom_study_sessions"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    # "ahead", "forgotten", "extra_new", "extra_review", "preview", "tag" or "flag".
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

    __table_args__ = (Index("ix_card_actions_user_acted", "user_id", "acted_at"),)
