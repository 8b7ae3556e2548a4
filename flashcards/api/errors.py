"""Every API error as application/problem+json (RFC 9457); body parsing is in `bodies`.

`PROBLEM_TYPES` is the one table from an error class to its status, problem type and title;
the domain's errors know nothing of HTTP. Werkzeug's HTTP errors (routing 404 and 405, 413
from MAX_CONTENT_LENGTH) become problems too when the URL is under /api/. The request's session
is closed without commit by teardown, so nothing partial is written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from flask import Response, current_app, request
from werkzeug.exceptions import HTTPException, MethodNotAllowed

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
from ..storage.engine import database_unavailable
from ..teams.invitations import RemovedFromTeam
from ..teams.team_decks import UnknownCardKey
from . import bp

PROBLEM_MIMETYPE = "application/problem+json"
API_PREFIX = "/api/"
# A problem's `type` is this plus its slug: a URI reference the same on every instance
# (RFC 9457 3.1.1), which a client compares rather than dereferences.
PROBLEM_TYPE_PREFIX = "/api/v1/problems/"
# What a client waits before retrying when the database is out of reach (a restart, a
# failover): long enough not to pile on, short enough for a person at the keyboard.
UNAVAILABLE_RETRY_AFTER = 5


@dataclass(frozen=True)
class ProblemType:
    status: int
    slug: str
    title: str

    @property
    def uri(self) -> str:
        return PROBLEM_TYPE_PREFIX + self.slug


P = ProblemType
PROBLEM_TYPES: dict[type[FlashcardsError], ProblemType] = {
    # The request as sent
    MalformedRequest: P(400, "malformed-request", "Malformed request"),
    UnsupportedContentType: P(415, "unsupported-content-type", "Unsupported media type"),
    BodyTooLarge: P(413, "body-too-large", "Payload too large"),
    # Validation
    InvalidInput: P(422, "invalid-input", "Invalid input"),
    DeckFileError: P(422, "invalid-deck-file", "Invalid deck file"),
    UnknownLocale: P(422, "unknown-locale", "Unknown language code"),
    InvalidLabel: P(422, "invalid-label", "Invalid label"),
    DueDateInPast: P(422, "due-date-in-past", "Due date in the past"),
    TextTooLong: P(422, "text-too-long", "Text too long"),
    TooManyDeletions: P(422, "too-many-deletions", "Too many Cloze deletions"),
    NoClozeDeletion: P(422, "no-cloze-deletion", "No Cloze deletion"),
    LanguageNotInDeck: P(422, "language-not-in-deck", "Language not in the deck"),
    QuestionCountMismatch: P(422, "question-count-mismatch", "Questions do not match the cards"),
    UnknownCardKey: P(422, "unknown-card-key", "Unknown card key"),
    AnkiPackageError: P(422, "invalid-package", "Unreadable Anki package"),
    SamePassword: P(422, "same-password", "New password equals the current one"),
    BackupError: P(422, "invalid-backup", "Unusable backup"),
    NotShownMediaType: P(422, "media-type-not-shown", "Media type not shown"),
    InvalidMediaName: P(422, "invalid-media-name", "Invalid media file name"),
    MediaQuotaExceeded: P(413, "media-quota-exceeded", "Media quota exceeded"),
    # Lookups
    NotFound: P(404, "not-found", "Not found"),
    CardNotFound: P(404, "card-not-found", "No such card"),
    NotClozeCard: P(404, "not-cloze-card", "Not a Cloze text's card"),
    UnknownReviewId: P(404, "unknown-review-id", "No answer with this review_id"),
    InvitationNotUsable: P(404, "invitation-not-usable", "Invitation unknown or no longer valid"),
    NoCustomStudy: P(404, "no-custom-study", "No custom study session"),
    # Identity
    NotAuthenticated: P(401, "not-authenticated", "Unauthorized"),
    MissingToken: P(401, "missing-token", "No API token"),
    InvalidToken: P(401, "invalid-token", "Invalid API token"),
    WrongCredentials: P(401, "wrong-credentials", "Wrong email or password"),
    # The current password proves who a signed-in caller is: well formed, and refused.
    WrongPassword: P(403, "wrong-password", "Wrong current password"),
    # Permission
    NotPermitted: P(403, "not-permitted", "Forbidden"),
    RoleRequired: P(403, "role-required", "Role required"),
    OwnerNotRemovable: P(403, "owner-not-removable", "The owner cannot be removed"),
    ManagerRemovesMembersOnly: P(
        403, "manager-removes-members-only", "Managers remove plain members only"
    ),
    NotDeckOwner: P(403, "not-deck-owner", "Not the deck's owner"),
    SignupClosed: P(403, "signup-closed", "Sign-up is closed"),
    RemovedFromTeam: P(403, "removed-from-team", "Removed from the team"),
    # State that does not allow the change
    ReviewIdReused: P(409, "review-id-reused", "review_id already used"),
    NotSubscribed: P(409, "not-subscribed", "Not subscribed to the deck"),
    CardRetired: P(409, "card-retired", "Card retired"),
    EditingRetiredCard: P(409, "editing-retired-card", "Retired cards are not edited"),
    CardOfAnkiNote: P(409, "card-of-anki-note", "Edited in Anki"),
    AnkiFieldFormatted: P(409, "anki-field-formatted", "Formatting kept in Anki"),
    NotLatestAnswer: P(409, "not-latest-answer", "Not the latest answer"),
    NothingToUndo: P(409, "nothing-to-undo", "Nothing to undo"),
    NoCardsMatch: P(409, "no-cards-match", "No cards match"),
    CardNotStudied: P(409, "card-not-studied", "The card is still new"),
    OwnerRoleByTransferOnly: P(
        409, "owner-role-by-transfer-only", "Ownership is transferred, not assigned"
    ),
    AlreadyOwner: P(409, "already-owner", "Already the owner"),
    RemovingSelf: P(409, "removing-self", "Leave instead of removing yourself"),
    OwnerCannotLeave: P(409, "owner-cannot-leave", "The owner cannot leave"),
    LastCardOfDeck: P(409, "last-card-of-deck", "A deck keeps one card"),
    DeckNameTaken: P(409, "deck-name-taken", "Deck name taken"),
    DeckTitleTaken: P(409, "deck-title-taken", "You already have a deck of that title"),
    EmailTaken: P(409, "email-taken", "Email cannot be used"),
    # Load
    RateLimited: P(429, "rate-limited", "Too many requests"),
    TooMuchContention: P(503, "too-much-contention", "Service unavailable"),
    # Personal FSRS parameters
    NotEnoughHistory: P(409, "not-enough-history", "Not enough history to fit parameters"),
    NothingToRevert: P(409, "nothing-to-revert", "No parameters to revert"),
    OptimizerUnavailable: P(503, "optimizer-unavailable", "Optimizer not installed"),
    # Password reset links and mail
    ResetLinkNotUsable: P(404, "reset-link-not-usable", "Reset link unknown or no longer valid"),
    AdminResetByOwner: P(403, "admin-reset-by-owner", "Not for an administrator's account"),
    MailNotSent: P(502, "mail-not-sent", "Mail not sent"),
    # Team deck uploads
    TooManyCards: P(422, "too-many-cards", "Too many cards"),
    UploadTooLarge: P(413, "upload-too-large", "Upload too large"),
}
del P


def problem_type(exc: FlashcardsError) -> ProblemType:
    """The table's entry for the error's class, or for its nearest mapped base."""
    for cls in type(exc).__mro__:
        found = PROBLEM_TYPES.get(cls)
        if found is not None:
            return found
    raise LookupError(f"{type(exc).__name__} is missing from PROBLEM_TYPES")


def problem(
    status: int,
    title: str,
    detail: str,
    *,
    type_uri: str = "about:blank",
    field: str | None = None,
    headers: dict[str, str] | None = None,
    members: dict[str, Any] | None = None,
) -> Response:
    body: dict[str, Any] = {"type": type_uri, "title": title, "status": status}
    body["detail"] = detail
    if field is not None:
        body["field"] = field
    body.update(members or {})
    response = Response(
        json.dumps(body, ensure_ascii=False), status=status, mimetype=PROBLEM_MIMETYPE
    )
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


@bp.errorhandler(FlashcardsError)
def _flashcards_error(exc: FlashcardsError) -> Response:
    kind = problem_type(exc)
    headers: dict[str, str] = {}
    if isinstance(exc, NotAuthenticated):
        headers["WWW-Authenticate"] = 'Bearer realm="flashcards"'
    if isinstance(exc, (RateLimited, TooMuchContention)):
        headers["Retry-After"] = str(int(exc.retry_after))
    return problem(
        kind.status,
        kind.title,
        exc.detail,
        type_uri=kind.uri,
        field=exc.field,
        headers=headers,
        members=_members(exc),
    )


def _members(exc: FlashcardsError) -> dict[str, Any]:
    """Where and why an upload was refused, as data a client acts on without the detail."""
    members: dict[str, Any] = {}
    if isinstance(exc, DeckFileError):
        members["reason"] = exc.reason
    elif isinstance(exc, UnknownLocale):
        members["reason"] = "unknown-locale"
    elif isinstance(exc, TooManyCards):
        members["reason"] = "too-many-cards"
    line = getattr(exc, "line", None) if isinstance(exc, (DeckFileError, UnknownLocale)) else None
    if line is not None:
        members["line"] = line
    return members


def http_problem(exc: HTTPException) -> Response:
    status = exc.code or 500
    headers = {}
    if isinstance(exc, MethodNotAllowed) and exc.valid_methods:
        headers["Allow"] = ", ".join(sorted(exc.valid_methods))
    detail = exc.description or exc.name
    if exc.code == 413:
        limit = current_app.config.get("MAX_CONTENT_LENGTH")
        detail = f"the request body is larger than the limit of {limit} bytes"
    return problem(status, exc.name, detail, headers=headers)


@bp.errorhandler(HTTPException)
def _api_http_error(exc: HTTPException) -> Response:
    return http_problem(exc)


@bp.errorhandler(Exception)
def _unexpected(exc: Exception) -> Response:
    if isinstance(exc, HTTPException):
        return http_problem(exc)
    if database_unavailable(exc):
        current_app.logger.error(
            "database unavailable on %s %s", request.method, request.path, exc_info=exc
        )
        return problem(
            503,
            "Service unavailable",
            "the database cannot be reached right now; retry after Retry-After seconds",
            headers={"Retry-After": str(UNAVAILABLE_RETRY_AFTER)},
        )
    current_app.logger.exception("unhandled error on %s %s", request.method, request.path)
    return problem(500, "Internal server error", "an unexpected error occurred; it has been logged")
