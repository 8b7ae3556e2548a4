"""The web's one table from an error class to what a person is shown: a page or a message.

A view that expects an error catches that class and shows `message_for(exc)` where it fits
(a flash, a form's field); anything else reaches `web/errors.py`, which renders the error page
at the table's status. Form validation (`InvalidInput` and its kin) is worded by the form,
which knows its fields, so those entries are pages only.
"""

from __future__ import annotations

from dataclasses import dataclass

from flask import flash
from flask_babel import gettext as _

from ..anki.errors import AnkiPackageError
from ..decks.locales import UnknownLocale
from ..decks.media_refs import NotShownMediaType
from ..errors import (
    AlreadyOwner,
    AnkiFieldFormatted,
    BodyTooLarge,
    CardNotFound,
    CardNotStudied,
    CardOfAnkiNote,
    CardRetired,
    DeckFileError,
    DeckNameTaken,
    DeckTitleTaken,
    DueDateInPast,
    EditingRetiredCard,
    FlashcardsError,
    InvalidInput,
    InvalidLabel,
    InvitationNotUsable,
    LanguageNotInDeck,
    LastCardOfDeck,
    MalformedRequest,
    ManagerRemovesMembersOnly,
    MissingToken,
    NoCardsMatch,
    NoClozeDeletion,
    NotAuthenticated,
    NotClozeCard,
    NotDeckOwner,
    NotEnoughHistory,
    NotFound,
    NothingToRevert,
    NothingToUndo,
    NotLatestAnswer,
    NotPermitted,
    NotSubscribed,
    OptimizerUnavailable,
    OwnerCannotLeave,
    OwnerNotRemovable,
    OwnerRoleByTransferOnly,
    QuestionCountMismatch,
    RemovingSelf,
    ReviewIdReused,
    RoleRequired,
    SignupClosed,
    TextTooLong,
    TooManyCards,
    TooManyDeletions,
    TooMuchContention,
    UnknownReviewId,
    UnsupportedContentType,
    UploadTooLarge,
    WrongCredentials,
)
from ..mail import MailNotSent
from ..people.accounts import EmailTaken, InvalidToken, SamePassword, WrongPassword
from ..people.media_folder import InvalidMediaName, MediaQuotaExceeded
from ..people.ratelimit import RateLimited
from ..people.resets import AdminResetByOwner, ResetLinkNotUsable
from ..srs.custom_study import NoCustomStudy
from ..storage.backup import BackupError
from ..teams.invitations import RemovedFromTeam
from ..teams.team_decks import UnknownCardKey


@dataclass(frozen=True)
class WebAnswer:
    status: int  # of the error page, when no view catches the error
    message: str | None = None  # translated, for a view to flash or show beside a field


