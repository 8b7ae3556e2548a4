"""Bodies of the teams API (`teams.py`, `team_decks.py`, `team_progress.py`)."""

from __future__ import annotations

from datetime import date
from typing import Annotated, ClassVar, Literal

from pydantic import BeforeValidator, Field

from ..decks.card_editing import MAX_TAG, MAX_TAGS
from ..decks.sync import SyncReport
from ..storage.schema import MAX_ID
from ..teams import invitations, membership
from .models import WHOLE, Body, Reply, Timestamp

MAX_UPLOAD = 2_000_000  # characters of an uploaded quiz or CSV
MAX_CARD_TEXT = 20_000  # characters of a card's front, back or explanation
MAX_LOCALE = 16
Tag = Annotated[str, Field(min_length=1, max_length=MAX_TAG, pattern=r"^\S+$")]
TAGS_MESSAGE = f"tags must be a list of at most {MAX_TAGS} words without spaces"
MAX_INVITATION_HOURS = 90 * 24
_DUE_DATE = "due_date must be a date like 2026-04-30, or null"


def _calendar_date(value: object) -> date:
    # Only the form 2026-04-30: pydantic would also read a time, or a count of seconds.
    if isinstance(value, str) and len(value) == 10:
        return date.fromisoformat(value)  # a ValueError for 2026-02-30
    raise ValueError(_DUE_DATE)


# --- requests ---


class TeamName(Body):
    # Blank names are refused by the domain, with a message of its own.
    name: str = Field(
        max_length=membership.MAX_NAME, json_schema_extra={"minLength": 1, "pattern": "\\S"}
    )


class JoinRequest(Body):
    token: str = Field(max_length=200)


class RoleChange(Body):
    role: str = Field(max_length=16, json_schema_extra={"enum": ["manager", "member"]})


class Transfer(Body):
    user_id: Annotated[int, Field(ge=1, le=MAX_ID), WHOLE]


class InvitationRequest(Body):
    expires_in_hours: Annotated[int, Field(ge=1, le=MAX_INVITATION_HOURS), WHOLE] | None = None
    max_uses: Annotated[int, Field(ge=1, le=invitations.MAX_USES), WHOLE] | None = None
    label: str = Field("", max_length=invitations.MAX_LABEL, description="A name for the link.")


class AssignRequest(Body):
    due_date: Annotated[date, BeforeValidator(_calendar_date)] | None = None
    messages: ClassVar[dict[str, str]] = {
        "due_date": "due_date must be a date like 2026-04-30, or null"
    }


class Upload(Body):
    format: str = Field(max_length=10, json_schema_extra={"enum": ["quiz", "csv"]})
    content: str = Field(
        max_length=MAX_UPLOAD,
        description="A quiz text, or a CSV: front, back and optionally key, locale and "
        "explanation (a first row naming them sets their order). A front written with Anki's "
        "Cloze deletions ({{c1::Paris}}) makes a card for each deletion number, keyed "
        "<key>-c<number>, its back optional (Back Extra).",
    )
    locale: str = Field(max_length=MAX_LOCALE)
    title: str = Field("", max_length=200)


class TaggedBody(Body):
    """A body with a card's tags: one message for a refused tag list, whichever body."""

    messages: ClassVar[dict[str, str]] = {"tags": TAGS_MESSAGE}


class NewCard(TaggedBody):
    """A new card's text in its deck's default language, with its tags."""

    front: str = Field(max_length=MAX_CARD_TEXT)
    back: str = Field(
        "", max_length=MAX_CARD_TEXT, description="Needed, but for a Cloze front (Back Extra)."
    )
    explanation: str = Field("", max_length=MAX_CARD_TEXT)
    tags: list[Tag] = Field(default_factory=list, max_length=MAX_TAGS)


