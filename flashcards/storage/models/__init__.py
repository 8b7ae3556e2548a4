"""The schema, as typed SQLAlchemy 2 models, one module per area. Alembic migrations are generated
from these; importing this package registers every table on `Base.metadata`."""

from .anki_sync import (
    AnkiCollection,
    AnkiCollectionFile,
    AnkiDevice,
    AnkiKeptObject,
    AnkiSyncObject,
    AnkiSyncSession,
)
from .decks import Card, CardText, Deck, DeckText
from .fsrs import DeckFsrsParameters, FsrsParameterSet
from .media import MediaBlob, MediaFile
from .people import ApiToken, PasswordReset, RateLimitCount, User, WebSession
from .study import (
    EVERY_DAY_NORMAL,
    CardAction,
    CardMark,
    CustomStudySession,
    ReviewLog,
    ReviewState,
    SchedulerSettings,
    StudyOptions,
    Subscription,
)
from .teams import Team, TeamAssignment, TeamInvitation, TeamMember, TeamRemoval

__all__ = [
    "EVERY_DAY_NORMAL",
    "AnkiCollection",
    "AnkiCollectionFile",
    "AnkiDevice",
    "AnkiKeptObject",
    "AnkiSyncObject",
    "AnkiSyncSession",
    "ApiToken",
    "Card",
    "CardAction",
    "CardMark",
    "CardText",
    "CustomStudySession",
    "Deck",
    "DeckFsrsParameters",
    "DeckText",
    "FsrsParameterSet",
    "MediaBlob",
    "MediaFile",
    "PasswordReset",
    "RateLimitCount",
    "ReviewLog",
    "ReviewState",
    "SchedulerSettings",
    "StudyOptions",
    "Subscription",
    "Team",
    "TeamAssignment",
    "TeamInvitation",
    "TeamMember",
    "TeamRemoval",
    "User",
    "WebSession",
]