def error_answers() -> dict[type[FlashcardsError], WebAnswer]:
    """Built per call, as the messages are in the request's language."""
    card_changed = _("That card has changed since the page was shown.")
    return {
        # The request as sent
        MalformedRequest: WebAnswer(400),
        UnsupportedContentType: WebAnswer(415),
        BodyTooLarge: WebAnswer(413),
        # Validation: each form words its own fields
        InvalidInput: WebAnswer(422),
        DeckFileError: WebAnswer(422),
        UnknownLocale: WebAnswer(422),
        InvalidLabel: WebAnswer(422),
        DueDateInPast: WebAnswer(422),
        TextTooLong: WebAnswer(422),
        TooManyDeletions: WebAnswer(422),
        NoClozeDeletion: WebAnswer(422),
        LanguageNotInDeck: WebAnswer(422),
        QuestionCountMismatch: WebAnswer(422),
        UnknownCardKey: WebAnswer(422),
        AnkiPackageError: WebAnswer(422),
        BackupError: WebAnswer(422),
        NotShownMediaType: WebAnswer(422),
        InvalidMediaName: WebAnswer(422),
        MediaQuotaExceeded: WebAnswer(
            413, _("Your media files would take you past the space this service keeps for you.")
        ),
        SamePassword: WebAnswer(422, _("Choose a new password that is not the current one.")),
        # Lookups
        NotFound: WebAnswer(404),
        CardNotFound: WebAnswer(404, card_changed),
        NotClozeCard: WebAnswer(404),
        UnknownReviewId: WebAnswer(404, _("That answer has already been undone.")),
        InvitationNotUsable: WebAnswer(404),  # the join page says the link is no longer valid
        NoCustomStudy: WebAnswer(404, _("You have no custom study session.")),
        # Identity
        NotAuthenticated: WebAnswer(401),
        MissingToken: WebAnswer(401),
        InvalidToken: WebAnswer(401),
        WrongCredentials: WebAnswer(401, _("Wrong email or password.")),
        WrongPassword: WebAnswer(403, _("The current password is not correct.")),
        # Permission: the error page says a role is missing
        NotPermitted: WebAnswer(403),
        RoleRequired: WebAnswer(403),
        OwnerNotRemovable: WebAnswer(403),
        ManagerRemovesMembersOnly: WebAnswer(403),
        NotDeckOwner: WebAnswer(403),
        SignupClosed: WebAnswer(403),
        RemovedFromTeam: WebAnswer(403),  # the join page explains it, naming the team
        # State that does not allow the change
        ReviewIdReused: WebAnswer(409, card_changed),
        NotSubscribed: WebAnswer(409, card_changed),
        CardRetired: WebAnswer(409, card_changed),
        NotLatestAnswer: WebAnswer(409, _("Only your latest answer of today can be undone.")),
        NothingToUndo: WebAnswer(409, _("There is nothing to undo today.")),
        NoCardsMatch: WebAnswer(
            409, _("No cards match what you chose: there is nothing to study.")
        ),
        CardNotStudied: WebAnswer(409, _("This card is still new: it has no schedule to change.")),
        OwnerRoleByTransferOnly: WebAnswer(
            409, _("That role cannot be given here; ownership is handed over instead.")
        ),
        AlreadyOwner: WebAnswer(409, _("You already own this team.")),
        RemovingSelf: WebAnswer(409, _("To leave the team yourself, use “Leave this team”.")),
        OwnerCannotLeave: WebAnswer(
            409, _("As the owner, hand the team over to someone else before you leave.")
        ),
        EditingRetiredCard: WebAnswer(
            409, _("This card was retired from the deck, so it can no longer be edited.")
        ),
        AnkiFieldFormatted: WebAnswer(
            409,
            _(
                "This side of the card has formatting or pictures the web does not keep: "
                "edit it in Anki, and your next sync brings the change here."
            ),
        ),
        CardOfAnkiNote: WebAnswer(
            409,
            _(
                "This card comes from a note made in Anki, which the web cannot edit (a Cloze "
                "deletion, or a side made of several fields): edit the note in Anki, and your "
                "next sync brings the change here."
            ),
        ),
        LastCardOfDeck: WebAnswer(
            409, _("A deck keeps at least one card: delete the deck instead.")
        ),
        DeckNameTaken: WebAnswer(409),
        DeckTitleTaken: WebAnswer(
            409, _("You already have a deck of that name (or one of its subdecks would take it).")
        ),
        EmailTaken: WebAnswer(
            409, _("This email cannot be used for a new account. If it is yours, sign in.")
        ),
        # Load: the pages that limit attempts say how long to wait
        RateLimited: WebAnswer(429),
        TooMuchContention: WebAnswer(503),
        # Personal FSRS parameters: the settings page words these (`web/fsrs.py`)
        NotEnoughHistory: WebAnswer(409),
        NothingToRevert: WebAnswer(409),
        OptimizerUnavailable: WebAnswer(503),
        # Password reset links and mail: the reset and team pages word these
        ResetLinkNotUsable: WebAnswer(404),
        AdminResetByOwner: WebAnswer(
            403, _("An administrator's password cannot be reset from a team's page.")
        ),
        MailNotSent: WebAnswer(502),
        # Team deck uploads: the upload form words these (`web/team_deck_uploads.py`)
        TooManyCards: WebAnswer(422),
        UploadTooLarge: WebAnswer(413),
    }


def answer_for(error: FlashcardsError | type[FlashcardsError]) -> WebAnswer:
    """The table's entry for the error's class, or for its nearest mapped base."""
    table = error_answers()
    kind = error if isinstance(error, type) else type(error)
    for cls in kind.__mro__:
        found = table.get(cls)
        if found is not None:
            return found
    raise LookupError(f"{kind.__name__} is missing from the web's error table")


def message_for(error: FlashcardsError | type[FlashcardsError]) -> str:
    """The translated message for an error a view expects; the table has one for each."""
    message = answer_for(error).message
    if message is None:
        raise LookupError(f"the web's error table has no message for {error!r}")
    return message


def flash_error(error: FlashcardsError | type[FlashcardsError]) -> None:
    flash(message_for(error), "error")