class CardEdit(TaggedBody):
    locale: str = Field(max_length=MAX_LOCALE)
    front: str = Field(max_length=MAX_CARD_TEXT)
    back: str = Field(max_length=MAX_CARD_TEXT)
    explanation: str = Field("", max_length=MAX_CARD_TEXT)
    tags: list[Tag] | None = Field(
        None,
        max_length=MAX_TAGS,
        description="The card's tags, kept if left out; given with a translation's text, "
        "they are still the card's.",
    )


# --- responses ---

Role = Literal["owner", "manager", "member"]


class Team(Reply):
    id: int
    name: str
    role: Role
    created_at: Timestamp


class TeamList(Reply):
    teams: list[Team]


class TeamMember(Reply):
    user_id: int
    email: str
    display_name: str
    mixed_script: bool = Field(
        description="The name or email has a word mixing scripts (a Latin name with a "
        "Cyrillic letter) or an invisible character: it may imitate another member's."
    )
    role: Role
    joined_at: Timestamp


class TeamMemberList(Reply):
    members: list[TeamMember]


class TeamRemoval(Reply):
    user_id: int
    email: str
    display_name: str
    removed_at: Timestamp


class TeamRemovalList(Reply):
    removals: list[TeamRemoval]


class MemberRole(Reply):
    user_id: int
    role: Role


class TeamInvitation(Reply):
    id: int
    label: str = Field(description="The lead's name for the link.")
    created_at: Timestamp
    expires_at: Timestamp
    max_uses: int | None
    uses: int
    state: Literal["active", "expired", "used_up", "revoked"]
    token: str | None = Field(None, description="Only when created; never stored.")


class TeamInvitationList(Reply):
    invitations: list[TeamInvitation]


class TeamAssignment(Reply):
    deck: str
    title: str
    team_deck: bool
    due_date: date | None
    total: int
    introduced: int
    new_per_day: int | None
    status: Literal["done", "no_due_date", "on_track", "behind"]


class TeamAssignmentList(Reply):
    assignments: list[TeamAssignment]


class Assigned(Reply):
    deck: str
    due_date: date | None


class TeamDeck(Reply):
    slug: str
    title: str
    default_locale: str
    locales: list[str]
    card_count: int


class TeamDeckList(Reply):
    decks: list[TeamDeck]


class SourceCard(Reply):
    key: str
    front: str
    back: str
    explanation: str
    tags: list[str] = Field(description="The card's tags: the same in every language.")


class SourceLocale(Reply):
    title: str
    description: str
    cards: list[SourceCard]


class TeamDeckCards(Reply):
    slug: str
    default_locale: str
    locales: dict[str, SourceLocale]


class AddedKeys(Reply):
    keys: list[str] = Field(
        description="Every card added: one, or one for each of a Cloze text's deletion numbers."
    )


class TeamDeckSync(Reply):
    """What an upload or an edit changed, by card key."""

    deck: str
    created: bool
    added: list[str]
    updated: list[str]
    retired: list[str]
    restored: list[str]

    @classmethod
    def of(cls, report: SyncReport) -> TeamDeckSync:
        return cls(
            deck=report.slug,
            created=report.created,
            added=report.added,
            updated=report.updated,
            retired=report.retired,
            restored=report.restored,
        )


class AssignmentProgress(Reply):
    deck: str
    due_date: date | None
    introduced: int
    total: int
    status: Literal["done", "no_due_date", "on_track", "behind"]


class TeamMemberProgress(Reply):
    user_id: int
    email: str
    display_name: str
    role: Role
    introduced: int
    total: int
    in_review: int
    predicted_recall: float | None
    overdue: int
    answers_7d: int
    last_activity: Timestamp | None
    assignments: list[AssignmentProgress]
    leeches: int = Field(description="Cards of the assigned decks that are leeches to them.")


class TeamDashboard(Reply):
    members: list[TeamMemberProgress]


class TeamHardCard(Reply):
    card_id: int
    deck: str
    key: str
    question: str
    answers: int
    again_share: float
    mean_difficulty: float | None
    leeches: int = Field(description="Current members to whom it is a leech.")


class TeamHardCards(Reply):
    cards: list[TeamHardCard]
